/**
 * The recorder's side of its writer thread (recorder-worker.ts): posts encoded batches (their raw
 * bytes transferred, not copied) and matches the thread's replies to them.
 *
 * Invariants:
 * - every `write` gets exactly one ack, in order: from the thread, or a failure when the thread
 *   died, could not start, or was given up on;
 * - the thread is only terminated when idle: terminating it inside an SQLite call that then fails
 *   makes better-sqlite3 abort the whole process;
 * - at most `maxInFlight` batches are in the thread's hands (`full` says when);
 * - the thread keeps the process alive only while it holds work: an idle recorder never prevents exit.
 */
import { Worker } from 'node:worker_threads';
import { threadEntry } from '../util/thread-entry.js';
import type { EncodedBatch } from '../store/event-batch.js';
import { isPackedRows } from '../store/row-codec.js';
import type { RecordingEnd } from '../store/types.js';
import { STOPPED, fromErrorInfo, type BatchAck, type BatchWriter, type FromWriter, type ToWriter, type WriterThreadData } from './batch-writer.js';

export interface WorkerBatchWriterOptions extends Omit<WriterThreadData, 'stop'> {
  /** Batches handed to the thread and not yet answered (default 4). */
  maxInFlight?: number;
}

/** The thread's entry (see util/thread-entry.ts: the build's file, or the sources through tsx). */
export function writerThreadEntry(): URL {
  return threadEntry(import.meta.url, 'recorder-worker', 'dist/src/sinks/recorder-worker.js');
}

/** The batch's buffers, moved to the thread rather than copied (the recorder keeps no reference to them). */
function transferables(batch: EncodedBatch): ArrayBuffer[] {
  const out = batch.bytes ? [batch.bytes.buffer as ArrayBuffer] : [];
  if (isPackedRows(batch.rows)) for (const a of [batch.rows.lengths, batch.rows.kinds, batch.rows.numbers]) out.push(a.buffer as ArrayBuffer);
  return out;
}

/** Pooled byte buffers: at least this big (most batches fit), and none kept past this size. */
const POOLED_MIN = 1024 * 1024;
const POOLED_MAX = 16 * 1024 * 1024;

export class WorkerBatchWriter implements BatchWriter {
  private readonly worker: Worker;
  private readonly maxInFlight: number;
  private readonly pending = new Map<number, (reply: FromWriter | Error) => void>();
  /** Byte buffers the thread handed back, reused so that big batches do not fault in fresh memory each time. */
  private readonly pool: ArrayBuffer[] = [];
  private nextId = 1;
  private gone: Error | undefined;
  private exited: Promise<void>;
  private readonly stopFlag = new Int32Array(new SharedArrayBuffer(4));
  private stopReason: string | undefined;
  /** Given up on while (possibly) inside an SQLite call: never terminated, only let go. */
  private abandoned = false;
  private readonly busyTimeoutMs: number;
  private drained: (() => void) | undefined;

  constructor(opts: WorkerBatchWriterOptions) {
    this.maxInFlight = Math.max(1, opts.maxInFlight ?? 4);
    this.busyTimeoutMs = opts.busyTimeoutMs;
    const data: WriterThreadData = { path: opts.path, busyTimeoutMs: opts.busyTimeoutMs, nice: opts.nice, stop: this.stopFlag.buffer as SharedArrayBuffer };
    // stdout: true keeps the thread's stdout away from ours (a stdio tap's stdout carries only the server's bytes).
    this.worker = new Worker(writerThreadEntry(), { workerData: data, stdout: true });
    this.worker.unref();
    this.worker.on('message', (m: FromWriter) => this.settle(m.id, m));
    this.worker.on('error', (err) => this.fail(new Error(`recorder thread failed: ${err.message}`)));
    this.exited = new Promise((resolve) => this.worker.once('exit', (code) => {
      this.fail(new Error(`recorder thread exited (code ${code})`));
      resolve();
    }));
  }

  get full(): boolean {
    return this.gone === undefined && this.pending.size >= this.maxInFlight;
  }

