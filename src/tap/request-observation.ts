/**
 * The side path of one HTTP request through the tap: collects the request body, decodes the
 * response (one JSON body, or SSE events as they arrive), pushes messages into the pipeline with
 * their stream context and times, and ends the stream with the right outcome. Never touches the
 * forwarded bytes; nothing is pushed before the bytes it describes were forwarded (`requestBody`
 * only notes a body about to go out). The forwarder calls `responseStart` of a plain (non-SSE)
 * response late, after forwarding its first chunk or all of it; the times it passes are those
 * it read when the bytes arrived.
 *
 * Timing: the request frame is stamped when its body was fully received (a body that came in the
 * same read as the headers: when the request arrived); response frames carry the time the response
 * headers arrived; each SSE event is stamped when the chunk completing it arrived; a JSON body
 * when it ended.
 *
 * Invariant: `finish` runs exactly once; after it nothing is pushed for this request.
 */
import type { IncomingMessage } from 'node:http';
import type { FrameContext } from '../model/frame.js';
import type { JsonRpcId } from '../model/jsonrpc.js';
import { SseDecoder, type SseEvent } from '../parse/sse-decoder.js';
import { H_METHOD, H_PROTOCOL_VERSION, H_SESSION_ID } from '../protocol/headers.js';
import type { AnomalyKind, LongStreamKind, StreamEnd } from '../model/events.js';
import type { FrameOrigin } from '../model/frame.js';
import type { PipelineInput } from '../pipeline/pipeline-input.js';
import type { Clock } from '../util/clock.js';
import { httpErrorClass } from './upstream-failure.js';

const enum Body {
  None,
  Json,
  Sse,
  Other,
}

/** How the response ended, as the forwarder saw it. */
export type EndKind = { kind: 'complete' } | { kind: 'cancelled' } | { kind: 'failed'; errorClass: string };

const COMPLETE: EndKind = { kind: 'complete' };
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const LISTEN = 'subscriptions/listen';

/** What an observation needs of the tap's connection-level observer (http-observer.ts implements it). */
export interface ObservationHost {
  readonly pipeline: PipelineInput;
  readonly clock: Clock;
  readonly maxRecordBytes: number;
  readonly maxRecordResponseBytes: number;
  useSession(sessionId: string, timeUs: number, req: IncomingMessage): string;
  socketConnection(req: IncomingMessage, timeUs: number): string;
  hold(sessionId: string, streamId: string): void;
  endSession(sessionId: string, reason: string, timeUs: number, end?: StreamEnd): void;
  pushRequest(origin: FrameOrigin, raw: Buffer, headers: IncomingMessage['headers']): void;
  anomaly(kind: AnomalyKind, connectionId: string, detail: string, timeUs: number): void;
  contextHeaders(req: IncomingMessage): Record<string, string>;
}

export class RequestObservation {
  private readonly streamId: string;
  private connectionId: string | undefined;
  private sessionId: string | undefined;
  /** A POST of the deprecated HTTP+SSE transport: its answers arrive on the session's GET stream. */
  private legacyPost = false;
  /** This stream announced a legacy HTTP+SSE session (`event: endpoint`). */
  private legacyStreamOf: string | undefined;
  private parts: Buffer[] = [];
  private bytes = 0;
  private tooBig = false;
  private raw: Buffer | undefined;
  private bodyEndUs: number | undefined;
  private requestPushed = false;
  private status = 0;
  private headersUs = 0;
  private body: Body = Body.None;
  private respParts: Buffer[] | undefined;
  private respBytes = 0;
  private sse: SseDecoder | undefined;
  private resumable = false;
  private finished = false;
  /** A long-lived stream (standalone GET, `subscriptions/listen`): its kind, and whether the pipeline was told it opened. */
  private longKind: LongStreamKind | undefined;
  private longOpen = false;

