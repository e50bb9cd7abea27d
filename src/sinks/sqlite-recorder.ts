/**
 * The recorder: a Sink that writes the TapEvent stream to a recording file.
 *
 * Off the forwarding path: `onEvent` encodes the event into the open batch (redaction, row values,
 * raw bytes copied: store/event-batch.ts) within bounded queue limits (events and bytes). A coarse,
 * unref'ed timer or a size limit closes the batch and writes it in ONE transaction on this thread.
 * A tap never runs this on its own thread: its recorder lives in the recording indexer process
 * (pipeline/recording-indexer.ts), which reads the traffic back from the spool.
 *
 * Nothing here throws into the pipeline: a full queue drops the newest events; a failed write
 * drops its batch; both are counted, said once, and written into the recording's row at close.
 * With `requireRecording`, the first loss calls `onFatal` so the tap can stop instead of letting
 * traffic pass unrecorded.
 */
import { statSync } from 'node:fs';
import { McptapError } from '../errors.js';
import type { TapEvent } from '../model/events.js';
import { EventBatchEncoder, type SealedBatch } from '../store/event-batch.js';
import { RecordingStore } from '../store/recording-store.js';
import type { RecordingEnd } from '../store/types.js';
import { InlineBatchWriter, type BatchAck, type BatchWriter } from './batch-writer.js';
import type { Sink } from './sink.js';
import { SayOnce } from '../util/say-once.js';
import type { RecorderStats, SqliteRecorderOptions } from './sqlite-recorder-options.js';

export type { RecorderStats, SqliteRecorderOptions } from './sqlite-recorder-options.js';

/** Rough cost of an event in memory; exact only for frame payloads, which dominate. */
function sizeOf(e: TapEvent): number {
  return e.type === 'frame' ? 256 + e.frame.raw.length : 512;
}

interface Waiting {
  sealed: SealedBatch;
  /** Every event accepted up to this ordinal is in this batch or an earlier one (or was refused). */
  lastOrd: number;
  events: number;
  bytes: number;
}

export class SqliteRecorder implements Sink {
  readonly name: string;
  readonly recordingId: number;
  private readonly writer: BatchWriter;
  private readonly encoder: EventBatchEncoder;
  /** Ordinal of the last event accepted; ordinals are 1, 2, 3, ... in arrival order. */
  private acceptedOrd = 0;
  private open = { events: 0, bytes: 0 };
  /** Closed batches not yet handed to the writer, oldest first. */
  private readonly waiting: Waiting[] = [];
  private readonly waitingTotal = { events: 0, bytes: 0 };
  /** Batches in the writer's hands, oldest first (the writer answers in order). */
  private readonly inFlight: { lastOrd: number }[] = [];
  /** Ordinal up to which every batch has been answered by the writer (committed or counted dropped). */
  private doneOrd = 0;
  private readonly waiters: { ord: number; resolve: () => void }[] = [];
  /** The timer fired or a flush asked: close the open batch as soon as the writer can take it. */
  private due = false;
  private pumping = false;
  private incomplete: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;
  private closing: Promise<void> | undefined;
  private fatalSent = false;
  /** Each kind of loss is said once, then counted. */
  private readonly said: SayOnce;
  private readonly counts = { events: 0, errors: 0, written: 0, droppedQueue: 0, droppedWrite: 0, transactions: 0 };
  /** The recording file as opened (device and inode), to notice it deleted or replaced; undefined for a store given. */
  private readonly fileId: string | undefined;
  private fileCheckedAt = 0;
  /** The file at the path is no longer the one written: every event written from then on is lost. */
  private fileGone: string | undefined;

  /** Opens the store and inserts the recording row; throws (before any traffic) if that fails. */
  constructor(private readonly opts: SqliteRecorderOptions) {
    this.name = opts.name ?? 'sqlite-recorder';
    this.said = new SayOnce((m) => opts.logger.warn(m));
    const busyTimeoutMs = opts.busyTimeoutMs ?? 100;
    let store: RecordingStore;
    if (opts.store) store = opts.store;
    else if (opts.path !== undefined) store = RecordingStore.open(opts.path, { create: true, busyTimeoutMs });
    else throw new TypeError('SqliteRecorder needs a path or a store');
    const ownsStore = opts.closeStore ?? opts.store === undefined;
    const r = opts.redactor;
    // A command line or URL can carry credentials (`--token=…`, `?api_key=…`).
    try {
      this.recordingId = store.beginRecording(r ? { ...opts.recording, target: r.redactText(opts.recording.target) } : opts.recording);
    } catch (err) {
      if (ownsStore) store.close();
      throw new McptapError('MCPTAP_RECORDING_UNWRITABLE', `cannot start a recording in ${opts.path ?? 'the store'}: ${(err as Error).message}`);
    }
    this.fileId = opts.path !== undefined && opts.store === undefined ? fileIdentity(opts.path) : undefined;
    this.writer = new InlineBatchWriter(store, ownsStore);
    this.encoder = new EventBatchEncoder({ recordingId: this.recordingId, ...(r ? { redactor: r } : {}) });
  }

