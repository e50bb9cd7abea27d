/**
 * The Host/Origin check (DNS rebinding; tap/listener-guard.ts) in front of an explorer's HTTP
 * listener, shared by `mcptap mcp --http` and `mcptap ui`: a refused request gets 403 and a warning.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ListenerGuard } from '../tap/listener-guard.js';
import type { Logger } from '../util/logger.js';

export interface GuardFlags {
  host: string;
  logger: Logger;
  allowedHosts?: string[];
  allowedOrigins?: string[];
}

/** A check to run first on every request: true when it may go on, false when it was answered 403. */
export function requestGuard(opts: GuardFlags): (req: IncomingMessage, res: ServerResponse) => boolean {
  const guard = new ListenerGuard({ listenHost: opts.host, allowedHosts: opts.allowedHosts ?? [], allowedOrigins: opts.allowedOrigins ?? [] });
  if (guard.hostCheckOff) opts.logger.warn(`listening on ${opts.host} without --allowed-host: the Host check (DNS rebinding protection) is off`);
  return (req, res) => {
    const origin = req.headers.origin;
    const verdict = guard.check(req.headers.host, Array.isArray(origin) ? origin[0] : origin);
    if (verdict.ok) return true;
    opts.logger.warn(`refused a request: ${verdict.detail}`);
    res.writeHead(403, { 'content-type': 'text/plain' }).end(`forbidden: ${verdict.detail}\n`);
    return false;
  };
}
