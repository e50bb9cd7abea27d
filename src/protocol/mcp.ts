/**
 * MCP knowledge the pipeline needs, both eras: which name a request targets, which era and
 * protocol version a message reveals, progress tokens and cancellation. Pure functions of
 * messages; no IO.
 */
import { isRecord, type JsonRpcMessage, type JsonRpcId } from '../model/jsonrpc.js';
import type { Era } from '../model/exchange.js';

export const META_PROTOCOL_VERSION = 'io.modelcontextprotocol/protocolVersion';
export const META_CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
export const META_CLIENT_INFO = 'io.modelcontextprotocol/clientInfo';
export const META_SERVER_INFO = 'io.modelcontextprotocol/serverInfo';
export const META_SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';
export const MODERN_PROTOCOL_VERSION = '2026-07-28';
export const LEGACY_PROTOCOL_VERSION = '2025-11-25';
/** The legacy revisions mcptap knows, oldest first (their dates order them). */
export const LEGACY_PROTOCOL_VERSIONS: readonly string[] = ['2024-11-05', '2025-03-26', '2025-06-18', LEGACY_PROTOCOL_VERSION];

/**
 * The version a server that speaks `recorded` answers to an `initialize` asking `requested`: the
 * requested one when mcptap knows it and it is not newer than `recorded`, else `recorded` (the spec's
 * negotiation: the client then decides whether it can go on).
 */
export function negotiatedVersion(requested: unknown, recorded: string): string {
  if (typeof requested !== 'string' || !LEGACY_PROTOCOL_VERSIONS.includes(requested)) return recorded;
  return LEGACY_PROTOCOL_VERSIONS.includes(recorded) && requested <= recorded ? requested : recorded;
}

/** Methods whose `Mcp-Name` (and span target) comes from params. */
const NAME_PARAM: Record<string, 'name' | 'uri'> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
  'resources/subscribe': 'uri',
  'resources/unsubscribe': 'uri',
};

export function paramsOf(msg: JsonRpcMessage): Record<string, unknown> | undefined {
  const p = (msg as { params?: unknown }).params;
  return isRecord(p) ? p : undefined;
}

export function metaOf(msg: JsonRpcMessage): Record<string, unknown> | undefined {
  const m = paramsOf(msg)?._meta;
  return isRecord(m) ? m : undefined;
}

/** The tool or prompt name, or the resource URI, that a request targets. */
export function targetOf(method: string, msg: JsonRpcMessage): string | undefined {
  const key = NAME_PARAM[method];
  if (!key) return undefined;
  const v = paramsOf(msg)?.[key];
  return typeof v === 'string' ? v : undefined;
}

/** The protocol version a request claims in `_meta` (2026-07-28 style), if any. */
export function metaProtocolVersion(msg: JsonRpcMessage): string | undefined {
  const v = metaOf(msg)?.[META_PROTOCOL_VERSION];
  return typeof v === 'string' ? v : undefined;
}

/** Era evidence carried by a single request. `unknown` when the message says nothing. */
export function eraOfRequest(method: string, msg: JsonRpcMessage): { era: Era; protocolVersion?: string } {
  if (method === 'initialize') {
    const v = paramsOf(msg)?.protocolVersion;
    return { era: 'legacy', protocolVersion: typeof v === 'string' ? v : undefined };
  }
  const mv = metaProtocolVersion(msg);
  if (mv !== undefined) return { era: 'modern', protocolVersion: mv };
  if (method === 'server/discover') return { era: 'modern' };
  return { era: 'unknown' };
}

/** The era a protocol version belongs to: the stateless one from 2026-07-28 on (revisions are dates). */
export function eraOfVersion(version: string | undefined): Era {
  if (version === undefined || !/^\d{4}-\d{2}-\d{2}$/.test(version)) return 'unknown';
  return version >= MODERN_PROTOCOL_VERSION ? 'modern' : 'legacy';
}

export function progressTokenOf(msg: JsonRpcMessage): JsonRpcId | undefined {
  const t = metaOf(msg)?.progressToken;
  return typeof t === 'string' || typeof t === 'number' ? t : undefined;
}

/** `true` when a `tools/call` result reports a tool-level failure. */
export function isToolError(result: unknown): boolean {
  return isRecord(result) && result.isError === true;
}

/** W3C trace context carried in `_meta` (SEP-414). */
export function traceContextOf(msg: JsonRpcMessage): { traceparent?: string; tracestate?: string } {
  const m = metaOf(msg);
  if (!m) return {};
  return {
    traceparent: typeof m.traceparent === 'string' ? m.traceparent : undefined,
    tracestate: typeof m.tracestate === 'string' ? m.tracestate : undefined,
  };
}
