/**
 * A raw Streamable HTTP client: one POST per JSON-RPC message, over an undici keep-alive pool,
 * with the caller in exact control of the body, the id and every header. SSE responses are parsed
 * event by event as they arrive, so time to first event and gaps between events are real
 * (see post-exchange.ts: responses are read through undici's handler API, the cheapest per request).
 *
 * Invariants: a request either resolves with a {@link CallResult} (whatever the HTTP status or
 * JSON-RPC outcome) or rejects with a {@link TransportError}; it never rejects for what the server
 * said. Ids are compared verbatim (`1` !== `"1"`).
 */
import { Pool, type Dispatcher } from 'undici';
import type { JsonRpcId, JsonRpcMessage } from '../model/jsonrpc.js';
import { systemClock, type Clock } from '../util/clock.js';
import type { CallResult } from './call-result.js';
import { BodyReader, PostExchange } from './post-exchange.js';
import { toTransportError } from './transport-error.js';

export interface McpHttpClientOptions {
  url: string | URL;
  /** Keep-alive connections in the pool (default 64). */
  connections?: number;
  /** Inactivity timeout for headers and for the body, ms (default 30 000). */
  timeoutMs?: number;
  /** Headers sent on every request (e.g. `authorization`), lower-cased names. */
  headers?: Record<string, string>;
  clock?: Clock;
  /** Use this dispatcher instead of an own pool (it is not closed by {@link McpHttpClient.close}). */
  dispatcher?: Dispatcher;
}

export interface PostOptions {
  /** Headers for this request (lower-cased names); they override the client's defaults. */
  headers?: Record<string, string>;
  signal?: AbortSignal;
  timeoutMs?: number;
  /** Called for every message as it arrives (SSE: per event). */
  onMessage?: (message: JsonRpcMessage, timeUs: number) => void;
  /** The final response headers arrived (streams: the stream is open). */
  onHeaders?: (status: number, timeUs: number) => void;
  /** The id the response must carry; taken from the body when it is a message. `null`: no response expected. */
  expectId?: JsonRpcId | null;
}

const BASE_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

export class McpHttpClient {
  readonly url: URL;
  // URL getters (origin especially) are recomputed on every read: kept once, they are read per request.
  private readonly origin: string;
  private readonly path: string;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly clock: Clock;
  private readonly timeoutMs: number;
  private readonly headers: Record<string, string>;

  constructor(opts: McpHttpClientOptions) {
    this.url = new URL(opts.url);
    this.origin = this.url.origin;
    this.path = this.url.pathname + this.url.search;
    this.clock = opts.clock ?? systemClock;
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.headers = { ...BASE_HEADERS, ...(opts.headers ?? {}) };
    this.ownsDispatcher = !opts.dispatcher;
    this.dispatcher = opts.dispatcher ?? new Pool(this.url.origin, { connections: opts.connections ?? 64, pipelining: 1, keepAliveTimeout: 30_000 });
  }

  /** Where requests go and the headers they carry, for a caller that dispatches its own (the load driver). */
  get endpoint(): { dispatcher: Dispatcher; origin: string; path: string; headers: Readonly<Record<string, string>>; timeoutMs: number } {
    return { dispatcher: this.dispatcher, origin: this.origin, path: this.path, headers: this.headers, timeoutMs: this.timeoutMs };
  }

  /** POST one message (or exact raw bytes) and read the whole answer. */
  post(body: JsonRpcMessage | string, opts: PostOptions = {}): Promise<CallResult> {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    const expectId = opts.expectId !== undefined ? opts.expectId : typeof body === 'string' ? null : idOf(body);
    return this.exchange('POST', text, expectId, opts);
  }

  /**
   * GET the standalone server->client stream (legacy era) and read it until it ends, the timeout
   * or `opts.signal`; its messages go to `opts.onMessage` as they arrive.
   */
  stream(opts: PostOptions = {}): Promise<CallResult> {
    return this.exchange('GET', undefined, null, { ...opts, headers: { accept: 'text/event-stream', ...opts.headers } });
  }

  private async exchange(method: 'POST' | 'GET', text: string | undefined, expectId: JsonRpcId | null, opts: PostOptions): Promise<CallResult> {
    const timeout = opts.timeoutMs ?? this.timeoutMs;
    // A deadline for the whole exchange, SSE stream included, as the stdio client has: undici's own
    // timeouts restart with every byte (a stream of progress events never times out) and run on
    // coarse timers (a 200 ms timeout fired after 500-850 ms).
    const deadline = AbortSignal.timeout(timeout);
    const ex = new PostExchange(
      new BodyReader(this.clock, expectId, opts.onMessage),
      this.clock,
      opts.signal ? AbortSignal.any([opts.signal, deadline]) : deadline,
      opts.onHeaders,
    );
    const sentUs = this.clock.nowUs();
    try {
      const request = {
        origin: this.origin,
        path: this.path,
        method,
        headers: opts.headers ? merged(this.headers, opts.headers) : this.headers,
        body: text ?? null,
        headersTimeout: timeout,
        bodyTimeout: timeout,
      };
      this.dispatcher.dispatch(request, ex);
      await ex.done;
    } catch (err) {
      const what = ex.headersUs === undefined ? `${method} ${this.url.href}` : `reading the response of ${method} ${this.url.href}`;
      throw toTransportError(err, what);
    }
    const result = ex.reader.result(ex.status, sentUs, ex.headersUs!, this.clock.nowUs());
    result.headers = ex.headers;
    const sid = ex.headers['mcp-session-id'];
    if (sid) result.sessionId = sid;
    return result;
  }

  /** DELETE the session (legacy era). Resolves with the HTTP status. */
  async deleteSession(headers: Record<string, string>, timeoutMs = this.timeoutMs): Promise<number> {
    try {
      const res = await this.dispatcher.request({
        origin: this.origin,
        path: this.path,
        method: 'DELETE',
        headers: { ...this.headers, ...headers },
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      await res.body.dump();
      return res.statusCode;
    } catch (err) {
      throw toTransportError(err, `DELETE ${this.url.href}`);
    }
  }

  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close().catch(() => undefined);
  }
}

function idOf(m: JsonRpcMessage): JsonRpcId | null {
  return 'id' in m && 'method' in m ? m.id : null;
}

// Runs once per request: a plain loop, not object spread (which costs microseconds on Node 20's V8).
function merged(base: Record<string, string>, over: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k in base) out[k] = base[k]!;
  for (const k in over) out[k] = over[k]!;
  return out;
}