  onEvent(event: TapEvent): void {
    this.counts.events++;
    // A long-lived stream's frames carry its stream id: `show --streams` reads them (no table of their own).
    if (event?.type === 'stream-opened' || event?.type === 'stream-closed') return;
    if (this.closing) return this.dropQueued(1, () => 'recorder is closed; events after close are dropped', false);
    let bytes: number;
    try {
      bytes = sizeOf(event);
    } catch (err) {
      this.counts.errors++;
      return this.dropQueued(1, () => `recorder could not queue an event: ${String(err)}`);
    }
    const o = this.opts;
    const events = this.open.events + this.waitingTotal.events;
    const queued = this.open.bytes + this.waitingTotal.bytes;
    if (events >= (o.queueLimit ?? 100_000) || queued + bytes > (o.queueByteLimit ?? 256 * 2 ** 20)) {
      return this.dropQueued(1, () => `recorder queue full (${events} events, ${queued} bytes); dropping events`);
    }
    const ord = ++this.acceptedOrd;
    try {
      this.encoder.add(ord, event);
    } catch (err) {
      // A malformed event (e.g. a frame without raw bytes): it alone is dropped, never written in clear.
      this.counts.errors++;
      return this.dropWritten(1, err as Error, 'recorder could not record a malformed event');
    }
    this.open.events++;
    this.open.bytes += bytes;
    this.schedule();
  }

  /** Resolves once everything accepted so far is committed (or counted as dropped). */
  async flush(): Promise<void> {
    const ord = this.acceptedOrd;
    this.due = true;
    this.pump();
    if (this.doneOrd >= ord) return;
    await new Promise<void>((resolve) => this.waiters.push({ ord, resolve }));
  }

  close(): Promise<void> {
    this.closing ??= this.finish();
    return this.closing;
  }

  /** The recording may lack traffic (the tap died before handing all of it over): said with its end. */
  markIncomplete(why: string): void {
    this.incomplete = why;
  }

  stats(): RecorderStats {
    const c = this.counts;
    return {
      events: c.events,
      dropped: c.droppedQueue + c.droppedWrite,
      errors: c.errors,
      written: c.written,
      droppedQueue: c.droppedQueue,
      droppedWrite: c.droppedWrite,
      transactions: c.transactions,
    };
  }

