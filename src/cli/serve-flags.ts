/**
 * What the serving commands (reference, ui, mcp) share: the `--http HOST:PORT` they listen on, and
 * the wait for the signal that stops them.
 */
import { McptapError } from '../errors.js';

/** `HOST:PORT`, `[v6]:PORT`, `:PORT` or `PORT` (host defaults to 127.0.0.1). */
export function parseHostPort(spec: string): { host: string; port: number } {
  const m = /^(?:(?:\[([^\]]+)\]|([^:[\]]*)):)?(\d+)$/.exec(spec.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || !Number.isInteger(port) || port > 65535) {
    throw new McptapError('MCPTAP_BAD_FLAG', `--http must be HOST:PORT (e.g. 127.0.0.1:3333), got ${JSON.stringify(spec)}`);
  }
  return { host: m[1] ?? (m[2] || '127.0.0.1'), port };
}

/** Resolves at the first SIGINT or SIGTERM (then no longer listening). */
export function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      process.off('SIGINT', done);
      process.off('SIGTERM', done);
      resolve();
    };
    process.on('SIGINT', done);
    process.on('SIGTERM', done);
  });
}
