/**
 * Where the recorder's encoded batches get written: in this thread (`InlineBatchWriter`, for an
 * injected store, tests and embedding) or in a writer thread (`WorkerBatchWriter`, the default for
 * a recording file). The recorder sees the same small interface either way.
 *
 * Also the message protocol between the recorder and its writer thread (recorder-worker.ts).
 */
import type { EncodedBatch } from '../store/event-batch.js';
import type { RecordingStore } from '../store/recording-store.js';
import type { RecordingEnd } from '../store/types.js';

export interface BatchAck {
  /** Events stored. */
  written: number;
  /** Events refused row by row (the rest of the batch was committed). */
  rejected: number;
  firstError?: Error;
  /** The whole batch was lost (transaction failed, writer gone). */
  failed?: Error;
}

export interface BatchWriter {
  /** True while no further batch may be handed over: the bound on batches in flight is reached. */
  readonly full: boolean;
  /** Memory (at least `size` bytes) for a serialised batch's bytes, recycled between batches. */
  allocate?(size: number): Uint8Array;
  /** Gives back memory from `allocate` that is no longer used. */
  release?(bytes: Uint8Array): void;
  /** Hands over a batch; `done` is called exactly once, possibly before `write` returns. Never throws. */
  write(batch: EncodedBatch, done: (ack: BatchAck) => void): void;
  /**
   * Once every write is done: writes the recording's end row and releases the connection (and the
   * thread). Never rejects; resolves to the error when the end could not be written.
   */
  end(recordingId: number, end: RecordingEnd): Promise<Error | undefined>;
  /** Gives up on writes not yet under way (they complete as failed with `why`); the one under way may still finish. */
  abort(why: string): Promise<void>;
}

/** Error as it crosses the thread boundary. */
export interface ErrorInfo {
  message: string;
  code?: string;
}

export type ToWriter =
  | { type: 'batch'; id: number; batch: EncodedBatch }
  | { type: 'end'; id: number; recordingId: number; end: RecordingEnd };

export type FromWriter =
  /** `bytes`: the batch's byte buffer, transferred back to be reused for a later batch. */
  | { type: 'ack'; id: number; written: number; rejected: number; firstError?: ErrorInfo; failed?: ErrorInfo; bytes?: ArrayBuffer }
  | { type: 'ended'; id: number; error?: ErrorInfo };

export interface WriterThreadData {
  path: string;
  busyTimeoutMs: number;
  /** Scheduling niceness for the thread (Linux; 0 leaves it as is). */
  nice: number;
  /**
   * One Int32 the recorder sets to 1 to give up: the thread then answers every batch it has not
   * started as failed, without writing it. (Terminating a thread inside an SQLite call is not safe:
   * better-sqlite3 aborts the process if that call then fails.)
   */
  stop: SharedArrayBuffer;
}

/** The failure a batch is answered with once the recorder gave up on the thread. */
export const STOPPED = 'recorder writer stopped';

export function toErrorInfo(err: unknown): ErrorInfo {
  const code = (err as { code?: unknown })?.code;
  return { message: err instanceof Error ? err.message : String(err), ...(typeof code === 'string' ? { code } : {}) };
}

export function fromErrorInfo(info: ErrorInfo): Error {
  return Object.assign(new Error(info.message), info.code ? { code: info.code } : {});
}

/** Writes batches synchronously on the caller's thread: the recorder's timer pays for the SQL. */
export class InlineBatchWriter implements BatchWriter {
  readonly full = false;

  constructor(private readonly store: RecordingStore, private readonly ownsStore: boolean) {}

  write(batch: EncodedBatch, done: (ack: BatchAck) => void): void {
    let ack: BatchAck;
    try {
      ack = this.store.writeBatch(batch);
    } catch (err) {
      ack = { written: 0, rejected: 0, failed: err instanceof Error ? err : new Error(String(err)) };
    }
    done(ack);
  }

  async end(recordingId: number, end: RecordingEnd): Promise<Error | undefined> {
    let error: Error | undefined;
    try {
      // A store closed underneath by its owner has nothing left to end.
      if (this.store.isOpen) this.store.endRecording(recordingId, end);
    } catch (err) {
      error = err as Error;
    }
    try {
      if (this.ownsStore) this.store.close();
    } catch (err) {
      error ??= err as Error;
    }
    return error;
  }

  async abort(): Promise<void> {
    if (this.ownsStore) this.store.close();
  }
}
