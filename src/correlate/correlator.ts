/**
 * Correlates frames into exchanges. Sans-IO: frames in, events out; time only through the frames'
 * timestamps and explicit `tick(nowUs)` calls; never throws on any input.
 *
 * Invariants:
 * - The pending table is keyed by (connection, direction of the request, id verbatim).
 * - Each request yields exactly one ExchangeStarted and exactly one ExchangeCompleted.
 * - A response with no pending request becomes an ExchangeOrphaned (plus an anomaly), never an exception.
 * - `notifications/cancelled` marks its target; the exchange completes as `cancelled` when a late
 *   response arrives (flagged `responseAfterCancel`), when the grace period passes (`tick`), or at close.
 *   A response arriving after that is an orphan with a `response_after_cancel` anomaly.
 * - A server's `notifications/cancelled` for an id never seen in flight or completed (of the last
 *   `seenLimit`) raises `unknown_request_cancelled`. A client's is not flagged: on sessionless HTTP
 *   each socket is its own connection, so its cancel may travel apart from its request.
 */
import type { AnomalyKind, StreamEnd, TapEvent } from '../model/events.js';

export type { StreamEnd } from '../model/events.js';
import type { CancelAftermath, Exchange } from '../model/exchange.js';
import type { Direction, Frame, MessageFrame } from '../model/frame.js';
import { idKey, isRecord, type JsonRpcId, type JsonRpcNotification, type JsonRpcResponse } from '../model/jsonrpc.js';
import { paramsOf, progressTokenOf } from '../protocol/mcp.js';
import { finishWithout, finishWithResponse, newExchange, orphanExchange, type ConnectionEra } from './classify.js';

export interface CorrelatorOptions {
  /** How long a cancelled request may still be answered before it completes as cancelled. Default 2 s. */
  cancelGraceUs?: number;
  /** Cancelled exchanges remembered to recognise late responses. Default 10,000. */
  tombstoneLimit?: number;
  /** Completed requests remembered so that a late cancel of one is not taken for an unknown id. Default 10,000. */
  seenLimit?: number;
}

const other = (d: Direction): Direction => (d === 'c2s' ? 's2c' : 'c2s');

export class Correlator {
  private readonly pending = new Map<string, Exchange>();
  private readonly byExchangeKey = new Map<string, string>();
  private readonly progressTokens = new Map<string, string>();
  /**
   * `${connection}|${streamId}` -> key(s) of the exchanges whose request travelled on that stream:
   * the key itself while there is one (an HTTP POST carries one request, almost always), a Set
   * once there are two or more (a batch). Entries go only as a whole, at the stream's end.
   */
  private readonly streams = new Map<string, string | Set<string>>();
  private readonly conns = new Map<string, ConnectionEra>();
  private readonly tombstones = new Map<string, string>();
  private readonly operations = new Map<string, string>();
  /** Pending keys of completed requests, oldest first (bounded by `seenLimit`). */
  private readonly completed = new Set<string>();
  private seq = 0;
  private readonly graceUs: number;
  private readonly tombstoneLimit: number;
  private readonly seenLimit: number;

  constructor(opts: CorrelatorOptions = {}) {
    this.graceUs = opts.cancelGraceUs ?? 2_000_000;
    this.tombstoneLimit = opts.tombstoneLimit ?? 10_000;
    this.seenLimit = opts.seenLimit ?? 10_000;
  }

  /** Requests in flight. */
  get inFlight(): number {
    return this.pending.size;
  }

  connection(connectionId: string): ConnectionEra {
    let c = this.conns.get(connectionId);
    if (!c) {
      c = { era: 'unknown' };
      this.conns.set(connectionId, c);
    }
    return c;
  }

  push(frame: Frame, out: TapEvent[] = []): TapEvent[] {
    if (frame.kind === 'message') {
      switch (frame.messageKind) {
        case 'request':
          this.onRequest(frame, out);
          break;
        case 'response':
          this.onResponse(frame, out);
          break;
        case 'notification':
          this.onNotification(frame, out);
          break;
      }
      return out;
    }
    out.push({ type: 'frame', frame });
    if (frame.kind === 'invalid') {
      const kind: AnomalyKind =
        frame.reason === 'truncated_at_eof'
          ? 'truncated_at_eof'
          : frame.reason === 'too_long'
            ? 'line_too_long'
            : frame.channel === 'stdio' && frame.direction === 's2c' && frame.reason === 'not_json'
              ? 'stdout_pollution'
              : 'invalid_message';
      this.anomaly(out, kind, frame, frame.detail);
    }
    return out;
  }

