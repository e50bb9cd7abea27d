/**
 * Builds batches of row values from recorder events, one event at a time, ready for
 * RecordingStore.writeBatch.
 *
 * Each event is encoded when it arrives, so a batch holds row values and raw bytes, not the
 * events: the parsed messages a tap produces die young instead of being kept (and copied by the
 * garbage collector) until the batch is written.
 *
 * What it decides, because only here the live objects are at hand:
 * - redaction: everything written passes through the redactor first;
 * - an exchange's request/response is stored once, as a reference to its frame, when it IS that
 *   frame's message (same object) and the frame is adjacent in the stream and in the same batch
 *   (the correlator emits `exchange-started` right before the request frame, and the response
 *   frame right before the completion); anything else (an orphan's made-up request, hand-made
 *   events, a batch closed in between) keeps its own copy;
 * - a started event whose completion comes in the same batch becomes one row with it.
 */
import type { AnomalySeen, ConnectionOpened, TapEvent } from '../model/events.js';
import type { Exchange } from '../model/exchange.js';
import type { Frame } from '../model/frame.js';
import type { Redactor } from '../redact/redactor.js';
import * as x from './exchange-rows.js';
import type { Value } from './row-helpers.js';
import * as rows from './rows.js';
import type { ExchangeState } from './types.js';

/**
 * Row tags, one character per row: `f` frame, `x` exchange (one event), `X` exchange start and
 * completion in one row (two events), `p` progress, `a` anomaly, `o` connection opened, `c` closed.
 */
export type RowTag = 'f' | 'x' | 'X' | 'p' | 'a' | 'o' | 'c';

export interface EncodedBatch {
  recordingId: number;
  /** One {@link RowTag} per row. */
  tags: string;
  /** Values per row in the column order of rows.ts / exchange-rows.ts. */
  rows: Value[][];
}

export interface SealedBatch {
  batch: EncodedBatch;
  /** Events in the batch (a merged exchange row counts two). */
  events: number;
}

export interface EventBatchEncoderOptions {
  recordingId: number;
  redactor?: Redactor;
}

/** Past this many remembered starts the memory is dropped: completions then carry their request again. */
const MAX_REMEMBERED_STARTS = 100_000;
/** Message frames remembered for matching a completion to its response frame (they are adjacent). */
const RECENT_FRAMES = 8;

export class EventBatchEncoder {
  private values: Value[][] = [];
  private tags: string[] = [];
  private count = 0;
  /** Exchange key -> index of its started row in this batch (a completion merges into it). */
  private startedAt = new Map<string, number>();
  /** Indexes of every started row in this batch: those still alone at the end get their `started_json`. */
  private starts: number[] = [];
  /** A started row whose request frame has not been seen yet (it comes next). */
  private pending: { row: Value[]; seq: number; message: unknown } | undefined;
  /** The last few message frames, with the batch they went into (a reference must stay within its batch). */
  private readonly recent: { seq: number; message: unknown; batch: number }[] = [];
  private batchNo = 0;
  /** Exchanges whose start row went out in an earlier batch: their completion leaves the request as written. */
  private readonly startedEarlier = new Set<string>();

  private readonly startedJson = x.memoStartedJson();

  constructor(private readonly opts: EventBatchEncoderOptions) {}

  /** Events in the open batch. */
  get size(): number {
    return this.count;
  }

  /** Encodes one event into the open batch. Throws (a TypeError) on a malformed event, adding nothing. */
  add(ord: number, e: TapEvent): void {
    const r = this.opts.redactor;
    // A started row's request frame is the very next event, or it is not coming.
    if (e?.type !== 'frame') this.settlePending();
    switch (e?.type) {
      case 'frame':
        return this.addFrame(ord, r ? redactFrame(r, e.frame) : e.frame, e.frame, e.exchangeKey);
      case 'exchange-started':
        return this.addStarted(ord, e.exchange);
      case 'exchange-completed':
      case 'exchange-orphaned':
        return this.addEnd(ord, e.exchange, e.type === 'exchange-completed' ? 'completed' : 'orphaned');
      case 'exchange-progress':
        return this.push('p', rows.progressValues(this.opts.recordingId, ord, e));
      case 'anomaly':
        return this.push('a', rows.anomalyValues(this.opts.recordingId, ord, r ? redactAnomaly(r, e) : e));
      case 'connection-opened':
        return this.push('o', rows.openedValues(this.opts.recordingId, ord, r ? redactOpened(r, e) : e));
      case 'connection-closed':
        return this.push('c', rows.closedValues(this.opts.recordingId, ord, e));
      default:
        throw new TypeError(`unknown event type ${JSON.stringify((e as { type?: unknown } | null)?.type)}`);
    }
  }

  /** Closes the open batch and returns it (undefined when empty); the next `add` starts a new one. */
  seal(): SealedBatch | undefined {
    this.settlePending();
    if (this.values.length === 0) return undefined;
    // A start that goes out without its completion (which may change the row) saves its fields as they were.
    for (const at of this.starts) if (this.tags[at] === 'x') this.values[at]![x.EXCHANGE_STARTED_JSON] = this.startedJson(this.values[at]!);
    for (const key of this.startedAt.keys()) {
      if (this.startedEarlier.size >= MAX_REMEMBERED_STARTS) this.startedEarlier.clear();
      this.startedEarlier.add(key);
    }
    const batch: EncodedBatch = { recordingId: this.opts.recordingId, tags: this.tags.join(''), rows: this.values };
    const sealed = { batch, events: this.count };
    this.values = [];
    this.tags = [];
    this.count = 0;
    this.startedAt = new Map();
    this.starts = [];
    this.batchNo++;
    return sealed;
  }

