/**
 * What the tap answers, and records, when the upstream fails: a stable error class (shared with the
 * raw client's vocabulary) and the status a proxy gives (504 for timeouts, 502 otherwise).
 */
import type { ServerResponse } from 'node:http';
import { classifyNetworkError } from '../util/network-error.js';
import type { JsonRpcId } from '../model/jsonrpc.js';

export interface UpstreamFailure {
  errorClass: string;
  status: 502 | 504;
  message: string;
}

const TIMEOUT_DETAIL: Record<string, string> = {
  UND_ERR_CONNECT_TIMEOUT: 'connect timeout',
  UND_ERR_HEADERS_TIMEOUT: 'no response headers within --response-timeout',
  UND_ERR_BODY_TIMEOUT: 'response body idle longer than --idle-timeout',
};

export function classifyUpstreamError(err: unknown): UpstreamFailure {
  const errorClass = classifyNetworkError(err);
  const code = (err as { code?: unknown })?.code;
  const detail = (typeof code === 'string' && TIMEOUT_DETAIL[code]) || (err as Error)?.message || String(err);
  const cls = errorClass === 'other' ? 'upstream_error' : errorClass;
  return { errorClass: cls, status: errorClass === 'timeout' ? 504 : 502, message: `mcptap: upstream ${cls.replace(/_/g, ' ')} (${detail})` };
}

/** `http_4xx` / `http_5xx`: the transport class of an HTTP error status with no JSON-RPC answer. */
export function httpErrorClass(status: number): string {
  return `http_${Math.floor(status / 100)}xx`;
}

/** JSON-RPC codes for the tap's own answers: upstream unusable (internal error), request refused (invalid request). */
export const TAP_ERROR_CODE = { upstream: -32603, rejected: -32600 } as const;

/** A well-formed JSON-RPC error answer from the tap itself. No-op when headers already went out. */
export function sendTapError(res: ServerResponse, status: number, code: number, message: string, id: JsonRpcId | null = null): void {
  if (res.headersSent || res.destroyed) return;
  const body = JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } });
  // A reason phrase left by a writeHead that threw would be reused, and throw again.
  res.statusMessage = '';
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-mcptap-error': 'true' });
  res.end(body);
}
