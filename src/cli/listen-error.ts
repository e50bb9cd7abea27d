/**
 * A listener that could not bind, as the one-line usage error (exit 2) the CLI prints: what failed,
 * and for a port in use what to do about it.
 */
import { McptapError } from '../errors.js';

// ENOTFOUND / EAI_AGAIN: a host name that does not resolve.
const LISTEN_CODES = new Set(['EADDRINUSE', 'EACCES', 'EADDRNOTAVAIL', 'ENOTFOUND', 'EAI_AGAIN']);

/** `err` as MCPTAP_LISTEN when it is a bind failure; undefined for anything else (rethrow it). */
export function listenError(where: string, err: unknown): McptapError | undefined {
  const code = (err as { code?: string } | undefined)?.code;
  if (code === undefined || !LISTEN_CODES.has(code)) return undefined;
  const hint = code === 'EADDRINUSE' ? ' (another process has the port: pick another, or port 0 for a free one)' : '';
  return new McptapError('MCPTAP_LISTEN', `cannot listen on ${where}: ${(err as Error).message}${hint}`, { cause: err });
}