  /** A stream (HTTP response) ended without answering some of its requests. */
  endStream(connectionId: string, streamId: string, end: StreamEnd, out: TapEvent[] = []): TapEvent[] {
    const sk = `${connectionId}|${streamId}`;
    const keys = this.streams.get(sk);
    if (keys === undefined) return out;
    this.streams.delete(sk);
    if (typeof keys === 'string') this.endOnStream(keys, end, out);
    else for (const key of keys) this.endOnStream(key, end, out);
    return out;
  }

  /** The stream of exchange `key` ended: it completes now unless it already did. */
  private endOnStream(key: string, end: StreamEnd, out: TapEvent[]): void {
    const pk = this.byExchangeKey.get(key);
    const ex = pk ? this.pending.get(pk) : undefined;
    if (!ex || !pk) return;
    const t = (ex.transport ??= {});
    if (end.httpStatus !== undefined) t.httpStatus = end.httpStatus;
    t.streamEndUs = end.timeUs;
    if (end.outcome === 'cancelled' && !ex.cancel) ex.cancel = { timeUs: end.timeUs, by: 'disconnect' };
    this.complete(pk, finishWithout(ex, ex.cancel ? 'cancelled' : end.outcome, end.timeUs, end.errorClass), out);
  }

  /** Time passes: cancelled requests past their grace period complete as cancelled. */
  tick(nowUs: number, out: TapEvent[] = []): TapEvent[] {
    for (const [pk, ex] of this.pending) {
      if (ex.cancel && nowUs - ex.cancel.timeUs >= this.graceUs) this.complete(pk, finishWithout(ex, 'cancelled', ex.cancel.timeUs), out);
    }
    return out;
  }

  /** The connection closed: whatever is still pending on it ends `unanswered` (or `cancelled`). */
  close(connectionId: string, timeUs: number, errorClass?: string, out: TapEvent[] = []): TapEvent[] {
    for (const [pk, ex] of this.pending) {
      if (ex.connectionId !== connectionId) continue;
      const outcome = ex.cancel ? 'cancelled' : 'unanswered';
      this.complete(pk, finishWithout(ex, outcome, ex.cancel?.timeUs ?? timeUs, outcome === 'unanswered' ? errorClass : undefined), out);
    }
    this.conns.delete(connectionId);
    // Nothing of a closed connection stays (a long-running tap sees connections come and go).
    const prefix = `${connectionId}|`;
    for (const m of [this.progressTokens, this.streams, this.operations]) for (const k of m.keys()) if (k.startsWith(prefix)) m.delete(k);
    for (const k of this.completed) if (k.startsWith(prefix)) this.completed.delete(k);
    return out;
  }

  private onRequest(frame: MessageFrame, out: TapEvent[]): void {
    const req = frame.message as { id: JsonRpcId; method: string };
    const pk = `${frame.connectionId}|${frame.direction}|${idKey(req.id)}`;
    const dup = this.pending.get(pk);
    if (dup) {
      this.anomaly(out, 'duplicate_id', frame, `id ${JSON.stringify(req.id)} reused while request ${dup.key} (${dup.method}) is in flight`, dup.key);
      this.complete(pk, finishWithout(dup, 'unanswered', frame.timeUs, 'superseded_by_duplicate_id'), out);
    }
    const conn = this.connection(frame.connectionId);
    const ex = newExchange(`${frame.connectionId}/${frame.direction}/${++this.seq}`, frame, conn);
    if (ex.era !== 'unknown' && conn.era === 'unknown') conn.era = ex.era;
    if (frame.context?.sessionId) conn.sessionId = frame.context.sessionId;
    this.linkOperation(ex);
    this.pending.set(pk, ex);
    this.byExchangeKey.set(ex.key, pk);
    const token = progressTokenOf(frame.message);
    if (token !== undefined) this.progressTokens.set(`${frame.connectionId}|${frame.direction}|${idKey(token)}`, ex.key);
    const streamId = frame.context?.streamId;
    if (streamId !== undefined) {
      const sk = `${frame.connectionId}|${streamId}`;
      const cur = this.streams.get(sk);
      if (cur === undefined) this.streams.set(sk, ex.key);
      else if (typeof cur === 'string') this.streams.set(sk, new Set([cur, ex.key]));
      else cur.add(ex.key);
    }
    out.push({ type: 'exchange-started', exchange: ex });
    out.push({ type: 'frame', frame, exchangeKey: ex.key });
  }

