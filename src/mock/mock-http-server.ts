/**
 * The mock on Streamable HTTP (node:http), one endpoint serving both eras the way the recording's
 * server did:
 * - legacy: `initialize` mints an `Mcp-Session-Id`; later requests must carry a known one (missing
 *   -> 400, unknown -> 404 as the SDK answers); DELETE ends the session; GET (standalone stream) -> 405;
 * - 2026-07-28 (requests with the `_meta` envelope, `server/discover`): stateless.
 * A request whose recorded answer came as SSE (or has notifications) is answered with a stream of
 * that request's events; otherwise with a JSON body. Closing the stream, or `notifications/cancelled`,
 * stops the answer.
 * Like the tap, it refuses a Host or Origin it does not serve (DNS rebinding).
 */
import { listen } from '../util/listen.js';
import { requestUrl } from '../util/request-path.js';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { classifyMessage, idKey, isRecord, type JsonRpcMessage, type JsonRpcNotification, type JsonRpcRequest } from '../model/jsonrpc.js';
import { eraOfRequest } from '../protocol/mcp.js';
import { ListenerGuard } from '../tap/listener-guard.js';
import { silentLogger, type Logger } from '../util/logger.js';
import type { MissForwarder } from './miss-forwarder.js';
import type { MockResponder, Plan } from './mock-responder.js';
import { playPlan } from './play-plan.js';

export interface MockHttpServerOptions {
  responder: MockResponder;
  host?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  /** The endpoint path; default `/mcp`. */
  path?: string;
  forwarder?: MissForwarder;
  /** Largest request body, bytes (default 4 MiB; larger gets 413). */
  maxBodyBytes?: number;
  logger?: Logger;
}

export interface MockHttpServer {
  url: string;
  host: string;
  port: number;
  /** Stops listening and cuts the answers in flight. Idempotent. */
  close(): Promise<void>;
}

const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' };

