/**
 * The recorder: a Sink that writes the TapEvent stream to a recording file.
 *
 * Off the forwarding path: `onEvent` only appends to a bounded queue (events and bytes). A coarse,
 * unref'ed timer or a size trigger writes the queue in ONE transaction. Nothing here throws into the
 * pipeline: a full queue drops the newest events; a failed write drops its batch; both are counted,
 * said once, and written into the recording's row at close. With `requireRecording`, the first
 * loss calls `onFatal` so the tap can stop instead of letting traffic pass unrecorded.
 */
import { ExitCode, McptapError } from '../cli/exit-codes.js';
import type { TapEvent } from '../model/events.js';
import type { Exchange } from '../model/exchange.js';
import type { Frame } from '../model/frame.js';
import type { Redactor } from '../redact/redactor.js';
import { RecordingStore } from '../store/recording-store.js';
import type { NewRecording, OrderedEvent } from '../store/types.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import type { Sink, SinkStats } from './sink.js';

export interface SqliteRecorderOptions {
  /** Recording file to create or append to; or pass an open `store` (then the caller owns it). */
  path?: string;
  store?: RecordingStore;
  recording: NewRecording;
  logger: Logger;
  clock: Clock;
  redactor?: Redactor;
  /** Max queued events before dropping (default 100 000). */
  queueLimit?: number;
  /** Max queued frame bytes before dropping (default 256 MiB): frames can be megabytes each. */
  queueByteLimit?: number;
  /** Timer period for writing the queue (default 50 ms). */
  flushIntervalMs?: number;
  /** Queue length that triggers a write without waiting for the timer (default 5 000). */
  batchSize?: number;
  /** Queued bytes that trigger a write without waiting for the timer (default 8 MiB). */
  batchBytes?: number;
  /** `--require-recording`: any lost event calls `onFatal` (once). */
  requireRecording?: boolean;
  onFatal?: (err: Error) => void;
  /** Close the store on `close()`; default: only when this recorder opened it from `path`. */
  closeStore?: boolean;
  name?: string;
}

export interface RecorderStats extends SinkStats {
  written: number;
  droppedQueue: number;
  droppedWrite: number;
  transactions: number;
}

interface Queued {
  item: OrderedEvent;
  bytes: number;
}

/** Rough cost of an event in memory; exact only for frame payloads, which dominate. */
function sizeOf(e: TapEvent): number {
  return e.type === 'frame' ? 256 + e.frame.raw.length : 512;
}

export class SqliteRecorder implements Sink {
  readonly name: string;
  readonly recordingId: number;
  private readonly store: RecordingStore;
  private readonly ownsStore: boolean;
  private queue: Queued[] = [];
  private queuedBytes = 0;
  private ord = 0;
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;
  private closing: Promise<void> | undefined;
  private closed = false;
  private fatalSent = false;
  private readonly said = new Set<string>();
  private readonly counts = { events: 0, errors: 0, written: 0, droppedQueue: 0, droppedWrite: 0, transactions: 0 };

  /** Opens the store and inserts the recording row; throws (before any traffic) if that fails. */
  constructor(private readonly opts: SqliteRecorderOptions) {
    this.name = opts.name ?? 'sqlite-recorder';
    if (opts.store) this.store = opts.store;
    else if (opts.path !== undefined) this.store = RecordingStore.open(opts.path, { create: true });
    else throw new TypeError('SqliteRecorder needs a path or a store');
    this.ownsStore = opts.closeStore ?? opts.store === undefined;
    const r = opts.redactor;
    // A command line or URL can carry credentials (`--token=…`, `?api_key=…`).
    try {
      this.recordingId = this.store.beginRecording(r ? { ...opts.recording, target: r.redactText(opts.recording.target) } : opts.recording);
    } catch (err) {
      if (this.ownsStore) this.store.close();
      throw new McptapError('MCPTAP_RECORDING_UNWRITABLE', `cannot start a recording in ${opts.path ?? 'the store'}: ${(err as Error).message}`, ExitCode.InvalidInput);
    }
  }

  onEvent(event: TapEvent): void {
    this.counts.events++;
    if (this.closed || this.closing) return this.dropQueued(1, 'recorder is closed; events after close are dropped', false);
    try {
      const bytes = sizeOf(event);
      const o = this.opts;
      if (this.queue.length >= (o.queueLimit ?? 100_000) || this.queuedBytes + bytes > (o.queueByteLimit ?? 256 * 2 ** 20)) {
        return this.dropQueued(1, `recorder queue full (${this.queue.length} events, ${this.queuedBytes} bytes); dropping events`);
      }
      this.queue.push({ item: { ord: ++this.ord, event: snapshot(event) }, bytes });
      this.queuedBytes += bytes;
      this.schedule();
    } catch (err) {
      // Only a malformed event (e.g. a frame without raw bytes) can get here.
      this.counts.errors++;
      this.dropQueued(1, `recorder could not queue an event: ${String(err)}`);
    }
  }

  async flush(): Promise<void> {
    this.writeQueue();
  }

  close(): Promise<void> {
    this.closing ??= this.finish();
    return this.closing;
  }

  stats(): RecorderStats {
    const c = this.counts;
    return { events: c.events, dropped: c.droppedQueue + c.droppedWrite, errors: c.errors, written: c.written, droppedQueue: c.droppedQueue, droppedWrite: c.droppedWrite, transactions: c.transactions };
  }