  private onResponse(frame: MessageFrame, out: TapEvent[]): void {
    const res = frame.message as JsonRpcResponse;
    const reqDir = other(frame.direction);
    let pk = res.id === null ? undefined : `${frame.connectionId}|${reqDir}|${idKey(res.id)}`;
    let ex = pk ? this.pending.get(pk) : undefined;
    if (!ex && res.id === null) {
      // An error with a null id on a request's own stream (an HTTP error body such as 400 "Server not
      // initialized", where the server did not echo the id) answers that request.
      const own = this.streamExchange(frame);
      if (own && own.direction === reqDir) {
        ex = own;
        pk = this.byExchangeKey.get(own.key);
      }
    }
    if (!ex || !pk) {
      const conn = this.connection(frame.connectionId);
      const orphan = orphanExchange(`${frame.connectionId}/${reqDir}/${++this.seq}`, frame, conn);
      out.push({ type: 'frame', frame, exchangeKey: orphan.key });
      out.push({ type: 'exchange-orphaned', exchange: orphan });
      const cancelledKey = pk ? this.tombstones.get(pk) : undefined;
      if (cancelledKey)
        this.anomaly(out, 'response_after_cancel', frame, `response to cancelled request ${cancelledKey} arrived after the grace period`, cancelledKey);
      else this.anomaly(out, 'orphan_response', frame, `response id ${JSON.stringify(res.id)} matches no request in flight`, orphan.key);
      return;
    }
    out.push({ type: 'frame', frame, exchangeKey: ex.key });
    // A response that came as an SSE event is one of its stream's events (the last).
    this.noteStreamEvent(frame, ex);
    finishWithResponse(ex, frame);
    if (ex.responseAfterCancel)
      this.anomaly(out, 'response_after_cancel', frame, `response to ${ex.method} id ${JSON.stringify(ex.id)} after it was cancelled`, ex.key);
    this.learnFromResult(ex);
    this.complete(pk, ex, out);
  }

  private onNotification(frame: MessageFrame, out: TapEvent[]): void {
    const n = frame.message as JsonRpcNotification;
    const params = paramsOf(n);
    let exchangeKey: string | undefined;
    if (n.method === 'notifications/progress' && params) {
      const token = params.progressToken;
      if (typeof token === 'string' || typeof token === 'number') {
        exchangeKey = this.progressTokens.get(`${frame.connectionId}|${other(frame.direction)}|${idKey(token)}`);
        const ex = exchangeKey ? this.pendingByKey(exchangeKey) : undefined;
        if (ex && typeof params.progress === 'number') {
          const point = {
            timeUs: frame.timeUs,
            progress: params.progress,
            ...(typeof params.total === 'number' ? { total: params.total } : {}),
            ...(typeof params.message === 'string' ? { message: params.message } : {}),
          };
          ex.progress.push(point);
          out.push({ type: 'frame', frame, exchangeKey });
          out.push({ type: 'exchange-progress', exchangeKey: ex.key, progress: point });
          this.noteStreamEvent(frame, ex);
          return;
        }
        this.anomaly(out, 'unknown_progress_token', frame, `progress for unknown token ${JSON.stringify(token)}`);
      }
    } else if (n.method === 'notifications/cancelled' && params) {
      const rid = params.requestId;
      if (typeof rid === 'string' || typeof rid === 'number') {
        const pk = `${frame.connectionId}|${frame.direction}|${idKey(rid)}`;
        const ex = this.pending.get(pk);
        if (ex && !ex.cancel) {
          ex.cancel = { timeUs: frame.timeUs, by: frame.direction, ...(typeof params.reason === 'string' ? { reason: params.reason } : {}) };
          exchangeKey = ex.key;
        } else if (!ex && frame.direction === 's2c' && !this.completed.has(pk)) {
          this.anomaly(out, 'unknown_request_cancelled', frame, unknownCancelDetail(rid, frame));
        }
      }
    } else {
      const ex = this.streamExchange(frame);
      if (ex) this.noteStreamEvent(frame, ex);
      exchangeKey = ex?.key;
    }
    out.push({ type: 'frame', frame, ...(exchangeKey ? { exchangeKey } : {}) });
  }

  /** SSE timing: every message on a request's stream is an event of that exchange, its response included. */
  private noteStreamEvent(frame: MessageFrame, ex: Exchange): void {
    if (frame.channel !== 'sse') return;
    const t = ex.transport ?? (ex.transport = {});
    if (t.firstEventUs === undefined) t.firstEventUs = frame.timeUs;
    (t.eventTimesUs ??= []).push(frame.timeUs);
  }

