/**
 * Where the recorder's encoded batches get written: a small interface, so that the recorder's
 * queueing and accounting do not depend on how the SQL runs (InlineBatchWriter: on this thread).
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
  /** The whole batch was dropped (transaction failed, writer gone). */
  failed?: Error;
}

export interface BatchWriter {
  /** True while no further batch may be handed over: the bound on batches in flight is reached. */
  readonly full: boolean;
  /** Hands over a batch; `done` is called exactly once, possibly before `write` returns. Never throws. */
  write(batch: EncodedBatch, done: (ack: BatchAck) => void): void;
  /**
   * Once every write is done: writes the recording's end row and releases the connection. Never rejects; resolves to the error when the end could not be written.
   */
  end(recordingId: number, end: RecordingEnd): Promise<Error | undefined>;
  /** Gives up on writes not yet under way (they complete as failed with `why`); the one under way may still finish. */
  abort(why: string): Promise<void>;
}

/** Writes batches synchronously on the caller's thread: the recorder's timer pays for the SQL. */
export class InlineBatchWriter implements BatchWriter {
  readonly full = false;

  constructor(
    private readonly store: RecordingStore,
    private readonly ownsStore: boolean,
  ) {}

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
