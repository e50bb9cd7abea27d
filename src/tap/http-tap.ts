/**
 * `mcptap http`: a transparent reverse proxy in front of an MCP server speaking Streamable HTTP
 * (either era) or the deprecated HTTP+SSE transport. It moves bytes (node:http in, an undici
 * keep-alive pool out, streamed both ways) and, on a side path, feeds the pipeline.
 *
 * Paths are forwarded verbatim: a client uses the tap's origin with the upstream's path, e.g.
 * upstream `http://127.0.0.1:3001/mcp` -> `http://127.0.0.1:7077/mcp`.
 *
 * Safety: binds to loopback unless given another address; refuses requests whose Host or Origin
 * names a host it does not serve (DNS rebinding); answers 413 past --max-body; secrets in headers
 * reach the recording only as keyed-hash tokens.
 */
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { createRequire } from 'node:module';
import type { Pool } from 'undici';
import type { Pipeline } from '../pipeline/pipeline.js';
import type { PipelineInput } from '../pipeline/pipeline-input.js';
import { McptapError } from '../errors.js';
import { Redactor } from '../redact/redactor.js';
import { systemClock, type Clock } from '../util/clock.js';
import { silentLogger, type Logger } from '../util/logger.js';
import { HttpObserver } from './http-observer.js';
import { Forwarder, type ForwardSettings } from './http-forwarder.js';
import { ListenerGuard, isLoopbackHost, isWildcardHost } from './listener-guard.js';
import { sendTapError, TAP_ERROR_CODE, UpstreamHealth } from './upstream-failure.js';

/** Limits on what clients send (documented in the README's HTTP tap section, tested in test/tap/http-hostile.test.ts). */
/**
 * undici's Pool module alone: undici's index also loads fetch, WebSocket, the cache and the mock
 * agent, most of what undici costs a tap's start-up (docs/performance.md); a test checks it is
 * undici's own `Pool`.
 */
export const UndiciPool = createRequire(import.meta.url)('undici/lib/dispatcher/pool.js') as typeof Pool;

export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
export const DEFAULT_MAX_HEADER_BYTES = 16 * 1024;
export const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 10_000;

/** What node:http itself answers to each parse failure (its clientError default). */
const CLIENT_ERROR_STATUS: Record<string, number> = {
  HPE_HEADER_OVERFLOW: 431,
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 413,
  ERR_HTTP_REQUEST_TIMEOUT: 408,
};

/** The documented default port (6277 belongs to the MCP Inspector's proxy). */
export const DEFAULT_HTTP_TAP_PORT = 7077;
export const DEFAULT_HTTP_TAP_HOST = '127.0.0.1';

export interface HttpTapOptions {
  upstream: string | URL;
  /** Listen address; loopback by default. Any other address must be asked for explicitly. */
  host?: string;
  /** Listen port; default {@link DEFAULT_HTTP_TAP_PORT}; 0 picks a free one. */
  port?: number;
  /** The pipeline to feed (in this thread or a worker's); a sink-less one is created (and closed with the tap) when absent. */
  pipeline?: PipelineInput;
  /** Turns secrets in headers into tokens; default: a Redactor with a random key and `redactHeaders`. */
  redactor?: Redactor;
  /** Extra header names to redact (with the default Redactor). */
  redactHeaders?: string[];
  /** Upstream TCP connect timeout, ms (default 10 000). */
  connectTimeoutMs?: number;
  /** Time until the upstream's response headers, ms (default 300 000; 0 = none). */
  responseTimeoutMs?: number;
  /** Longest silence inside a response body, ms (default 300 000; 0 = none: long-lived SSE streams). */
  idleTimeoutMs?: number;
  /** Largest request body forwarded, bytes (default 4 MiB); larger gets 413. */
  maxBodyBytes?: number;
  /** Time a client has to send a request's headers, ms (default 10 000): slower gets 408 and the connection closed (slowloris). */
  headersTimeoutMs?: number;
  /** Time a client has to send a whole request, headers and body, ms (default 60 000): then 408. */
  requestTimeoutMs?: number;
  /** Largest request head (request line and headers), bytes (default 16 KiB): larger gets 431. */
  maxHeaderBytes?: number;
  /** How long an idle keep-alive connection from a client stays open, ms (default 10 000). */
  keepAliveTimeoutMs?: number;
  /** Extra `Host` values accepted (hostname, or host:port). */
  allowedHosts?: string[];
  /** Extra `Origin`s accepted (hostname, or scheme://host:port). */
  allowedOrigins?: string[];
  /** End a session unused this long, ms (default 1 hour; 0 = never). */
  sessionIdleMs?: number;
  clock?: Clock;
  logger?: Logger;
}

export interface HttpTapStats {
  requests: number;
  inFlight: number;
  clientAborts: number;
  upstreamFailures: number;
  /** Refused by the tap itself (403 Host/Origin, 413 body too large). */
  rejected: number;
  /** Connections node:http closed with 400/408/431 (not HTTP, too slow, head too large) before a request could be forwarded. */
  badRequests: number;
  openSessions: number;
}

