/**
 * JSON-RPC 2.0 message shapes as mcptap sees them on the wire.
 *
 * Invariant: ids are kept verbatim. `1` and `"1"` are different ids; nothing in mcptap may coerce
 * one into the other. Use {@link idKey} whenever an id has to become a map key.
 */
export type JsonRpcId = string | number;
export type IdType = 'string' | 'number';

export interface JsonRpcError {
  code: number;
  message: string;
  data?: unknown;
}

export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id: JsonRpcId;
  method: string;
  params?: Record<string, unknown> | unknown[];
}

export interface JsonRpcNotification {
  jsonrpc: '2.0';
  method: string;
  params?: Record<string, unknown> | unknown[];
}

export interface JsonRpcResponse {
  jsonrpc: '2.0';
  id: JsonRpcId | null;
  result?: unknown;
  error?: JsonRpcError;
}

export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse;

/** What a parsed JSON value turned out to be. `malformed` = valid JSON, not a JSON-RPC message. */
export type MessageKind = 'request' | 'notification' | 'response' | 'malformed';

export function idType(id: JsonRpcId): IdType {
  return typeof id === 'string' ? 'string' : 'number';
}

/** A map key that keeps `1` and `"1"` apart. */
export function idKey(id: JsonRpcId): string {
  return typeof id === 'string' ? `s:${id}` : `n:${id}`;
}

/** The id as text, for display and storage next to its {@link IdType}. */
export function idText(id: JsonRpcId): string {
  return typeof id === 'string' ? id : String(id);
}

/** Rebuild an id from its stored text and type. */
export function idFromText(text: string, type: IdType): JsonRpcId {
  return type === 'number' ? Number(text) : text;
}

function isId(v: unknown): v is JsonRpcId {
  return typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));
}

/** Classify a parsed JSON value. Pure; never throws. */
export function classifyMessage(value: unknown): MessageKind {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'malformed';
  const m = value as Record<string, unknown>;
  if (typeof m.method === 'string') {
    if (!('id' in m)) return 'notification';
    return isId(m.id) ? 'request' : 'malformed';
  }
  if ('result' in m || 'error' in m) {
    return m.id === null || isId(m.id) ? 'response' : 'malformed';
  }
  return 'malformed';
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
