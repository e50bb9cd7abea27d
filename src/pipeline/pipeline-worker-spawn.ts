/** The options of a {@link PipelineThread} and how its worker is spawned from them. */
import { Worker } from 'node:worker_threads';
import { systemClockOrigin } from '../util/clock.js';
import type { Logger, LogLevel } from '../util/logger.js';
import { threadEntry } from '../util/thread-entry.js';
import type { RecordingOptions } from './recording-options.js';
import type { PipelineWorkerData, WorkerSinkOptions } from './worker-wire.js';

export interface PipelineThreadOptions {
  sinks: WorkerSinkOptions;
  logger: Logger;
  logLevel: LogLevel;
  maxLineBytes?: number;
  /** Bytes queued or in the worker's hands before input is dropped (default 64 MiB). */
  maxQueueBytes?: number;
  /** Worker thread niceness (Linux; default 0). */
  nice?: number;
  /** Record (spool, then index into SQLite: pipeline-thread-entry.ts). */
  recording?: RecordingOptions;
  /** Recording failed with --require-recording: the tap should stop. */
  onFatal?: (err: Error) => void;
  /**
   * Boot the thread when the server first answers (its first bytes to the client) or after this many
   * ms, whichever comes first, instead of at once: a host starting its servers gets the first answer
   * without the sinks' start-up competing for the CPU. What flows meanwhile waits in the bounded queue.
   */
  bootDeadlineMs?: number;
  /**
   * How long ops wait to be posted (ms; default 5). Posting wakes the worker: once per request at
   * low rates would cost both threads a context switch each time, for nothing the user can see
   * (every op carries the time the tap stamped when it saw the bytes, not when it was posted).
   */
  flushDelayMs?: number;
}

/** Starts the pipeline's worker thread (pipeline-thread-entry.ts) with what it needs of `opts`. */
export function spawnPipelineWorker(opts: PipelineThreadOptions): Worker {
  const data: PipelineWorkerData = {
    sinks: opts.sinks,
    logLevel: opts.logLevel,
    clockOrigin: systemClockOrigin,
    nice: opts.nice ?? 0,
    ...(opts.maxLineBytes !== undefined ? { maxLineBytes: opts.maxLineBytes } : {}),
    ...(opts.recording ? { recording: opts.recording } : {}),
  };
  return new Worker(threadEntry(import.meta.url, 'pipeline-thread-entry', 'dist/src/pipeline/pipeline-thread-entry.js'), {
    workerData: data,
    // The worker closes the spool's descriptor, which this thread opened (indexer-relay.ts).
    trackUnmanagedFds: false,
    stdout: false,
    stderr: false,
  });
}