export interface HttpTap {
  /** Where clients connect: the tap's origin plus the upstream's path. */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly pipeline: PipelineInput;
  stats(): HttpTapStats;
  /**
   * Stop accepting, abort what is in flight (recorded as `tap_closed`), end sessions, release the
   * pool. With `drainMs`, requests in flight first get that long to finish (new ones are answered
   * 503; the streams GETs hold open are cut at once, as they never end by themselves); a later
   * `close({ drainMs: 0 })` cuts the drain short. Idempotent.
   */
  close(opts?: { drainMs?: number }): Promise<void>;
}

export async function startHttpTap(opts: HttpTapOptions): Promise<HttpTap> {
  // A pipeline of its own only when none is given (the CLI always gives one): loaded on demand.
  const own = opts.pipeline
    ? undefined
    : new (await import('../pipeline/pipeline.js')).Pipeline({ clock: opts.clock ?? systemClock, logger: opts.logger ?? silentLogger });
  const tap = new HttpTapServer(opts, own);
  await tap.listen();
  return tap;
}

class HttpTapServer implements HttpTap {
  readonly pipeline: PipelineInput;
  /** The pipeline this tap made for itself (none given): closed with the tap. */
  private readonly ownPipeline: Pipeline | undefined;
  host: string;
  port = 0;
  url = '';
  private readonly upstream: URL;
  private readonly server: Server;
  private readonly pool: Pool;
  private readonly guard: ListenerGuard;
  private readonly observer: HttpObserver;
  private readonly settings: ForwardSettings;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly inFlight = new Set<Forwarder>();
  private readonly maxBodyBytes: number;
  private readonly counts = { requests: 0, clientAborts: 0, upstreamFailures: 0, rejected: 0, badRequests: 0 };
  private closing: Promise<void> | undefined;
  /** While draining: ends the drain (the last request finished, the time is up, or a cut was asked for). */
  private endDrain: (() => void) | undefined;

  constructor(
    private readonly opts: HttpTapOptions,
    ownPipeline: Pipeline | undefined,
  ) {
    this.upstream = new URL(opts.upstream);
    if (this.upstream.protocol !== 'http:' && this.upstream.protocol !== 'https:')
      throw new McptapError('MCPTAP_BAD_FLAG', `upstream must be an http(s) URL, got ${this.upstream.href}`);
    this.host = opts.host ?? DEFAULT_HTTP_TAP_HOST;
    this.clock = opts.clock ?? systemClock;
    this.logger = opts.logger ?? silentLogger;
    this.ownPipeline = ownPipeline;
    this.pipeline = opts.pipeline ?? ownPipeline!;
    this.maxBodyBytes = opts.maxBodyBytes ?? 4 * 1024 * 1024;
    this.guard = new ListenerGuard({ listenHost: this.host, allowedHosts: opts.allowedHosts ?? [], allowedOrigins: opts.allowedOrigins ?? [] });
    if (this.guard.hostCheckOff) this.logger.warn(`listening on ${this.host} without --allowed-host: the Host check (DNS rebinding protection) is off`);
    else if (!isLoopbackHost(this.host) && !isWildcardHost(this.host)) this.logger.info(`listening on a non-loopback address (${this.host})`);
    const connectTimeout = opts.connectTimeoutMs ?? 10_000;
    this.pool = new UndiciPool(this.upstream.origin, { connections: null, pipelining: 1, keepAliveTimeout: 10_000, connect: { timeout: connectTimeout } });
    const redactor = opts.redactor ?? new Redactor({ headers: opts.redactHeaders ?? [] });
    // The upstream URL may carry a password or a token (userinfo, query): never in clear on stderr.
    const redact = (text: string) => redactor.redactText(text);
    this.observer = new HttpObserver({
      pipeline: this.pipeline,
      redactor,
      target: this.upstream.href,
      clock: this.clock,
      logger: this.logger,
      maxRecordBytes: this.maxBodyBytes,
      maxRecordResponseBytes: Math.max(64 * 1024 * 1024, this.maxBodyBytes),
      sessionIdleMs: opts.sessionIdleMs ?? 3_600_000,
    });
    this.settings = {
      dispatcher: this.pool,
      clock: this.clock,
      responseTimeoutMs: opts.responseTimeoutMs ?? 300_000,
      idleTimeoutMs: opts.idleTimeoutMs ?? 300_000,
      maxBodyBytes: this.maxBodyBytes,
      health: new UpstreamHealth(redact(this.upstream.href), redact, this.logger),
      onDone: (f, outcome) => {
        this.inFlight.delete(f);
        if (this.inFlight.size === 0) this.endDrain?.();
        if (outcome === 'client_gone') this.counts.clientAborts++;
        else if (outcome === 'upstream_failed') this.counts.upstreamFailures++;
        else if (outcome === 'too_large') this.counts.rejected++;
      },
    };
    const headersTimeout = opts.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS;
    const requestTimeout = opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.server = createServer(
      {
        keepAliveTimeout: opts.keepAliveTimeoutMs ?? DEFAULT_KEEP_ALIVE_TIMEOUT_MS,
        headersTimeout,
        // node:http wants the whole-request limit at least the headers' one (0 = none).
        requestTimeout: requestTimeout === 0 ? 0 : Math.max(requestTimeout, headersTimeout),
        maxHeaderSize: opts.maxHeaderBytes ?? DEFAULT_MAX_HEADER_BYTES,
        // The two timeouts above are enforced by a sweep at this period (node's default is 30 s).
        connectionsCheckingInterval: Math.min(1000, Math.max(100, Math.floor(headersTimeout / 4))),
      },
      this.handle,
    );
    this.server.on('clientError', this.onClientError);
  }