  private addFrame(ord: number, f: Frame, original: Frame, exchangeKey: string | undefined): void {
    const v = rows.frameValues(this.opts.recordingId, ord, f, exchangeKey);
    const raw = v[rows.FRAME_RAW];
    if (!(raw instanceof Uint8Array)) throw new TypeError('frame without raw bytes');
    const p = this.pending;
    if (p && p.seq === original.seq && original.kind === 'message' && original.message === p.message) {
      x.setRequestSource(p.row, { frameSeq: original.seq });
      this.pending = undefined;
    }
    this.settlePending();
    this.push('f', v);
    if (original.kind === 'message') {
      if (this.recent.length >= RECENT_FRAMES) this.recent.shift();
      this.recent.push({ seq: original.seq, message: original.message, batch: this.batchNo });
    }
  }

  private addStarted(ord: number, ex: Exchange): void {
    if (typeof ex?.key !== 'string') throw new TypeError('exchange without a key');
    const fromRecent = this.recentSource(ex.request, ex.requestSeq);
    const v = x.exchangeValues(this.opts.recordingId, ord, ex, 'started', fromRecent ?? 'keep', 'none');
    this.push('x', v);
    this.startedAt.set(ex.key, this.values.length - 1);
    this.starts.push(this.values.length - 1);
    // Its request frame is the next event: decided there (or, failing that, a copy of its own).
    if (!fromRecent) this.pending = { row: v, seq: ex.requestSeq, message: ex.request };
  }

  private addEnd(ord: number, ex: Exchange, state: ExchangeState): void {
    if (typeof ex?.key !== 'string') throw new TypeError('exchange without a key');
    const at = this.startedAt.get(ex.key);
    const response: x.MessageSource = ex.response === undefined ? 'none' : (this.recentSource(ex.response, ex.responseSeq) ?? this.copyOf(ex.response));
    if (at === undefined) {
      const request = this.startedEarlier.delete(ex.key) ? 'keep' : (this.recentSource(ex.request, ex.requestSeq) ?? this.copyOf(ex.request));
      return this.push('x', x.exchangeValues(this.opts.recordingId, ord, ex, state, request, response));
    }
    // Start and end in one row, in the started row's place: what only the start knew comes from it.
    const v = x.exchangeValues(this.opts.recordingId, ord, ex, state, 'keep', response);
    x.takeStartColumns(v, this.values[at]!, this.startedJson);
    this.values[at] = v;
    this.tags[at] = 'X';
    this.count++;
    this.startedAt.delete(ex.key);
  }

  private push(tag: RowTag, v: Value[]): void {
    this.values.push(v);
    this.tags.push(tag);
    this.count++;
  }

  /** A started row whose request frame did not follow keeps a copy of its request. */
  private settlePending(): void {
    const p = this.pending;
    if (!p) return;
    this.pending = undefined;
    x.setRequestSource(p.row, this.copyOf(p.message));
  }

  private recentSource(message: unknown, seq: number | undefined): x.MessageSource | undefined {
    for (let i = this.recent.length - 1; i >= 0; i--) {
      const f = this.recent[i]!;
      if (f.seq === seq && f.message === message && f.batch === this.batchNo) return { frameSeq: seq };
    }
    return undefined;
  }

  private copyOf(message: unknown): x.MessageSource {
    const r = this.opts.redactor;
    return { json: JSON.stringify((r ? r.redactJson(message) : message) ?? null) };
  }
}

function redactFrame(r: Redactor, f: Frame): Frame {
  let out: Frame = f;
  if (f.kind === 'log') {
    const text = r.redactText(f.text);
    if (text !== f.text) out = { ...f, text, raw: Buffer.from(text, 'utf8') };
  } else if (f.kind === 'invalid') {
    // Not JSON-RPC, often not JSON at all (stdout pollution, a form body): the text rules, always;
    // the JSON fast path only looks at quoted keys and would keep `password=...` as it came.
    const text = f.raw.toString('utf8');
    const redacted = r.redactText(text);
    out = { ...f, ...(redacted !== text ? { raw: Buffer.from(redacted, 'utf8') } : {}), detail: r.redactText(f.detail) };
  } else {
    const raw = r.redactRaw(f.raw);
    if (raw !== f.raw) out = { ...f, raw, message: r.redactJson(f.message) };
  }
  if (f.context?.headers) out = { ...out, context: { ...f.context, headers: r.redactHeaders(f.context.headers) } };
  return out;
}

function redactAnomaly(r: Redactor, a: AnomalySeen): AnomalySeen {
  return { ...a, detail: r.redactText(a.detail) };
}

function redactOpened(r: Redactor, e: ConnectionOpened): ConnectionOpened {
  return { ...e, connection: { ...e.connection, target: r.redactText(e.connection.target) } };
}
