/**
 * MCP over HTTP: header names, the `=?base64?…?=` value encoding of 2026-07-28, hop-by-hop rules,
 * and the side-path check of the standard headers against the message body. Pure; no IO.
 *
 * All header names here are lower-case, as node:http and undici hand them over.
 */
import { isRecord, type JsonRpcMessage } from '../model/jsonrpc.js';
import { metaProtocolVersion, paramsOf } from './mcp.js';

export const H_SESSION_ID = 'mcp-session-id';
export const H_PROTOCOL_VERSION = 'mcp-protocol-version';
export const H_METHOD = 'mcp-method';
export const H_NAME = 'mcp-name';
export const H_PARAM_PREFIX = 'mcp-param-';
export const H_LAST_EVENT_ID = 'last-event-id';

/** Headers whose values are secrets: never stored in clear. */
export const SENSITIVE_HEADERS: readonly string[] = ['authorization', 'cookie', 'set-cookie', 'proxy-authorization'];

/**
 * Hop-by-hop headers (RFC 9110 §7.6.1) plus `host` (set for the upstream by the client library) and
 * `expect` (answered by node:http itself). A proxy never forwards these; it also drops every header
 * named in `Connection`.
 */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'expect',
]);

/** Whether a header must not be forwarded (given the lower-cased names listed in `Connection`). */
export function isHopByHop(name: string, connectionListed?: ReadonlySet<string>): boolean {
  return HOP_BY_HOP.has(name) || (connectionListed !== undefined && connectionListed.has(name));
}

/** Names listed in a `Connection` header value, lower-cased; undefined when there are none besides keep-alive/close. */
export function connectionTokens(value: string | string[] | undefined): Set<string> | undefined {
  if (value === undefined || value === 'keep-alive' || value === 'close') return undefined;
  let out: Set<string> | undefined;
  for (const part of (Array.isArray(value) ? value.join(',') : value).split(',')) {
    const t = part.trim().toLowerCase();
    if (t === '' || t === 'close' || t === 'keep-alive') continue;
    (out ??= new Set()).add(t);
  }
  return out;
}

const SENTINEL_PREFIX = '=?base64?';
const SENTINEL_SUFFIX = '?=';
const BASE64_BODY = /^[A-Za-z0-9+/]*={0,2}$/;

/** Whether a value must travel base64-wrapped: non-printable-ASCII, edge whitespace, empty, or sentinel-shaped. */
export function needsSentinel(value: string): boolean {
  if (value.length === 0 || value !== value.trim()) return true;
  if (value.startsWith(SENTINEL_PREFIX) && value.endsWith(SENTINEL_SUFFIX)) return true;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c !== 9 && (c < 32 || c > 126)) return true;
  }
  return false;
}

/** Encode a header value the way 2026-07-28 requires. */
export function encodeHeaderValue(value: string): string {
  return needsSentinel(value) ? `${SENTINEL_PREFIX}${Buffer.from(value, 'utf8').toString('base64')}${SENTINEL_SUFFIX}` : value;
}

export type DecodedHeader = { ok: true; value: string; encoded: boolean } | { ok: false; reason: string };

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Decode a header value; a malformed sentinel (bad base64, invalid UTF-8) is reported, not thrown. */
export function decodeHeaderValue(raw: string): DecodedHeader {
  const v = raw.trim();
  if (!(
    v.length >= SENTINEL_PREFIX.length + SENTINEL_SUFFIX.length &&
    v.slice(0, SENTINEL_PREFIX.length).toLowerCase() === SENTINEL_PREFIX &&
    v.endsWith(SENTINEL_SUFFIX)
  )) {
    return { ok: true, value: v, encoded: false };
  }
  const body = v.slice(SENTINEL_PREFIX.length, v.length - SENTINEL_SUFFIX.length);
  if (body.length % 4 !== 0 || !BASE64_BODY.test(body)) return { ok: false, reason: `invalid base64 in ${JSON.stringify(raw)}` };
  try {
    return { ok: true, value: utf8.decode(Buffer.from(body, 'base64')), encoded: true };
  } catch {
    return { ok: false, reason: `base64 value is not UTF-8: ${JSON.stringify(raw)}` };
  }
}

/** Which `params` field `Mcp-Name` mirrors, per method (2026-07-28, as the SDKs implement it). */
const NAME_SOURCE: Readonly<Record<string, string>> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
  'tasks/get': 'taskId',
  'tasks/update': 'taskId',
  'tasks/cancel': 'taskId',
};

export interface HeaderMismatch {
  header: string;
  /** What the header said (decoded), or undefined when it was missing. */
  headerValue?: string;
  /** What the body says. */
  bodyValue?: string;
  detail: string;
}

type HeaderBag = Record<string, string | string[] | undefined>;

function one(h: HeaderBag, name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

/**
 * Check a POSTed request's standard headers against its body (2026-07-28 rules). Only requests
 * that claim a version in `_meta` (modern) are held to the presence rules; a legacy request is
 * checked only for headers it chose to send. Never throws.
 */
export function checkRequestHeaders(headers: HeaderBag, msg: JsonRpcMessage): HeaderMismatch[] {
  if (!hasMethod(msg)) return [];
  const method = (msg as { method: string }).method;
  const out: HeaderMismatch[] = [];
  const isRequest = 'id' in msg;
  const metaVersion = metaProtocolVersion(msg);
  const modern = metaVersion !== undefined;
  const hv = one(headers, H_PROTOCOL_VERSION)?.trim();
  if (modern && hv === undefined)
    out.push({ header: 'MCP-Protocol-Version', bodyValue: metaVersion, detail: `MCP-Protocol-Version missing; _meta says ${metaVersion}` });
  else if (modern && hv !== metaVersion)
    out.push({
      header: 'MCP-Protocol-Version',
      headerValue: hv,
      bodyValue: metaVersion,
      detail: `MCP-Protocol-Version ${JSON.stringify(hv)} != _meta version ${JSON.stringify(metaVersion)}`,
    });
  compareDecoded(out, headers, H_METHOD, 'Mcp-Method', method, modern && isRequest);
  const field = Object.hasOwn(NAME_SOURCE, method) ? NAME_SOURCE[method] : undefined;
  if (field !== undefined) {
    const bodyName = paramsOf(msg)?.[field];
    if (typeof bodyName === 'string') compareDecoded(out, headers, H_NAME, 'Mcp-Name', bodyName, modern && isRequest, `params.${field}`);
  }
  return out;
}

function compareDecoded(
  out: HeaderMismatch[],
  headers: HeaderBag,
  name: string,
  label: string,
  bodyValue: string,
  required: boolean,
  bodyLabel = 'method',
): void {
  const raw = one(headers, name);
  if (raw === undefined) {
    if (required) out.push({ header: label, bodyValue: bodyValue, detail: `${label} missing; ${bodyLabel} is ${JSON.stringify(bodyValue)}` });
    return;
  }
  const d = decodeHeaderValue(raw);
  if (!d.ok) out.push({ header: label, headerValue: raw, bodyValue: bodyValue, detail: `${label}: ${d.reason}` });
  else if (d.value !== bodyValue)
    out.push({
      header: label,
      headerValue: d.value,
      bodyValue: bodyValue,
      detail: `${label} ${JSON.stringify(d.value)} != ${bodyLabel} ${JSON.stringify(bodyValue)}`,
    });
}

/** `true` for a parsed JSON value that looks like a request or notification (has a string method). */
export function hasMethod(v: unknown): v is JsonRpcMessage {
  return isRecord(v) && typeof v.method === 'string';
}
