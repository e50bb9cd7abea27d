/**
 * Transport failures of the raw client: the request never got a JSON-RPC answer because the
 * connection or the child process failed. These are the only failures the client throws; JSON-RPC
 * errors, `isError` results and odd HTTP statuses are data in the call result.
 */
import { classifyNetworkError, type TransportErrorClass } from '../util/network-error.js';

export { classifyNetworkError, TRANSPORT_ERROR_CLASSES, type TransportErrorClass } from '../util/network-error.js';

export class TransportError extends Error {
  constructor(
    readonly errorClass: TransportErrorClass,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'TransportError';
  }
}

export function toTransportError(err: unknown, what: string): TransportError {
  if (err instanceof TransportError) return err;
  const cls = classifyNetworkError(err);
  const msg = (err as Error)?.message ?? String(err);
  return new TransportError(cls, `${what}: ${cls.replace('_', ' ')}${msg ? ` (${msg})` : ''}`, { cause: err });
}