  constructor(
    private readonly obs: ObservationHost,
    private readonly req: IncomingMessage,
    n: number,
    readonly startUs: number,
  ) {
    this.streamId = String(n);
    const sid = one(req.headers[H_SESSION_ID]);
    if (sid) {
      this.sessionId = sid;
      this.connectionId = obs.useSession(sid, startUs, req);
      return;
    }
    const url = req.url ?? '';
    const q = url.indexOf('?');
    if (q !== -1 && url.includes('sessionId=', q)) {
      const legacy = new URLSearchParams(url.slice(q + 1)).get('sessionId');
      if (legacy) {
        this.sessionId = legacy;
        this.legacyPost = req.method === 'POST';
        this.connectionId = obs.useSession(legacy, startUs, req);
      }
    }
  }

  requestChunk(chunk: Buffer): void {
    if (this.tooBig) return;
    if (this.bytes + chunk.length > this.obs.maxRecordBytes) {
      this.tooBig = true;
      this.parts = [];
      return;
    }
    this.parts.push(chunk);
    this.bytes += chunk.length;
  }

  requestEnd(timeUs: number): void {
    this.bodyEndUs = timeUs;
    if (this.connectionId !== undefined) this.pushRequest();
  }

  /**
   * A body that arrived whole, noted before it is forwarded (so that a failure while forwarding
   * still answers with its id and records it); pushed by {@link requestForwarded}.
   */
  requestBody(raw: Buffer, timeUs: number): void {
    if (raw.length > 0) this.requestChunk(raw);
    this.bodyEndUs = timeUs;
  }

  /** The body noted by {@link requestBody} went upstream: push it now if its connection is known. */
  requestForwarded(): void {
    if (!this.finished && this.connectionId !== undefined) this.pushRequest();
  }

  responseStart(status: number, headers: Record<string, string | string[] | undefined>, timeUs: number): void {
    this.status = status;
    this.headersUs = timeUs;
    const ct = one(headers['content-type']) ?? '';
    this.body = ct.startsWith('text/event-stream')
      ? Body.Sse
      : ct.startsWith('application/json')
        ? Body.Json
        : status === 202 || status === 204
          ? Body.None
          : Body.Other;
    if (this.body === Body.Sse) {
      this.sse = new SseDecoder();
      if (status >= 200 && status < 300) this.longKind = this.req.method === 'GET' ? 'get' : this.isListen() ? 'listen' : undefined;
    }
    // A plain body answers the POSTed message; bodies of GET/DELETE/OPTIONS carry no exchange.
    else if (this.body !== Body.None && this.req.method === 'POST') this.respParts = [];
    if (this.connectionId === undefined) {
      const sid = one(headers[H_SESSION_ID]);
      if (sid) {
        this.sessionId = sid;
        this.connectionId = this.obs.useSession(sid, timeUs, this.req);
      } else if (this.bytes > 0) {
        // A session-less GET answered with SSE waits for its first event: it may announce a legacy session.
        this.useSocketConnection(timeUs);
      }
    }
    if (this.connectionId !== undefined) this.pushRequest();
    this.openLong(timeUs);
  }

  /** A chunk of the response body; `timeUs` (when it arrived) is needed for SSE, read from the clock when absent. */
  responseChunk(chunk: Buffer, timeUs?: number): void {
    if (this.finished) return;
    if (this.sse) {
      const t = timeUs ?? this.obs.clock.nowUs();
      const events = this.sse.push(chunk);
      for (let i = 0; i < events.length; i++) this.onEvent(events[i]!, t);
    } else if (this.respParts) {
      if (this.respBytes + chunk.length > this.obs.maxRecordResponseBytes) {
        this.respParts = undefined;
        const t = timeUs ?? this.obs.clock.nowUs();
        this.obs.anomaly(
          'invalid_message',
          this.connectionId ?? this.obs.socketConnection(this.req, t),
          `response body over ${this.obs.maxRecordResponseBytes} bytes: forwarded, not recorded`,
          t,
        );
        return;
      }
      this.respParts.push(chunk);
      this.respBytes += chunk.length;
    }
  }

  /** The response body ended normally. */
  responseEnd(timeUs: number): void {
    if (this.finished) return;
    if (this.sse) for (const ev of this.sse.end()) this.onEvent(ev, timeUs);
    else if (this.respParts && this.respBytes > 0) this.pushResponseBody(timeUs);
    this.finish(timeUs, COMPLETE);
  }

