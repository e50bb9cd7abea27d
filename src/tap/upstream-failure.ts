/**
 * What the tap answers, and records, when the upstream fails: a stable error class (shared with the
 * raw client's vocabulary) and the status a proxy gives (504 for timeouts, 502 otherwise).
 */
import type { ServerResponse } from 'node:http';
import { classifyNetworkError } from '../util/network-error.js';
import type { JsonRpcId } from '../model/jsonrpc.js';
import { SayOnce } from '../util/say-once.js';
import type { Logger } from '../util/logger.js';
import { counted } from '../util/plural.js';

export interface UpstreamFailure {
  errorClass: string;
  status: 502 | 504;
  message: string;
  /** What failed, without the class: the error's message, or what a timeout waited for. */
  detail: string;
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
  return { errorClass: cls, status: errorClass === 'timeout' ? 504 : 502, message: `mcptap: upstream ${cls.replace(/_/g, ' ')} (${detail})`, detail };
}

/**
 * Says on stderr that the upstream fails, once per error class (later failures are counted, not
 * logged), and, at its first answer after failing, that it answers again and how many requests
 * failed meanwhile. A later outage is said again: each one is news to whoever watches the tap.
 */
export class UpstreamHealth {
  private failedSince = 0;
  private readonly said: SayOnce;

  /** `upstream`: the URL as it may be shown; `redact` cleans error details (they may quote it). */
  constructor(
    private readonly upstream: string,
    private readonly redact: (text: string) => string,
    private readonly logger: Logger,
  ) {
    this.said = new SayOnce((m) => logger.warn(m));
  }

  failed(f: UpstreamFailure): void {
    this.failedSince++;
    this.said.count(
      f.errorClass,
      () => `upstream ${this.upstream}: ${f.errorClass.replace(/_/g, ' ')}: ${this.redact(f.detail)} (further failures of this kind counted, not logged)`,
    );
  }

  /** The upstream answered (any status). One comparison per request while it is healthy. */
  answered(): void {
    const n = this.failedSince;
    if (n === 0) return;
    this.failedSince = 0;
    this.said.forgetAll();
    this.logger.warn(`upstream ${this.upstream} answers again after ${counted(n, 'failed request')}`);
  }
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
