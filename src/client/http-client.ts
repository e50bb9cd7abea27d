/**
 * A raw Streamable HTTP client: one POST per JSON-RPC message, over an undici keep-alive pool,
 * with the caller in exact control of the body, the id and every header. SSE responses are parsed
 * event by event as they arrive, so time to first event and gaps between events are real.
 *
 * Invariants: a request either resolves with a {@link CallResult} (whatever the HTTP status or
 * JSON-RPC outcome) or rejects with a {@link TransportError}; it never rejects for what the server
 * said. Ids are compared verbatim (`1` !== `"1"`).
 */
import { Pool, type Dispatcher } from 'undici';
import { classifyMessage, isRecord, type JsonRpcId, type JsonRpcMessage, type JsonRpcResponse } from '../model/jsonrpc.js';
import { SseDecoder } from '../parse/sse-decoder.js';
import { systemClock, type Clock } from '../util/clock.js';
import type { CallResult, ViolationKind } from './call-result.js';
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
  /** The id the response must carry; taken from the body when it is a message. `null`: no response expected. */
  expectId?: JsonRpcId | null;
}

const BASE_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

export class McpHttpClient {
  readonly url: URL;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly clock: Clock;
  private readonly timeoutMs: number;
  private readonly headers: Record<string, string>;

  constructor(opts: McpHttpClientOptions) {
    this.url = new URL(opts.url);
    this.clock = opts.clock ?? systemClock;
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.headers = { ...BASE_HEADERS, ...(opts.headers ?? {}) };
    this.ownsDispatcher = !opts.dispatcher;
    this.dispatcher =
      opts.dispatcher ?? new Pool(this.url.origin, { connections: opts.connections ?? 64, pipelining: 1, keepAliveTimeout: 30_000 });
  }

  /** POST one message (or exact raw bytes) and read the whole answer. */
  async post(body: JsonRpcMessage | string, opts: PostOptions = {}): Promise<CallResult> {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    const expectId = opts.expectId !== undefined ? opts.expectId : typeof body === 'string' ? null : idOf(body);
    const timeout = opts.timeoutMs ?? this.timeoutMs;
    const sentUs = this.clock.nowUs();
    let res: Dispatcher.ResponseData;
    try {
      res = await this.dispatcher.request({
        origin: this.url.origin,
        path: this.url.pathname + this.url.search,
        method: 'POST',
        headers: opts.headers ? { ...this.headers, ...opts.headers } : this.headers,
        body: text,
        signal: opts.signal,
        headersTimeout: timeout,
        bodyTimeout: timeout,
      });
    } catch (err) {
      throw toTransportError(err, `POST ${this.url.href}`);
    }
    const headersUs = this.clock.nowUs();
    const headers = flatHeaders(res.headers);
    const reader = new BodyReader(this.clock, expectId, opts.onMessage);
    try {
      await reader.read(res, headers['content-type'] ?? '');
    } catch (err) {
      throw toTransportError(err, `reading the response of POST ${this.url.href}`);
    }
    const result = reader.result(res.statusCode, sentUs, headersUs, this.clock.nowUs());
    result.headers = headers;
    const sid = headers['mcp-session-id'];
    if (sid) result.sessionId = sid;
    return result;
  }

  /** DELETE the session (legacy era). Resolves with the HTTP status. */
  async deleteSession(headers: Record<string, string>, timeoutMs = this.timeoutMs): Promise<number> {
    try {
      const res = await this.dispatcher.request({
        origin: this.url.origin,
        path: this.url.pathname + this.url.search,
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

function isBareError(v: unknown): v is Record<string, unknown> {
  return isRecord(v) && !('id' in v) && isRecord(v.error) && typeof v.error.code === 'number';
}

function flatHeaders(h: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

/** Reads one response body (JSON or SSE) into messages, matching the response by id. */
class BodyReader {
  private response: JsonRpcResponse | undefined;
  private responseUs: number | undefined;
  private readonly messages: JsonRpcMessage[] = [];
  private readonly violations: ViolationKind[] = [];
  private readonly eventTimes: number[] = [];
  private contentType: CallResult['contentType'] = 'empty';

  constructor(
    private readonly clock: Clock,
    private readonly expectId: JsonRpcId | null,
    private readonly onMessage?: (m: JsonRpcMessage, t: number) => void,
  ) {}

  async read(res: Dispatcher.ResponseData, contentType: string): Promise<void> {
    if (contentType.startsWith('text/event-stream')) {
      this.contentType = 'sse';
      const decoder = new SseDecoder();
      for await (const chunk of res.body) this.onEvents(decoder.push(chunk as Buffer));
      this.onEvents(decoder.end());
      return;
    }
    const parts: Buffer[] = [];
    for await (const chunk of res.body) parts.push(chunk as Buffer);
    const body = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
    if (body.length === 0) return;
    const isJson = contentType.startsWith('application/json');
    this.contentType = isJson ? 'json' : 'other';
    const ok = this.onText(body.toString('utf8'), this.clock.nowUs(), res.statusCode < 400 || isJson);
    if (ok && !isJson && res.statusCode < 400) this.violations.push('bad_content_type');
  }

  private onEvents(events: { data: string }[]): void {
    for (const ev of events) {
      if (ev.data === '') continue; // priming event (2025-11-25) or keep-alive: not an MCP message
      const t = this.clock.nowUs();
      this.eventTimes.push(t);
      this.onText(ev.data, t, true);
    }
  }

  /** Parse one JSON text; returns false when it was not JSON. `report` decides whether that is a violation. */
  private onText(text: string, t: number, report: boolean): boolean {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      if (report) this.violations.push('bad_json');
      return false;
    }
    for (const v of Array.isArray(value) ? value : [value]) this.onValue(v, t);
    return true;
  }

  private onValue(v: unknown, t: number): void {
    let kind = classifyMessage(v);
    if (kind === 'malformed') {
      this.violations.push('not_jsonrpc');
      // An error object without `id` (some SDKs answer a bad session this way) is still an answer.
      if (!isBareError(v)) return;
      kind = 'response';
      v = { ...v, id: null };
    }
    const msg = v as JsonRpcMessage;
    this.onMessage?.(msg, t);
    if (kind === 'response' && this.response === undefined && this.matches(msg as JsonRpcResponse)) {
      this.response = msg as JsonRpcResponse;
      this.responseUs = t;
      return;
    }
    if (kind === 'response') this.violations.push('id_mismatch');
    this.messages.push(msg);
  }

  /** Same id verbatim; an error response may carry `null` when the server could not read the id. */
  private matches(r: JsonRpcResponse): boolean {
    if (this.expectId === null) return true;
    return r.id === this.expectId || (r.id === null && r.error !== undefined);
  }

  result(status: number, sentUs: number, headersUs: number, endUs: number): CallResult {
    if (this.response === undefined && this.expectId !== null && status < 400) this.violations.push('no_response');
    const r: CallResult = {
      messages: this.messages,
      httpStatus: status,
      contentType: this.contentType,
      violations: this.violations,
      timing: { sentUs, headersUs, endUs },
    };
    if (this.response) r.response = this.response;
    if (this.responseUs !== undefined) r.timing.responseUs = this.responseUs;
    if (this.eventTimes.length > 0) {
      r.timing.firstEventUs = this.eventTimes[0];
      r.timing.eventTimesUs = this.eventTimes;
    }
    return r;
  }
}