  /** The biggest pooled buffer when it is big enough (fewer regrowths), else fresh memory. The view may be longer than `size`. */
  allocate(size: number): Uint8Array {
    let best = -1;
    for (let i = 0; i < this.pool.length; i++) if (this.pool[i]!.byteLength >= size && (best < 0 || this.pool[i]!.byteLength > this.pool[best]!.byteLength)) best = i;
    const buffer = best >= 0 ? this.pool.splice(best, 1)[0]! : new ArrayBuffer(size <= POOLED_MAX ? Math.max(size, POOLED_MIN) : size);
    return new Uint8Array(buffer);
  }

  release(bytes: Uint8Array): void {
    this.recycle(bytes.buffer as ArrayBuffer);
  }

  private recycle(buffer: ArrayBuffer): void {
    if (buffer.byteLength <= POOLED_MAX && this.pool.length <= this.maxInFlight + 1) this.pool.push(buffer);
  }

  write(batch: EncodedBatch, done: (ack: BatchAck) => void): void {
    this.request({ type: 'batch', id: 0, batch }, transferables(batch), (reply) => {
      if (reply instanceof Error) return done({ written: 0, rejected: 0, failed: reply });
      if (reply.type !== 'ack') return done({ written: 0, rejected: 0, failed: new Error(`unexpected reply ${reply.type}`) });
      if (reply.bytes) this.recycle(reply.bytes);
      const ack: BatchAck = { written: reply.written, rejected: reply.rejected };
      if (reply.firstError) ack.firstError = fromErrorInfo(reply.firstError);
      if (reply.failed) ack.failed = reply.failed.message === STOPPED && this.stopReason ? new Error(this.stopReason) : fromErrorInfo(reply.failed);
      done(ack);
    });
  }

  end(recordingId: number, end: RecordingEnd): Promise<Error | undefined> {
    if (this.abandoned) return Promise.resolve(new Error(`${this.stopReason}; the recording's end is written from here`));
    return new Promise<Error | undefined>((resolve) => {
      this.request({ type: 'end', id: 0, recordingId, end }, [], (reply) => {
        if (reply instanceof Error) resolve(reply);
        else resolve(reply.type === 'ended' && reply.error ? fromErrorInfo(reply.error) : undefined);
      });
    }).finally(() => this.stop());
  }

  /**
   * Raises the stop flag, then waits for the answers to what is in flight: batches not yet started
   * come back at once as failed, the one under way within about one busy timeout. A thread that
   * does not answer even then is let go (unref'ed, not terminated) and its batches count as failed.
   */
  async abort(why: string): Promise<void> {
    this.stopReason = why;
    Atomics.store(this.stopFlag, 0, 1);
    if (this.pending.size === 0 || this.gone) return;
    const graceMs = this.busyTimeoutMs + 2000;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      new Promise<void>((resolve) => (this.drained = resolve)),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs))),
    ]);
    clearTimeout(timer);
    if (this.pending.size > 0) {
      this.abandoned = true;
      this.fail(new Error(why));
      this.worker.unref();
    }
  }

  private request(msg: ToWriter, transfer: ArrayBuffer[], settle: (reply: FromWriter | Error) => void): void {
    if (this.gone) return settle(this.gone);
    const id = this.nextId++;
    this.pending.set(id, settle);
    this.worker.ref();
    try {
      this.worker.postMessage({ ...msg, id }, transfer);
    } catch (err) {
      this.settle(id, new Error(`cannot hand a batch to the recorder thread: ${(err as Error).message}`));
    }
  }

  private settle(id: number, reply: FromWriter | Error): void {
    const settle = this.pending.get(id);
    if (!settle) return;
    this.pending.delete(id);
    if (this.pending.size === 0) this.worker.unref();
    settle(reply);
    if (this.pending.size === 0) this.drained?.();
  }

  /** The thread is gone (or given up on): everything in flight fails, later writes fail at once. */
  private fail(err: Error): void {
    this.gone ??= err;
    for (const id of [...this.pending.keys()]) this.settle(id, this.gone);
  }

  /** Ends the thread once it is idle (after `end` was answered, or when it is gone). */
  private async stop(): Promise<void> {
    this.gone ??= new Error('recorder thread stopped');
    if (this.abandoned) return;
    await this.worker.terminate();
    await this.exited;
  }
}
