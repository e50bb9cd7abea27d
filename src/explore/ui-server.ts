/**
 * `mcptap ui`'s HTTP server: Host and Origin checked first (http-guard.ts), then the token or its
 * cookie (ui-auth.ts), then GET only: the page and its script from an in-memory map made at start,
 * or JSON from /api/ (ui-api.ts). No request path reaches the file system; every answer carries a
 * strict CSP and is never cached.
 */
import { requestUrl } from '../util/request-path.js';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { listen } from '../util/listen.js';
import type { Logger } from '../util/logger.js';
import { requestGuard } from './http-guard.js';
import type { RecordingExplorer } from './recording-explorer.js';
import { UiApi, type UiConfig } from './ui-api.js';
import { checkAccess, cookieName, newToken } from './ui-auth.js';
import { APP_CSS, INDEX_HTML } from './ui-page.js';

export interface Asset {
  type: string;
  body: Buffer;
}

export interface UiServerOptions extends UiConfig {
  host: string;
  port: number;
  logger: Logger;
  /** Scripts compiled from web/: URL path (`/app.js`) to its bytes. */
  scripts: ReadonlyMap<string, Buffer>;
  allowedHosts?: string[];
  allowedOrigins?: string[];
  /** For tests: a fixed token instead of a random one. */
  token?: string;
}

export interface ServedUi {
  /** The URL to open, with the token. */
  url: string;
  /** The bare URL (what the redirect leaves in the address bar). */
  origin: string;
  close(): Promise<void>;
}

const HEADERS = {
  'content-security-policy': "default-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

/** The in-memory assets: the page, its style sheet and its scripts. */
function assetMap(scripts: ReadonlyMap<string, Buffer>): Map<string, Asset> {
  const assets = new Map<string, Asset>([
    ['/', { type: 'text/html; charset=utf-8', body: Buffer.from(INDEX_HTML) }],
    ['/app.css', { type: 'text/css; charset=utf-8', body: Buffer.from(APP_CSS) }],
  ]);
  for (const [path, body] of scripts) assets.set(path, { type: 'text/javascript; charset=utf-8', body });
  return assets;
}

export async function serveUi(explorer: RecordingExplorer, opts: UiServerOptions): Promise<ServedUi> {
  const token = opts.token ?? newToken();
  const api = new UiApi(explorer, opts);
  const assets = assetMap(opts.scripts);
  const guarded = requestGuard(opts);
  // Named after the port once bound (port 0 picks one); no request is served before.
  let cookie = '';
  const send = (res: ServerResponse, status: number, type: string, body: Buffer | string) =>
    res.writeHead(status, { ...HEADERS, 'content-type': type, 'content-length': Buffer.byteLength(body) }).end(body);
  const server = createServer((req, res) => {
    // On every answer, refusals and the token's redirect included.
    for (const [name, value] of Object.entries(HEADERS)) res.setHeader(name, value);
    if (!guarded(req, res)) return;
    const url = requestUrl(req.url);
    if (!url) return void send(res, 400, 'text/plain', 'bad request target\n');
    if (!checkAccess(token, cookie, req, res, url)) return;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { ...HEADERS, allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('only GET: the explorer never writes\n');
      return;
    }
    if (url.pathname.startsWith('/api/')) {
      let answer;
      try {
        answer = api.handle(url.pathname.slice('/api/'.length), url.searchParams);
      } catch (err) {
        opts.logger.error(`ui: ${url.pathname}: ${(err as Error).message}`);
        answer = { status: 500, body: { error: (err as Error).message } };
      }
      send(res, answer.status, 'application/json; charset=utf-8', JSON.stringify(answer.body));
      return;
    }
    const asset = assets.get(url.pathname);
    if (asset) send(res, 200, asset.type, asset.body);
    else send(res, 404, 'text/plain; charset=utf-8', 'not found\n');
  });
  await listen(server, opts.port, opts.host);
  const port = (server.address() as AddressInfo).port;
  cookie = cookieName(port);
  const origin = `http://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${port}/`;
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }));
  return { url: `${origin}?token=${token}`, origin, close };
}
