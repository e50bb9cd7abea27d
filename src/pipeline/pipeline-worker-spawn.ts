/** The options of a {@link SidePath} and how its worker is spawned from them. */
import { Worker } from 'node:worker_threads';
import { systemClockOrigin } from '../util/clock.js';
import type { Logger, LogLevel } from '../util/logger.js';
import { threadEntry } from '../util/thread-entry.js';
import type { RecordingOptions } from './recording-options.js';
import type { PipelineWorkerData, WorkerSinkOptions } from './worker-wire.js';

export interface SidePathOptions {
  /** The sinks' settings; one span-id seed for the live spans and the recording, so `mcptap export` reproduces the live ids. */
  sinks: WorkerSinkOptions & { spanIdSeed: string };
  logger: Logger;
  logLevel: LogLevel;
  maxLineBytes?: number;
  /** Bytes queued, waiting for the spool or in the worker's hands before input is dropped (default 64 MiB). */
  maxQueueBytes?: number;
  /** Worker thread niceness (Linux; default 0). */
  nice?: number;
  /** Record: spool on this thread, indexed into SQLite by the indexer process (recording.ts). */
  recording?: RecordingOptions;
  /** Recording failed with --require-recording: the tap should stop. */
  onFatal?: (err: Error) => void;
  /** Boot the worker when the server first answers or after this many ms, not at once: its start-up would compete with the server's. */
  bootDeadlineMs?: number;
  /** How long ops wait to be spooled and posted (ms; default 5); each op carries the time the tap saw its bytes, so nothing is lost by waiting. */
  flushDelayMs?: number;
}

/** Starts the pipeline's worker thread (pipeline-thread-entry.ts): live telemetry. */
export function spawnPipelineWorker(opts: SidePathOptions): Worker {
  const data: PipelineWorkerData = {
    sinks: opts.sinks,
    logLevel: opts.logLevel,
    clockOrigin: systemClockOrigin,
    nice: opts.nice ?? 0,
    besideRecording: opts.recording !== undefined,
    ...(opts.maxLineBytes !== undefined ? { maxLineBytes: opts.maxLineBytes } : {}),
  };
  return new Worker(threadEntry(import.meta.url, 'pipeline-thread-entry', 'dist/src/pipeline/pipeline-thread-entry.js'), {
    workerData: data,
    stdout: false,
    stderr: false,
  });
}
