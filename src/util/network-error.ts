/**
 * Network failures in a stable vocabulary, shared by the client (what a call's transport error was)
 * and the HTTP tap (why the upstream failed). Pure: looks only at the error's code, name and causes.
 */
export type TransportErrorClass = 'connection_refused' | 'connection_reset' | 'timeout' | 'aborted' | 'dns' | 'child_exit' | 'other';

export const TRANSPORT_ERROR_CLASSES: readonly TransportErrorClass[] = [
  'connection_refused',
  'connection_reset',
  'timeout',
  'aborted',
  'dns',
  'child_exit',
  'other',
];

const BY_CODE: Record<string, TransportErrorClass> = {
  ECONNREFUSED: 'connection_refused',
  ECONNRESET: 'connection_reset',
  EPIPE: 'connection_reset',
  UND_ERR_SOCKET: 'connection_reset',
  UND_ERR_CLOSED: 'connection_reset',
  ETIMEDOUT: 'timeout',
  UND_ERR_CONNECT_TIMEOUT: 'timeout',
  UND_ERR_HEADERS_TIMEOUT: 'timeout',
  UND_ERR_BODY_TIMEOUT: 'timeout',
  ENOTFOUND: 'dns',
  EAI_AGAIN: 'dns',
  UND_ERR_ABORTED: 'aborted',
  ABORT_ERR: 'aborted',
};

/** Map a socket/undici error (or its `cause` chain) onto a transport class. */
export function classifyNetworkError(err: unknown): TransportErrorClass {
  let e: unknown = err;
  for (let depth = 0; depth < 5 && e; depth++) {
    const rec = e as { code?: unknown; name?: unknown; cause?: unknown; errors?: unknown };
    if (typeof rec.code === 'string' && BY_CODE[rec.code]) return BY_CODE[rec.code]!;
    if (rec.name === 'AbortError') return 'aborted';
    if (rec.name === 'TimeoutError') return 'timeout';
    // AggregateError (happy-eyeballs connect attempts): classify by the first inner error.
    if (Array.isArray(rec.errors) && rec.errors.length > 0) return classifyNetworkError(rec.errors[0]);
    e = rec.cause;
  }
  return 'other';
}