export async function startMockHttpServer(opts: MockHttpServerOptions): Promise<MockHttpServer> {
  const host = opts.host ?? '127.0.0.1';
  const path = opts.path ?? '/mcp';
  const sessions = new Set<string>();
  const guard = new ListenerGuard({ listenHost: host });
  const log = opts.logger ?? silentLogger;
  const ctx: Ctx = { ...opts, sessions, inFlight: new Map(), maxBodyBytes: opts.maxBodyBytes ?? 4 * 1024 * 1024 };
  const server = createServer((req, res) => {
    const verdict = guard.check(req.headers.host, req.headers.origin);
    if (!verdict.ok) return void plain(res, 403, `mcptap mock: ${verdict.detail}`);
    if (requestUrl(req.url)?.pathname !== path) return void plain(res, 404, `not found; the MCP endpoint is ${path}`);
    handle(req, res, ctx).catch((err: Error) => {
      log.warn(`mock: ${req.method} failed: ${err.message}`);
      if (!res.headersSent) plain(res, 500, 'mcptap mock: internal error');
      else res.destroy();
    });
  });
  await listen(server, opts.port ?? 0, host);
  const port = (server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}${path}`,
    host,
    port,
    close: () => (closing ??= shutdown(server)),
  };
}

interface Ctx extends MockHttpServerOptions {
  sessions: Set<string>;
  /** Answers being sent, by `session|id`: `notifications/cancelled` (legacy) stops one. */
  inFlight: Map<string, AbortController>;
  maxBodyBytes: number;
}

function cancelled(n: JsonRpcNotification, sid: string | undefined, ctx: Ctx): void {
  const id = n.method === 'notifications/cancelled' && isRecord(n.params) ? n.params.requestId : undefined;
  if (typeof id === 'string' || typeof id === 'number') ctx.inFlight.get(`${sid ?? ''}|${idKey(id)}`)?.abort();
}

async function handle(req: IncomingMessage, res: ServerResponse, ctx: Ctx): Promise<void> {
  const sid = header(req, 'mcp-session-id');
  if (req.method === 'DELETE') return endSession(sid, res, ctx);
  if (req.method !== 'POST') return void res.writeHead(405, { allow: 'POST, DELETE' }).end();
  const body = await readBody(req, ctx.maxBodyBytes);
  if (body === undefined) return rpcError(res, 413, -32600, `request body larger than ${ctx.maxBodyBytes} bytes`);
  let message: unknown;
  try {
    message = JSON.parse(body) as unknown;
  } catch {
    return rpcError(res, 400, -32700, 'parse error: the body is not JSON');
  }
  const kind = classifyMessage(message);
  if (kind === 'notification') cancelled(message as JsonRpcNotification, sid, ctx);
  if (kind === 'notification' || kind === 'response') return void res.writeHead(202).end();
  if (kind !== 'request') return rpcError(res, 400, -32600, 'the body must be one JSON-RPC message (batches are not served by the mock)');
  const request = message as JsonRpcRequest;
  const modern = eraOfRequest(request.method, request).era === 'modern';
  const legacyInit = !modern && request.method === 'initialize';
  if (!modern && !legacyInit) {
    if (sid === undefined) return rpcError(res, 400, -32000, 'Bad Request: Mcp-Session-Id header is required', request.id);
    if (!ctx.sessions.has(sid)) return rpcError(res, 404, -32001, 'Session not found', request.id);
  }
  const startMs = performance.now();
  const plan = ctx.responder.answer(request);
  const headers: Record<string, string> = {};
  if (legacyInit && plan.outcome === 'hit') {
    const minted = randomUUID();
    ctx.sessions.add(minted);
    headers['mcp-session-id'] = minted;
  }
  const abort = new AbortController();
  const inFlight = `${sid ?? ''}|${idKey(request.id)}`;
  ctx.inFlight.set(inFlight, abort);
  res.on('close', () => {
    abort.abort();
    if (ctx.inFlight.get(inFlight) === abort) ctx.inFlight.delete(inFlight);
  });
  const sse = /text\/event-stream/i.test(header(req, 'accept') ?? '');
  if (plan.outcome === 'miss' && ctx.forwarder) {
    ctx.responder.stats.passedThrough++;
    const send = sse ? sseWriter(res, headers) : jsonWriter(res, headers);
    await ctx.forwarder.forward(request, send, { session: modern ? 'modern' : (sid ?? 'legacy'), signal: abort.signal });
  } else await answer(plan, res, headers, sse && plan.overSse, startMs, abort.signal);
  // Cancelled before the response: end what was started (or say there is nothing to send).
  if (!res.headersSent) res.writeHead(204).end();
  else if (!res.writableEnded) res.end();
}

async function answer(plan: Plan, res: ServerResponse, headers: Record<string, string>, sse: boolean, startMs: number, signal: AbortSignal): Promise<void> {
  if (sse || plan.hold) return playPlan(plan.messages, sseWriter(res, headers), { startMs, signal, ...(plan.hold ? { hold: true } : {}) });
  // A JSON body carries only the response; notifications need a stream the client did not accept.
  await playPlan(plan.messages.slice(-1), jsonWriter(res, headers), { startMs, signal });
}

/** Writes each message as an SSE event; the stream ends after the response. */
function sseWriter(res: ServerResponse, headers: Record<string, string>): (m: JsonRpcMessage) => void {
  return (m) => {
    if (res.destroyed) return;
    if (!res.headersSent) res.writeHead(200, { ...SSE_HEADERS, ...headers }).flushHeaders();
    res.write(`event: message\ndata: ${JSON.stringify(m)}\n\n`);
    if ('id' in m && !('method' in m)) res.end();
  };
}

/** Sends the response as the JSON body; anything before it is dropped. */
function jsonWriter(res: ServerResponse, headers: Record<string, string>): (m: JsonRpcMessage) => void {
  return (m) => {
    if (res.destroyed || !('id' in m) || 'method' in m) return;
    res.writeHead(200, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(m));
  };
}

async function endSession(sid: string | undefined, res: ServerResponse, ctx: Ctx): Promise<void> {
  if (sid === undefined) return rpcError(res, 400, -32000, 'Bad Request: Mcp-Session-Id header is required');
  if (!ctx.sessions.delete(sid)) return rpcError(res, 404, -32001, 'Session not found');
  await ctx.forwarder?.endSession(sid);
  res.writeHead(200).end();
}

function rpcError(res: ServerResponse, status: number, code: number, message: string, id: JsonRpcRequest['id'] | null = null): void {
  res
    .writeHead(status, { 'content-type': 'application/json' })
    .end(JSON.stringify({ jsonrpc: '2.0', id, error: { code, message: `mcptap mock: ${message}` } }));
}

function plain(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'text/plain' }).end(`${text}\n`);
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** The body as text, or undefined past `max` bytes. */
async function readBody(req: IncomingMessage, max: number): Promise<string | undefined> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) return undefined;
    parts.push(chunk);
  }
  return Buffer.concat(parts).toString('utf8');
}

function shutdown(server: Server): Promise<void> {
  const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  return stopped;
}
