/**
 * What the mock serves, from a recording: every answered client-to-server request with the
 * notifications the server sent for it (progress, and on HTTP every event of its SSE stream) and
 * the response, each timed from the request. Read all at once ({@link readRecordedAnswers}), or
 * indexed by key and read on demand ({@link indexRecordedAnswers}) so that a recording of millions
 * of exchanges is served in bounded memory.
 */
import type { Era } from '../model/exchange.js';
import type { JsonRpcNotification, JsonRpcResponse } from '../model/jsonrpc.js';
import type { RecordingStore } from '../store/recording-store.js';
import type { StoredExchange } from '../store/types.js';
import { McptapError } from '../errors.js';
import { recordedRequest, requestKey, type MatchSource, type RecordedRequest } from '../replay/mock-matcher.js';
import type { MatchRules } from '../replay/rules.js';

export interface RecordedMessage<M> {
  /** Microseconds after the request was seen. */
  afterUs: number;
  message: M;
}

export interface RecordedAnswer {
  /** The exchange in the recording (`show --exchange KEY`). */
  exchangeKey: string;
  method: string;
  params?: unknown;
  era: Era;
  notifications: RecordedMessage<JsonRpcNotification>[];
  response: RecordedMessage<JsonRpcResponse>;
  /** The response came as an SSE event (HTTP); a plain JSON body otherwise. */
  overSse: boolean;
}

/** Requests answered by the handshake rather than by key: every client sends its own capabilities and clientInfo. */
export const HANDSHAKES: ReadonlySet<string> = new Set(['initialize', 'server/discover']);

/** A recorded client request that got no response: the client cancelled it, or the recording ended first. */
export interface UnansweredRequest {
  exchangeKey: string;
  method: string;
  params?: unknown;
  cancelled: boolean;
  /** What the server sent for it before the end (progress), timed from the request. */
  notifications: RecordedMessage<JsonRpcNotification>[];
}

export interface RecordedAnswers {
  answers: RecordedAnswer[];
  /** Exchanges left out: still in flight, cancelled or unanswered when the recording ended. */
  unanswered: number;
  /** Those requests, told apart from unknown ones by the mock. */
  unansweredRequests?: UnansweredRequest[];
}

/**
 * Reads the answered client requests of the given recordings (each in start order, the recordings
 * in the order given). MCPTAP_MOCK_NO_EXCHANGES when there are none.
 */
export function readRecordedAnswers(store: RecordingStore, recordingIds: readonly number[], label: string): RecordedAnswers {
  const answers: RecordedAnswer[] = [];
  const unansweredRequests: UnansweredRequest[] = [];
  for (const ex of answeredRequests(store, recordingIds, (u) => unansweredRequests.push(unansweredOf(u, store)))) answers.push(answerOf(ex, store));
  if (answers.length === 0) throw noAnswers(recordingIds, label, unansweredRequests.length);
  return { answers, unanswered: unansweredRequests.length, unansweredRequests };
}

/** The answered client requests of the recordings, streamed; `onUnanswered` counts the others. */
function* answeredRequests(
  store: RecordingStore,
  recordingIds: readonly number[],
  onUnanswered: (ex: StoredExchange) => void = () => {},
  method?: string,
): Generator<StoredExchange> {
  for (const recordingId of recordingIds) {
    for (const ex of store.iterateExchanges({ recordingId, ...(method !== undefined ? { method } : {}) })) {
      if (ex.direction !== 'c2s') continue;
      if (ex.response === undefined || ex.state !== 'completed') onUnanswered(ex);
      else yield ex;
    }
  }
}

function noAnswers(recordingIds: readonly number[], label: string, unanswered: number): McptapError {
  return new McptapError(
    'MCPTAP_MOCK_NO_EXCHANGES',
    `${label}${recordingIds.length === 1 ? ` (recording ${recordingIds[0]})` : ''} holds no answered requests to serve${unanswered ? ` (${unanswered} never got a response)` : ''}. ` +
      'Record a session first, e.g. mcptap stdio --record FILE -- <server command>, and let the client make some calls.',
  );
}

/** The recorded answers as an index over the open recording: what {@link MockResponder} needs, read on demand. */
export interface AnswerIndex {
  /** Answered requests in the recordings (what the mock serves). */
  count: number;
  unanswered: number;
  unansweredRequests: UnansweredRequest[];
  /** The first recorded answer of each of {@link HANDSHAKES}. */
  handshakes: ReadonlyMap<string, RecordedAnswer>;
  source: MatchSource<RecordedAnswer>;
}

/**
 * Indexes the answered client requests of the recordings by key (after `rules`, as the matcher
 * computes it): 8 bytes per request (a 32-bit hash of its key and its position) plus its row id,
 * sorted once; a request's answers are read from the store when asked. The store must stay open.
 */
