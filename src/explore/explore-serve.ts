/**
 * Serving the recordings server (explore-mcp-server.ts) as the reference server is served: over
 * stdio with the SDK's `serveStdio` (the opening message picks the era), over Streamable HTTP on one
 * endpoint with 2026-07-28 traffic to `createMcpHandler` and legacy traffic to sessionful transports.
 * HTTP checks Host and Origin as the HTTP tap does (DNS rebinding; http-guard.ts) before anything.
 */
import { requestUrl } from '../util/request-path.js';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Readable, Writable } from 'node:stream';
import { createMcpHandler, isLegacyRequest } from '@modelcontextprotocol/server';
import { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { LegacySessionHandler } from '../reference/legacy-session-handler.js';
import { nodeFetchAdapter, type AdaptedRequest } from '../reference/node-fetch-adapter.js';
import { listen } from '../util/listen.js';
import type { Logger } from '../util/logger.js';
import { requestGuard } from './http-guard.js';
import { exploreServerFactory } from './explore-mcp-server.js';
import type { RecordingExplorer } from './recording-explorer.js';

export interface ServedExplorer {
  /** Resolves when the connection ends (stdio: stdin closed) or `close()` was called. */
  readonly closed: Promise<void>;
  close(): Promise<void>;
}

/** Serves on stdin/stdout: nothing but protocol messages is written to `stdout`. */
export function serveExplorerStdio(explorer: RecordingExplorer, io: { stdin: Readable; stdout: Writable; logger: Logger }): ServedExplorer {
  let markClosed!: () => void;
  const closed = new Promise<void>((resolve) => (markClosed = resolve));
  const transport = new StdioServerTransport(io.stdin, io.stdout);
  const originalClose = transport.close.bind(transport);
  transport.close = async () => {
    await originalClose();
    markClosed();
  };
  io.stdin.once('end', () => markClosed());
  const handle = serveStdio(exploreServerFactory(explorer), { transport, onerror: (err) => io.logger.debug(`mcp stdio: ${err.message}`) });
  return {
    closed,
    close: async () => {
      await handle.close();
      await transport.close();
    },
  };
}

export interface ExplorerHttpOptions {
  host: string;
  port: number;
  logger: Logger;
  allowedHosts?: string[];
  allowedOrigins?: string[];
}

export interface ServedExplorerHttp extends ServedExplorer {
  url: string;
}

export const EXPLORE_PATH = '/mcp';

export async function serveExplorerHttp(explorer: RecordingExplorer, opts: ExplorerHttpOptions): Promise<ServedExplorerHttp> {
  const onerror = (err: Error) => opts.logger.debug(`mcp http: ${err.message}`);
  const factory = exploreServerFactory(explorer);
  const modern = createMcpHandler(factory, { legacy: 'reject', onerror });
  const legacy = new LegacySessionHandler(factory, opts.logger);
  const fetch = async ({ request, parsedBody, withBody }: AdaptedRequest): Promise<Response> => {
    const isLegacy = request.method === 'POST' && parsedBody === undefined ? true : await isLegacyRequest(request, parsedBody);
    return isLegacy ? legacy.fetch(withBody()) : modern.fetch(request, parsedBody === undefined ? undefined : { parsedBody });
  };
  const mcp = nodeFetchAdapter(fetch, onerror);
  const guarded = requestGuard(opts);
  const server = createServer((req, res) => {
    if (!guarded(req, res)) return;
    const pathname = requestUrl(req.url)?.pathname;
    if (pathname !== EXPLORE_PATH) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end(`not found; the MCP endpoint is ${EXPLORE_PATH}\n`);
      return;
    }
    mcp(req, res);
  });
  await listen(server, opts.port, opts.host);
  const port = (server.address() as AddressInfo).port;
  const url = `http://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${port}${EXPLORE_PATH}`;
  let markClosed!: () => void;
  const closed = new Promise<void>((resolve) => (markClosed = resolve));
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.allSettled([modern.close(), legacy.close()]);
      server.closeAllConnections();
      await stopped;
      markClosed();
    })());
  return { url, closed, close };
}
