/**
 * The reference server over Streamable HTTP: ONE endpoint (default `/mcp`) serving both eras.
 *
 * Dispatch (the pattern the 2.x SDK documents for keeping sessionful 2025 serving next to a
 * strict modern endpoint): `isLegacyRequest()` — the SDK's own era classification — sends
 * claim-less traffic (initialize, session requests, GET stream, DELETE) to
 * {@link LegacySessionHandler}; everything carrying the 2026-07-28 `_meta` envelope (and every
 * modern validation failure: header mismatches -> 400/-32020, bad envelopes -> -32602, …) goes to
 * `createMcpHandler(factory, {legacy: 'reject'})`, which serves it statelessly with
 * request-scoped SSE.
 */
import { requestUrl } from '../util/request-path.js';
import { listen } from '../util/listen.js';
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMcpHandler, isLegacyRequest } from '@modelcontextprotocol/server';
import { localhostHostValidation, localhostOriginValidation } from '@modelcontextprotocol/node';
import { LegacySessionHandler } from './legacy-session-handler.js';
import { nodeFetchAdapter, type AdaptedRequest } from './node-fetch-adapter.js';
import { ARRIVED_HEADER, createReferenceServerFactory } from './reference-mcp-server.js';
import { resolveReference, type ReferenceServerOptions } from './reference-options.js';
import { stallResponse } from './stalled-response.js';

export interface ReferenceHttpServerOptions extends ReferenceServerOptions {
  /** Interface to bind. Default 127.0.0.1. */
  host?: string;
  /** Port; 0 (default) picks an ephemeral one. */
  port?: number;
  /** Endpoint path. Default `/mcp`. */
  path?: string;
  /** Cap on concurrent legacy sessions (oldest closed beyond it). Default 10 000. */
  maxLegacySessions?: number;
}

export interface ReferenceHttpServer {
  /** The MCP endpoint, e.g. `http://127.0.0.1:PORT/mcp`. */
  url: string;
  host: string;
  port: number;
  /** Epoch ms the stall schedule is anchored at (the server start). */
  startedAtEpochMs: number;
  /** HTTP requests received so far (answered or not): lets a test know a call got here. */
  stats(): { requests: number };
  /** Stops listening, ends every session and stream. Idempotent. */
  close(): Promise<void>;
}

type NodeHandler = (req: IncomingMessage, res: ServerResponse) => void;

export async function startReferenceHttpServer(opts: ReferenceHttpServerOptions = {}): Promise<ReferenceHttpServer> {
  const { behaviour, schedule } = resolveReference(opts, 'http');
  const log = behaviour.logger;
  const onerror = (err: Error) => log.debug(`reference http: ${err.message}`);
  const factory = createReferenceServerFactory(behaviour);
  const modern = createMcpHandler(factory, { legacy: 'reject', onerror });
  behaviour.hub.setBus(modern.bus);
  const legacy = new LegacySessionHandler(factory, log, opts.maxLegacySessions);

  // The body arrives parsed: the SDK classifies and serves it without reading the request again.
  // A POST whose body is empty or not JSON is legacy (what isLegacyRequest answers for it).
  const fetch = async ({ request, parsedBody, withBody }: AdaptedRequest): Promise<Response> => {
    const isLegacy = request.method === 'POST' && parsedBody === undefined ? true : await isLegacyRequest(request, parsedBody);
    const response = isLegacy ? await legacy.fetch(withBody()) : await modern.fetch(request, parsedBody === undefined ? undefined : { parsedBody });
    return schedule ? stallResponse(response, schedule) : response;
  };
  const host = opts.host ?? '127.0.0.1';
  const path = opts.path ?? '/mcp';
  const route = routeTo(path, nodeFetchAdapter(fetch, onerror), isLoopback(host));
  let requests = 0;
  const server = createServer((req, res) => {
    requests++;
    // When it arrived, for the progress notifications' _meta (a client's first-event accuracy).
    req.headers[ARRIVED_HEADER] = String(behaviour.nowUs());
    route(req, res);
  });
  await listen(server, opts.port ?? 0, host);
  const port = (server.address() as AddressInfo).port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}${path}`;
  log.debug(`reference: serving MCP on ${url} (both eras)`);

  let closing: Promise<void> | undefined;
  return {
    url,
    host,
    port,
    startedAtEpochMs: behaviour.startedAtEpochMs,
    stats: () => ({ requests }),
    close: () => (closing ??= shutdown(server, [() => modern.close(), () => legacy.close()])),
  };
}

/**
 * Only `path` reaches MCP. On a loopback bind the SDK's Host/Origin guards run first (DNS
 * rebinding protection, what the SDK's framework adapters apply by default).
 */
function routeTo(path: string, mcp: NodeHandler, loopback: boolean): NodeHandler {
  const guards = loopback ? [localhostHostValidation(), localhostOriginValidation()] : [];
  return (req, res) => {
    const pathname = req.url === path ? path : requestUrl(req.url)?.pathname;
    if (pathname !== path) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end(`not found; the MCP endpoint is ${path}\n`);
      return;
    }
    for (const guard of guards) if (!guard(req, res)) return;
    mcp(req, res);
  };
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\./.test(host);
}

async function shutdown(server: HttpServer, closers: Array<() => Promise<void>>): Promise<void> {
  const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
  await Promise.allSettled(closers.map((c) => c()));
  server.closeAllConnections();
  await stopped;
}