export function indexRecordedAnswers(store: RecordingStore, recordingIds: readonly number[], label: string, rules: MatchRules): AnswerIndex {
  const handshakes = new Map<string, RecordedAnswer>();
  const rowids: number[] = [];
  let entries: BigUint64Array = new BigUint64Array(1024);
  const unansweredRequests: UnansweredRequest[] = [];
  let count = 0;
  for (const ex of answeredRequests(store, recordingIds, (u) => unansweredRequests.push(unansweredOf(u, store)))) {
    count++;
    if (HANDSHAKES.has(ex.method)) {
      if (!handshakes.has(ex.method)) handshakes.set(ex.method, answerOf(ex, store));
      continue;
    }
    if (rowids.length === entries.length) entries = grow(entries);
    entries[rowids.length] = (BigInt(keyHash(requestKey(rules, ex.method, paramsOf(ex)))) << 32n) | BigInt(rowids.length);
    rowids.push(ex.rowid);
  }
  if (count === 0) throw noAnswers(recordingIds, label, unansweredRequests.length);
  const sorted = entries.slice(0, rowids.length).sort();
  return { count, unanswered: unansweredRequests.length, unansweredRequests, handshakes, source: new StoreSource(store, recordingIds, rules, sorted, rowids) };
}

const paramsOf = (ex: StoredExchange): unknown => (ex.request as { params?: unknown }).params;

function unansweredOf(ex: StoredExchange, store: RecordingStore): UnansweredRequest {
  const params = paramsOf(ex);
  const { notifications } = answerOf(ex, store);
  return { exchangeKey: ex.key, method: ex.method, ...(params !== undefined ? { params } : {}), cancelled: ex.outcome === 'cancelled', notifications };
}

function grow(a: BigUint64Array): BigUint64Array {
  const b = new BigUint64Array(a.length * 2);
  b.set(a);
  return b;
}

/** 32-bit FNV-1a of a string's UTF-16 code units: a bucket, never trusted alone (keys are compared). */
export function keyHash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

class StoreSource implements MatchSource<RecordedAnswer> {
  /** Key -> the row ids of its answers, in recorded order: resolved once per key asked. */
  private readonly resolved = new Map<string, number[]>();

  constructor(
    private readonly store: RecordingStore,
    private readonly recordingIds: readonly number[],
    private readonly rules: MatchRules,
    /** `hash << 32 | position`, ascending. */
    private readonly entries: BigUint64Array,
    /** Position -> row id. */
    private readonly rowids: readonly number[],
  ) {}

  count(key: string): number {
    return this.rows(key).length;
  }

  answer(key: string, index: number): RecordedAnswer {
    return answerOf(this.store.exchangeAt(this.rows(key)[index]!)!, this.store);
  }

  /** Each answered request of `method` (repeats of a key included: the matcher keeps the first of equals). */
  *requests(method: string): Iterable<RecordedRequest> {
    for (const ex of answeredRequests(this.store, this.recordingIds, undefined, method)) {
      if (!HANDSHAKES.has(ex.method)) yield recordedRequest(this.rules, ex.method, paramsOf(ex));
    }
  }

  /** The rows of the key's hash bucket whose own key is `key` (a hash collision is told apart here). */
  private rows(key: string): number[] {
    let rows = this.resolved.get(key);
    if (rows) return rows;
    const h = BigInt(keyHash(key));
    rows = [];
    for (let i = lowerBound(this.entries, h << 32n); i < this.entries.length && this.entries[i]! >> 32n === h; i++) {
      const rowid = this.rowids[Number(this.entries[i]! & 0xffffffffn)]!;
      const ex = this.store.exchangeAt(rowid)!;
      if (requestKey(this.rules, ex.method, paramsOf(ex)) === key) rows.push(rowid);
    }
    if (rows.length > 0) this.resolved.set(key, rows);
    return rows;
  }
}

function lowerBound(a: BigUint64Array, v: bigint): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid]! < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function answerOf(ex: StoredExchange, store: RecordingStore): RecordedAnswer {
  const frames = store.framesOfExchange(ex.recordingId, ex.key);
  const requestUs = frames.find((f) => f.seq === ex.requestSeq)?.timeUs ?? ex.startUs;
  const after = (t: number) => Math.max(0, t - requestUs);
  const notifications: RecordedMessage<JsonRpcNotification>[] = [];
  let overSse = false;
  let responseUs = ex.endUs ?? requestUs;
  for (const f of frames) {
    if (f.kind !== 'message' || f.direction !== 's2c') continue;
    if (f.messageKind === 'notification') notifications.push({ afterUs: after(f.timeUs), message: f.message as JsonRpcNotification });
    else if (f.seq === ex.responseSeq) ((overSse = f.channel === 'sse'), (responseUs = f.timeUs));
  }
  const params = paramsOf(ex);
  return {
    exchangeKey: ex.key,
    method: ex.method,
    ...(params !== undefined ? { params } : {}),
    era: ex.era,
    notifications,
    // An unanswered exchange has none: only its notifications are read from this.
    response: { afterUs: after(responseUs), message: ex.response as JsonRpcResponse },
    overSse,
  };
}