  /**
   * A connection node:http could not parse a request from (not HTTP, head too large, bad chunked
   * framing) or that was too slow to send one: answered as node:http would (400, 431, 408) when
   * nothing was answered on it yet, else cut; counted, and recorded as an anomaly.
   */
  private readonly onClientError = (err: NodeJS.ErrnoException, socket: Duplex): void => {
    if (err.code === 'ECONNRESET' || err.code === 'EPIPE') return void socket.destroy();
    this.counts.badRequests++;
    const status = CLIENT_ERROR_STATUS[err.code ?? ''] ?? 400;
    this.observer.reject(`bad request from a client (${err.code ?? err.message}): answered ${status}`, this.clock.nowUs());
    // A response already begun on this connection cannot be followed by another: the connection is cut.
    const answering =
      (socket as Duplex & { _httpMessage?: unknown })._httpMessage !== undefined && (socket as Duplex & { _httpMessage?: unknown })._httpMessage !== null;
    if (!socket.writable || answering) return void socket.destroy();
    socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`, () => socket.destroy());
  };

  listen(): Promise<void> {
    return new Promise((resolve, reject) => {
      const onError = (err: Error) => reject(err);
      this.server.once('error', onError);
      this.server.listen({ host: this.host, port: this.opts.port ?? DEFAULT_HTTP_TAP_PORT }, () => {
        this.server.off('error', onError);
        this.server.on('error', (err) => this.logger.error(`listener: ${err.message}`));
        const addr = this.server.address() as AddressInfo;
        this.port = addr.port;
        const h = addr.address.includes(':') ? `[${addr.address}]` : addr.address;
        this.url = `http://${h}:${this.port}${this.upstream.pathname}${this.upstream.search}`;
        resolve();
      });
    });
  }

  stats(): HttpTapStats {
    return { ...this.counts, inFlight: this.inFlight.size, openSessions: this.observer.openSessions };
  }

  close(opts: { drainMs?: number } = {}): Promise<void> {
    if (this.closing) {
      if (opts.drainMs === 0) this.endDrain?.();
      return this.closing;
    }
    this.closing = this.doClose(opts.drainMs ?? 0);
    return this.closing;
  }

  private async doClose(drainMs: number): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    if (drainMs > 0) await this.drain(drainMs);
    for (const f of [...this.inFlight]) f.shutdown();
    this.server.closeAllConnections();
    await closed;
    // Socket 'close' handlers end their connections on the next turn (see HttpObserver.socketConnection):
    // let them run, so every event is in the pipeline before the caller closes the sinks.
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.observer.close();
    await this.pool.destroy().catch(() => undefined);
    await this.ownPipeline?.close();
  }

  /** Lets the requests in flight finish, for up to `ms` (a rolling restart should not fail the calls it catches mid-way). */
  private drain(ms: number): Promise<void> {
    this.server.closeIdleConnections();
    for (const f of [...this.inFlight]) if (f.isServerStream) f.shutdown();
    if (this.inFlight.size === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => this.endDrain?.(), ms);
      this.endDrain = () => {
        this.endDrain = undefined;
        clearTimeout(timer);
        resolve();
      };
    });
  }

  private readonly handle = (req: IncomingMessage, res: ServerResponse): void => {
    this.counts.requests++;
    const origin = req.headers.origin;
    const verdict = this.guard.check(req.headers.host, Array.isArray(origin) ? origin[0] : origin);
    if (!verdict.ok) return this.refuse(res, 403, `${verdict.detail}: answered 403`);
    const cl = req.headers['content-length'];
    if (cl !== undefined && Number(cl) > this.maxBodyBytes) {
      res.setHeader('connection', 'close');
      return this.refuse(res, 413, `request body of ${cl} bytes is larger than --max-body (${this.maxBodyBytes}): answered 413`);
    }
    if (this.closing) return sendTapError(res, 503, TAP_ERROR_CODE.upstream, 'mcptap: shutting down');
    const f = new Forwarder(this.settings, req, res, this.observer.begin(req, this.clock.nowUs()));
    this.inFlight.add(f);
    f.start();
  };

  private refuse(res: ServerResponse, status: number, detail: string): void {
    this.counts.rejected++;
    this.observer.reject(detail, this.clock.nowUs());
    sendTapError(res, status, TAP_ERROR_CODE.rejected, `mcptap: ${detail}`);
  }
}
