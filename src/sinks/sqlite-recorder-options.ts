/** Options and statistics of the SqliteRecorder sink (sqlite-recorder.ts). */
import type { Redactor } from '../redact/redactor.js';
import type { RecordingStore } from '../store/recording-store.js';
import type { NewRecording } from '../store/types.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import type { SinkStats } from './sink.js';

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
  /** Events that close a batch without waiting for the timer: the most per transaction (default 5 000). */
  batchSize?: number;
  /** Frame bytes that close a batch without waiting for the timer (default 8 MiB). */
  batchBytes?: number;
  /** How long a write waits for another process's lock on the file (default 100 ms). */
  busyTimeoutMs?: number;
  /** How long `close()` waits for the writer to commit what is queued (default 30 s); the rest counts as dropped. */
  closeTimeoutMs?: number;
  /** `--require-recording`: any dropped event calls `onFatal` (once). */
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
