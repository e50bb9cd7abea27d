/**
 * Building MCP requests for either era: the 2026-07-28 `_meta` envelope and the Streamable HTTP
 * headers (`Mcp-Method`, `Mcp-Name`, `MCP-Protocol-Version`, `Mcp-Session-Id`). Pure functions.
 */
import { isRecord } from '../model/jsonrpc.js';
import { META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION, MODERN_PROTOCOL_VERSION } from '../protocol/mcp.js';
import { encodeHeaderValue } from '../protocol/headers.js';

export interface ClientInfo {
  name: string;
  version: string;
}

export const DEFAULT_CLIENT_INFO: ClientInfo = { name: 'mcptap', version: '0.1.0' };

/** Methods whose `Mcp-Name` header comes from a param. */
const NAME_PARAM: Record<string, 'name' | 'uri'> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
};

// One rule for the whole code base (the tap checks headers with the same module).
export { encodeHeaderValue };

export interface ModernMetaOptions {
  protocolVersion?: string;
  clientInfo?: ClientInfo;
  capabilities?: Record<string, unknown>;
}

/** Params with the 2026-07-28 `_meta` keys added (keys the caller already set win). */
export function withModernMeta(params: Record<string, unknown> | undefined, opts: ModernMetaOptions = {}): Record<string, unknown> {
  // Once per request in load runs: plain loops, not object spread (slow on Node 20's V8).
  const p = params ?? {};
  const meta: Record<string, unknown> = {};
  meta[META_PROTOCOL_VERSION] = opts.protocolVersion ?? MODERN_PROTOCOL_VERSION;
  meta[META_CLIENT_CAPABILITIES] = opts.capabilities ?? {};
  meta[META_CLIENT_INFO] = opts.clientInfo ?? DEFAULT_CLIENT_INFO;
  if (isRecord(p._meta)) copyOwn(meta, p._meta);
  const out = copyOwn({}, p);
  out._meta = meta;
  return out;
}

/** `Object.assign` with spread semantics: own keys only, and `__proto__` stays a plain key. */
function copyOwn(into: Record<string, unknown>, from: Record<string, unknown>): Record<string, unknown> {
  for (const k in from) {
    if (!Object.hasOwn(from, k)) continue;
    if (k === '__proto__') Object.defineProperty(into, k, { value: from[k], enumerable: true, writable: true, configurable: true });
    else into[k] = from[k];
  }
  return into;
}

export interface HeaderContext {
  era: 'legacy' | 'modern';
  /** Legacy: the negotiated version (absent before initialize). Modern: the `_meta` version. */
  protocolVersion?: string;
  sessionId?: string;
}

/**
 * The MCP headers a well-behaved client sends with this request. Legacy: `Mcp-Session-Id` and
 * `MCP-Protocol-Version` once known. Modern: `MCP-Protocol-Version`, `Mcp-Method`, and `Mcp-Name`
 * for the three named methods. Header names are lower-case (HTTP/1.1 is case-insensitive).
 */
export function mcpHeaders(method: string, params: unknown, ctx: HeaderContext): Record<string, string> {
  const h: Record<string, string> = {};
  if (ctx.protocolVersion) h['mcp-protocol-version'] = ctx.protocolVersion;
  if (ctx.era === 'legacy') {
    if (ctx.sessionId) h['mcp-session-id'] = ctx.sessionId;
    return h;
  }
  h['mcp-method'] = method;
  const key = NAME_PARAM[method];
  const name = key && isRecord(params) ? params[key] : undefined;
  if (typeof name === 'string') h['mcp-name'] = encodeHeaderValue(name);
  return h;
}

/**
 * Apply per-request header overrides: a string replaces (or adds) the header, `null` removes it.
 * Names compare case-insensitively; this is how a scenario sends a deliberately wrong header.
 */
export function applyHeaderOverrides(base: Record<string, string>, overrides: Readonly<Record<string, string | null>> | undefined): Record<string, string> {
  if (!overrides) return base;
  const out = { ...base };
  for (const [name, value] of Object.entries(overrides)) {
    const lower = name.toLowerCase();
    if (value === null) delete out[lower];
    else out[lower] = value;
  }
  return out;
}