  private async finish(): Promise<void> {
    this.cancelTimers();
    const ms = this.opts.closeTimeoutMs ?? 30_000;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      this.flush().then(() => false),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), ms)).unref()),
    ]);
    clearTimeout(timer);
    // Gives up on the writer; what it held (and what waited) comes back as failed acks, which count the drops.
    if (timedOut) await this.writer.abort(`recorder writer did not commit within ${ms} ms of close`);
    this.fileCheckedAt = 0;
    if (this.fileWasDeleted() && this.counts.written > 0) {
      // Everything written before it was deleted is gone with it.
      this.dropWritten(this.counts.written, new Error(this.fileGone!), 'recorder wrote to a file nobody can read');
      this.counts.written = 0;
    }
    const end: RecordingEnd = {
      endedUs: this.opts.clock.nowUs(),
      droppedQueue: this.counts.droppedQueue,
      droppedWrite: this.counts.droppedWrite,
      ...(this.incomplete ? { incomplete: this.incomplete } : {}),
    };
    const err = await this.writer.end(this.recordingId, end);
    if (err) {
      this.counts.errors++;
      this.said.count('end', () => `recorder could not write the end of recording ${this.recordingId}: ${err.message}`);
    }
  }

  /** A full batch is closed now (bounding its size); handing it over, and the timer's work, run later. */
  private schedule(): void {
    if (this.open.events >= (this.opts.batchSize ?? 5000) || this.open.bytes >= (this.opts.batchBytes ?? 8 * 2 ** 20)) {
      this.sealOpen();
      this.immediate ??= setImmediate(() => {
        this.immediate = undefined;
        this.pump();
      });
      this.immediate.unref?.();
    } else if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.due = true;
        this.pump();
      }, this.opts.flushIntervalMs ?? 50);
      this.timer.unref();
    }
  }

  private cancelTimers(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.immediate) clearImmediate(this.immediate);
    this.timer = undefined;
    this.immediate = undefined;
  }

  /** Closes the open batch into the waiting list (or, if nothing of it is writable, just marks its ordinals done). */
  private sealOpen(): void {
    const sealed = this.encoder.seal();
    const lastOrd = this.acceptedOrd;
    if (sealed) {
      this.waiting.push({ sealed, lastOrd, ...this.open });
      this.waitingTotal.events += this.open.events;
      this.waitingTotal.bytes += this.open.bytes;
    } else {
      const last = this.waiting[this.waiting.length - 1] ?? this.inFlight[this.inFlight.length - 1];
      if (last) last.lastOrd = lastOrd;
      else this.settled(lastOrd);
    }
    this.open = { events: 0, bytes: 0 };
  }

  /** Hands waiting batches (and, when due, the open one) to the writer while it takes them. Never throws; re-entrant calls are no-ops. */
  private pump(): void {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (!this.writer.full) {
        if (this.waiting.length === 0) {
          if (!this.due) break;
          this.due = false;
          this.sealOpen();
          if (this.waiting.length === 0) break;
        }
        this.send(this.waiting.shift()!);
      }
    } finally {
      this.pumping = false;
    }
  }

  private send(w: Waiting): void {
    this.waitingTotal.events -= w.events;
    this.waitingTotal.bytes -= w.bytes;
    this.counts.transactions++;
    this.inFlight.push({ lastOrd: w.lastOrd });
    const events = w.sealed.events;
    this.writer.write(w.sealed.batch, (ack) => this.onAck(ack, events));
  }

  private onAck(ack: BatchAck, events: number): void {
    if (ack.failed) {
      this.counts.errors++;
      this.dropWritten(events, ack.failed, `recorder write of ${events} events failed`);
    } else if (this.fileWasDeleted()) {
      this.dropWritten(events, new Error(this.fileGone!), 'recorder writes to a file nobody can read');
    } else {
      this.counts.written += ack.written;
      if (ack.rejected > 0) {
        this.counts.errors += ack.rejected;
        this.dropWritten(ack.rejected, ack.firstError ?? new Error('row rejected'), 'recorder rejected bad rows');
      }
    }
    const done = this.inFlight.shift();
    if (done) this.settled(done.lastOrd);
    this.pump();
  }

  /** Batches are answered in order: everything up to `ord` is done; wake the flushes waiting for it. */
  private settled(ord: number): void {
    this.doneOrd = Math.max(this.doneOrd, ord);
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      const w = this.waiters[i]!;
      if (w.ord > this.doneOrd) continue;
      this.waiters.splice(i, 1);
      w.resolve();
    }
  }

  /**
   * The recording file was deleted (or replaced) at its path while recording: SQLite goes on writing
   * to the unlinked file, which is gone when this process ends. Looked at once a second at most.
   */
  private fileWasDeleted(): boolean {
    if (this.fileGone || this.fileId === undefined) return this.fileGone !== undefined;
    const now = Date.now();
    if (now - this.fileCheckedAt < 1000) return false;
    this.fileCheckedAt = now;
    if (fileIdentity(this.opts.path!) !== this.fileId) this.fileGone = `the recording file ${this.opts.path} was deleted or replaced while recording`;
    return this.fileGone !== undefined;
  }

  /** `why` is only built when it is said or reported: a full queue can drop at traffic rate. */
  private dropQueued(n: number, why: () => string, fatal = true): void {
    this.counts.droppedQueue += n;
    this.said.count('queue', () => `${why()} (further drops counted, not logged)`);
    if (fatal && this.opts.requireRecording && !this.fatalSent) this.fatal(new Error(why()));
  }

  private dropWritten(n: number, err: Error, why: string): void {
    this.counts.droppedWrite += n;
    this.said.count('write', () => `${why}: ${err.message} (further failures counted, not logged)`);
    this.fatal(err);
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

/** Device and inode of the file at `path`, or undefined when there is none. */
function fileIdentity(path: string): string | undefined {
  try {
    const st = statSync(path);
    return `${st.dev}:${st.ino}`;
  } catch {
    return undefined;
  }
}