  private async finish(): Promise<void> {
    this.writeQueue();
    this.cancelTimers();
    this.closed = true;
    try {
      if (this.store.isOpen) {
        this.store.endRecording(this.recordingId, { endedUs: this.opts.clock.nowUs(), droppedQueue: this.counts.droppedQueue, droppedWrite: this.counts.droppedWrite });
      }
    } catch (err) {
      this.counts.errors++;
      this.sayOnce('end', `recorder could not write the end of recording ${this.recordingId}: ${String(err)}`);
    }
    try {
      if (this.ownsStore) this.store.close();
    } catch (err) {
      this.counts.errors++;
      this.sayOnce('close', `recorder could not close the recording: ${String(err)}`);
    }
  }

  private schedule(): void {
    const o = this.opts;
    if (this.queue.length >= (o.batchSize ?? 5000) || this.queuedBytes >= (o.batchBytes ?? 8 * 2 ** 20)) {
      this.immediate ??= setImmediate(() => {
        this.immediate = undefined;
        this.writeQueue();
      });
      this.immediate.unref?.();
      return;
    }
    if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.writeQueue();
      }, o.flushIntervalMs ?? 50);
      this.timer.unref();
    }
  }

  private cancelTimers(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.immediate) clearImmediate(this.immediate);
    this.timer = undefined;
    this.immediate = undefined;
  }

  /** Writes everything queued in one transaction. Never throws. */
  private writeQueue(): void {
    if (this.queue.length === 0 || this.closed) return;
    const batch = this.queue;
    this.queue = [];
    this.queuedBytes = 0;
    const items: OrderedEvent[] = [];
    let unredactable = 0;
    for (const q of batch) {
      try {
        items.push(this.redact(q.item));
      } catch {
        unredactable++; // a malformed event: drop it alone, never in clear
      }
    }
    if (unredactable > 0) {
      this.counts.errors += unredactable;
      this.dropWritten(unredactable, new Error('malformed event'), 'recorder could not redact events');
    }
    try {
      this.counts.transactions++;
      const r = this.store.writeEvents(this.recordingId, items);
      this.counts.written += r.written;
      if (r.rejected > 0) {
        this.counts.errors += r.rejected;
        this.dropWritten(r.rejected, r.firstError ?? new Error('row rejected'), 'recorder rejected bad rows');
      }
    } catch (err) {
      this.counts.errors++;
      this.dropWritten(items.length, err as Error, `recorder write of ${items.length} events failed`);
    }
  }

  private redact(item: OrderedEvent): OrderedEvent {
    const r = this.opts.redactor;
    if (!r) return item;
    const e = item.event;
    switch (e.type) {
      case 'frame':
        return { ord: item.ord, event: { ...e, frame: redactFrame(r, e.frame) } };
      case 'exchange-started':
      case 'exchange-completed':
      case 'exchange-orphaned':
        return { ord: item.ord, event: { ...e, exchange: redactExchange(r, e.exchange) } };
      case 'anomaly':
        return { ord: item.ord, event: { ...e, detail: r.redactText(e.detail) } };
      case 'connection-opened':
        return { ord: item.ord, event: { ...e, connection: { ...e.connection, target: r.redactText(e.connection.target) } } };
      default:
        return item;
    }
  }

  private dropQueued(n: number, why: string, fatal = true): void {
    this.counts.droppedQueue += n;
    this.sayOnce('queue', `${why} (further drops counted, not logged)`);
    if (fatal) this.fatal(new Error(why));
  }

  private dropWritten(n: number, err: Error, why: string): void {
    this.counts.droppedWrite += n;
    this.sayOnce('write', `${why}: ${err.message} (further failures counted, not logged)`);
    this.fatal(err);
  }

  private sayOnce(topic: string, msg: string): void {
    if (this.said.has(topic)) return;
    this.said.add(topic);
    this.opts.logger.warn(msg);
  }

  private fatal(err: Error): void {
    if (!this.opts.requireRecording || this.fatalSent) return;
    this.fatalSent = true;
    try {
      this.opts.onFatal?.(err);
    } catch (e) {
      this.counts.errors++;
      this.opts.logger.error(`recorder onFatal callback threw: ${String(e)}`);
    }
  }
}

/**
 * The correlator keeps mutating an in-flight Exchange after announcing it (progress, cancel,
 * response); a started event is copied now so the queue holds what was true when it started.
 */
function snapshot(e: TapEvent): TapEvent {
  if (e.type !== 'exchange-started') return e;
  const ex = e.exchange;
  return { ...e, exchange: { ...ex, progress: [...ex.progress], ...(ex.transport ? { transport: { ...ex.transport } } : {}) } };
}

function redactFrame(r: Redactor, f: Frame): Frame {
  let out: Frame = f;
  if (f.kind === 'log') {
    const text = r.redactText(f.text);
    if (text !== f.text) out = { ...f, text, raw: Buffer.from(text, 'utf8') };
  } else {
    const raw = r.redactRaw(f.raw);
    if (raw !== f.raw) out = f.kind === 'message' ? { ...f, raw, message: r.redactJson(f.message) } : { ...f, raw, detail: r.redactText(f.detail) };
    else if (f.kind === 'invalid') out = { ...f, detail: r.redactText(f.detail) };
  }
  if (f.context?.headers) out = { ...out, context: { ...f.context, headers: r.redactHeaders(f.context.headers) } };
  return out;
}

function redactExchange(r: Redactor, ex: Exchange): Exchange {
  const request = r.redactJson(ex.request);
  const response = ex.response === undefined ? undefined : r.redactJson(ex.response);
  if (request === ex.request && response === ex.response) return ex;
  return { ...ex, request, ...(response === undefined ? {} : { response }) };
}