  /** The exchange ended: normally, by client disconnect, or by an upstream failure. Idempotent. */
  finish(timeUs: number, how: EndKind): void {
    if (this.finished) return;
    this.finished = true;
    if (this.longOpen) this.obs.pipeline.longStream(this.connectionId!, this.streamId, { state: 'closed', kind: this.longKind!, timeUs });
    // No message, so no exchange to end with the error class (a GET stream): the recording needs
    // it said. A tap that closes cuts its GET streams by design: not a failure of the upstream.
    if (how.kind === 'failed' && this.bytes === 0 && how.errorClass !== 'tap_closed') this.recordUpstreamFailure(how.errorClass, timeUs);
    if (this.connectionId === undefined) {
      if (this.bytes === 0 || this.bodyEndUs === undefined) return;
      this.useSocketConnection(timeUs);
    }
    const cid = this.connectionId!;
    this.pushRequest();
    const status = this.status > 0 ? this.status : undefined;
    let end: StreamEnd | undefined;
    if (how.kind === 'cancelled') end = { outcome: 'cancelled', timeUs, ...(status ? { httpStatus: status } : {}) };
    else if (how.kind === 'failed') end = { outcome: 'transport_error', errorClass: how.errorClass, timeUs, ...(status ? { httpStatus: status } : {}) };
    else if (this.status >= 400) end = { outcome: 'transport_error', errorClass: httpErrorClass(this.status), httpStatus: this.status, timeUs };
    else if (this.sessionId !== undefined && (this.legacyPost || (this.resumable && this.legacyStreamOf === undefined)))
      this.obs.hold(this.sessionId, this.streamId);
    else end = { outcome: 'transport_error', errorClass: 'stream_ended_without_response', httpStatus: this.status, timeUs };
    if (end) this.obs.pipeline.endStream(cid, this.streamId, end);
    this.endSessionIfOver(timeUs, end);
  }

  /** The tap refused the request itself (body over --max-body): an anomaly, and nothing else is recorded. */
  recordRejection(detail: string, timeUs: number): void {
    if (this.finished) return;
    this.finished = true;
    this.parts = [];
    this.obs.anomaly('invalid_message', this.connectionId ?? this.obs.socketConnection(this.req, timeUs), detail, timeUs);
  }

  /** A request without a message failed upstream: an anomaly with its method, path (no query: it may hold a token) and error class. */
  private recordUpstreamFailure(errorClass: string, timeUs: number): void {
    const url = this.req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const answered = this.status > 0 ? `after a ${this.status} response began` : 'before answering';
    this.obs.anomaly(
      'upstream_failed',
      this.connectionId ?? this.obs.socketConnection(this.req, timeUs),
      `${this.req.method ?? 'GET'} ${path}: upstream ${errorClass} ${answered}`,
      timeUs,
    );
  }

  /** The request's JSON-RPC id, for the tap's own error answers (parses the body; error path only). */
  requestId(): JsonRpcId | null {
    const raw = this.raw ?? (this.parts.length > 0 ? Buffer.concat(this.parts) : undefined);
    if (!raw) return null;
    try {
      const v = JSON.parse(raw.toString('utf8')) as { id?: unknown };
      return typeof v?.id === 'string' || typeof v?.id === 'number' ? v.id : null;
    } catch {
      return null;
    }
  }

  private endSessionIfOver(timeUs: number, end: StreamEnd | undefined): void {
    if (this.legacyStreamOf !== undefined) {
      this.obs.endSession(this.legacyStreamOf, 'sse_stream_closed', timeUs, end ?? { outcome: 'transport_error', errorClass: 'sse_stream_closed', timeUs });
    } else if (this.sessionId !== undefined && !this.legacyPost) {
      if (this.req.method === 'DELETE' && this.status >= 200 && this.status < 300) this.obs.endSession(this.sessionId, 'session_deleted', timeUs);
      else if (this.status === 404) this.obs.endSession(this.sessionId, 'session_not_found', timeUs);
    }
  }

  /** Tells the pipeline a long-lived stream opened, once its connection is known. */
  private openLong(timeUs: number): void {
    if (this.longKind === undefined || this.longOpen || this.connectionId === undefined) return;
    this.longOpen = true;
    this.obs.pipeline.longStream(this.connectionId, this.streamId, { state: 'opened', kind: this.longKind, timeUs });
  }