  private streamExchange(frame: MessageFrame): Exchange | undefined {
    const sid = frame.context?.streamId;
    if (sid === undefined) return undefined;
    const keys = this.streams.get(`${frame.connectionId}|${sid}`);
    // A stream of several requests (a Set) names no single exchange.
    return typeof keys === 'string' ? this.pendingByKey(keys) : undefined;
  }

  private pendingByKey(exchangeKey: string): Exchange | undefined {
    const pk = this.byExchangeKey.get(exchangeKey);
    return pk ? this.pending.get(pk) : undefined;
  }

  /** Learn the connection's era and version from handshake results; remember MRTR request states. */
  private learnFromResult(ex: Exchange): void {
    const result = (ex.response as JsonRpcResponse | undefined)?.result;
    if (!isRecord(result)) return;
    const conn = this.connection(ex.connectionId);
    if (ex.method === 'initialize' && typeof result.protocolVersion === 'string') {
      conn.era = 'legacy';
      conn.protocolVersion = result.protocolVersion;
      ex.protocolVersion = result.protocolVersion;
    }
    if (result.resultType === 'input_required' && typeof result.requestState === 'string') {
      this.operations.set(`${ex.connectionId}|${result.requestState}`, ex.operationKey ?? ex.key);
    }
  }

  private linkOperation(ex: Exchange): void {
    const state = paramsOf(ex.request)?.requestState;
    if (typeof state !== 'string') return;
    const op = this.operations.get(`${ex.connectionId}|${state}`);
    if (op) ex.operationKey = op;
  }

  private complete(pk: string, ex: Exchange, out: TapEvent[]): void {
    if (ex.cancel) (ex.transport ??= {}).afterCancel = aftermath(ex, ex.cancel);
    this.pending.delete(pk);
    this.byExchangeKey.delete(ex.key);
    this.completed.delete(pk); // re-added last: the set stays oldest first
    this.completed.add(pk);
    if (this.completed.size > this.seenLimit) this.completed.delete(this.completed.values().next().value as string);
    const token = progressTokenOf(ex.request);
    if (token !== undefined) this.progressTokens.delete(`${ex.connectionId}|${ex.direction}|${idKey(token)}`);
    if (ex.outcome === 'cancelled' && !ex.responseAfterCancel) {
      this.tombstones.set(pk, ex.key);
      if (this.tombstones.size > this.tombstoneLimit) this.tombstones.delete(this.tombstones.keys().next().value as string);
    }
    out.push({ type: 'exchange-completed', exchange: ex });
  }

  private anomaly(out: TapEvent[], kind: AnomalyKind, frame: Frame, detail: string, exchangeKey?: string): void {
    out.push({
      type: 'anomaly',
      kind,
      connectionId: frame.connectionId,
      direction: frame.direction,
      timeUs: frame.timeUs,
      detail,
      frameSeq: frame.seq,
      ...(exchangeKey ? { exchangeKey } : {}),
    });
  }
}

/** The anomaly's detail: the likely cause, which on HTTP is the GET-stream race. */
function unknownCancelDetail(rid: JsonRpcId, frame: MessageFrame): string {
  const head = `cancellation of request id ${JSON.stringify(rid)} that the tap never saw`;
  if (frame.channel === 'stdio') return `${head}: the server cancelled a request it never sent on this connection`;
  return (
    `${head}: a server request sent before the client's standalone GET stream reached the server is dropped ` +
    'by the SDK\'s transport (the GET-stream race; see the README, "When a run through the tap flakes")'
  );
}

/** What the server did after `cancel` on this exchange's stream (see CancelAftermath). */
function aftermath(ex: Exchange, cancel: NonNullable<Exchange['cancel']>): CancelAftermath {
  const c = cancel.timeUs;
  const t = ex.transport;
  const progress = ex.progress.filter((p) => p.timeUs > c);
  const events = (t?.eventTimesUs ?? []).filter((u) => u > c);
  const responseUs = ex.responseAfterCancel && ex.endUs !== undefined ? ex.endUs : undefined;
  const last = Math.max(c, progress.at(-1)?.timeUs ?? c, events.at(-1) ?? c, responseUs ?? c);
  const a: CancelAftermath = {
    mechanism: cancel.by === 'disconnect' ? 'stream_closed' : 'notification',
    progressAfter: progress.length,
    eventsAfter: events.length,
    workAfterUs: last - c,
  };
  if (t?.streamEndUs !== undefined && t.streamEndUs >= c) a.streamEndAfterUs = t.streamEndUs - c;
  return a;
}