  /** A POST of `subscriptions/listen`: its Mcp-Method header says so, or (a client without it) its body. */
  private isListen(): boolean {
    if (this.req.method !== 'POST') return false;
    const header = one(this.req.headers[H_METHOD]);
    if (header !== undefined) return header === LISTEN;
    const raw = this.raw ?? (this.parts.length > 0 ? Buffer.concat(this.parts) : undefined);
    if (!raw || raw.indexOf(LISTEN) === -1) return false;
    try {
      return (JSON.parse(raw.toString('utf8')) as { method?: unknown })?.method === LISTEN;
    } catch {
      return false;
    }
  }

  private useSocketConnection(timeUs: number): void {
    this.connectionId = this.obs.socketConnection(this.req, timeUs);
  }

  private pushRequest(): void {
    if (this.requestPushed || this.bodyEndUs === undefined || this.connectionId === undefined) return;
    this.requestPushed = true;
    if (this.bytes === 0 || this.tooBig) return;
    const raw = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.bytes);
    this.raw = raw;
    this.parts = [];
    const context: FrameContext = { streamId: this.streamId, headers: this.obs.contextHeaders(this.req) };
    if (this.sessionId !== undefined) context.sessionId = this.sessionId;
    const hv = one(this.req.headers[H_PROTOCOL_VERSION]);
    if (hv !== undefined) context.headerProtocolVersion = hv;
    this.obs.pushRequest({ connectionId: this.connectionId, direction: 'c2s', channel: 'http-body', timeUs: this.bodyEndUs, context }, raw, this.req.headers);
  }

  private onEvent(ev: SseEvent, timeUs: number): void {
    if (ev.id !== undefined) this.resumable = true;
    if (ev.event === 'endpoint') {
      this.onEndpoint(ev.data, timeUs);
      this.openLong(timeUs);
      return;
    }
    if (ev.data === '' || (ev.event !== undefined && ev.event !== 'message')) return;
    if (this.connectionId === undefined) {
      this.useSocketConnection(timeUs);
      this.openLong(timeUs);
    }
    const context = this.responseContext();
    if (ev.id !== undefined) context.sseEventId = ev.id;
    if (ev.event !== undefined) context.sseEventName = ev.event;
    this.obs.pipeline.pushMessage({ connectionId: this.connectionId!, direction: 's2c', channel: 'sse', timeUs, context }, Buffer.from(ev.data, 'utf8'));
  }

  /** The deprecated HTTP+SSE transport: this GET stream belongs to the session its endpoint names. */
  private onEndpoint(data: string, timeUs: number): void {
    if (this.connectionId !== undefined) return;
    let sid: string | null = null;
    try {
      sid = new URL(data, 'http://endpoint.invalid').searchParams.get('sessionId');
    } catch {
      sid = null;
    }
    if (!sid) {
      this.useSocketConnection(timeUs);
      return;
    }
    this.sessionId = sid;
    this.legacyStreamOf = sid;
    this.connectionId = this.obs.useSession(sid, timeUs, this.req);
  }

  private pushResponseBody(timeUs: number): void {
    const parts = this.respParts!;
    const raw = parts.length === 1 ? parts[0]! : Buffer.concat(parts, this.respBytes);
    this.respParts = undefined;
    if (this.body === Body.Other && !looksLikeJson(raw)) return;
    if (this.connectionId === undefined) this.useSocketConnection(timeUs);
    const context = this.responseContext();
    context.streamEndUs = timeUs;
    this.obs.pipeline.pushMessage({ connectionId: this.connectionId!, direction: 's2c', channel: 'http-body', timeUs, context }, raw);
  }

  private responseContext(): FrameContext {
    const context: FrameContext = { streamId: this.streamId, httpStatus: this.status, responseHeadersUs: this.headersUs };
    if (this.sessionId !== undefined) context.sessionId = this.sessionId;
    return context;
  }
}

function one(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

function looksLikeJson(raw: Buffer): boolean {
  for (let i = 0; i < raw.length && i < 64; i++) {
    const b = raw[i]!;
    if (b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d) continue;
    return b === OPEN_BRACE || b === OPEN_BRACKET;
  }
  return false;
}
