/**
 * What crosses between a {@link SidePath} (the tap's thread) and its pipeline worker (live telemetry), and into the spool.
 * A batch is ONE transferred buffer holding every op's bytes back to back, in op order, then the op list encoded by
 * wire-codec.ts: per tick, one postMessage and one copy of the bytes, whatever the number of chunks. Ops are tuples whose
 * first element is an {@link Op} code; `len` fields say how many of the buffer's next bytes are the op's.
 */
import type { WireError } from '../errors.js';
import type { LongStreamEdge, StreamEnd, AnomalyKind, ConnectionInfo } from '../model/events.js';
import type { Channel, Direction, FrameOrigin } from '../model/frame.js';
import type { ClockOrigin } from '../util/clock.js';
import type { LogLevel } from '../util/logger.js';
import type { AnomalyExtra, ConnectionClose } from './pipeline-input.js';
import type { TapSinkOptions } from './sink-setup.js';

export const enum Op {
  Open = 0,
  Chunk = 1,
  Message = 2,
  Request = 3,
  EndStream = 4,
  Anomaly = 5,
  Close = 6,
  Gap = 7,
  LongStream = 8,
}

export interface Lost {
  bytes: number;
  chunks: number;
  endedAtNewline: boolean;
  timeUs: number;
}

export type WireOp =
  | [Op.Open, ConnectionInfo, number]
  | [Op.Chunk, string, Direction, Channel, number, number]
  | [Op.Message, FrameOrigin, number]
  | [Op.Request, FrameOrigin, number, Record<string, string | string[]>]
  | [Op.EndStream, string, string, StreamEnd]
  | [Op.Anomaly, AnomalyKind, string, string, AnomalyExtra]
  | [Op.Close, string, ConnectionClose]
  | [Op.Gap, string, Direction, Channel, Lost]
  | [Op.LongStream, string, string, LongStreamEdge];

/** The serialisable part of the sink settings (callbacks and loggers stay in their own thread). */
export type WorkerSinkOptions = Omit<TapSinkOptions, 'logger' | 'onFatal' | 'extraDropCounts' | 'record' | 'requireRecording'>;

export interface PipelineWorkerData {
  sinks: WorkerSinkOptions;
  logLevel: LogLevel;
  clockOrigin: ClockOrigin;
  maxLineBytes?: number;
  /** Scheduling niceness of the worker thread (Linux). */
  nice: number;
  /** A recording goes on beside: telemetry that cannot start is said here, and the tap goes on. */
  besideRecording: boolean;
}

export type ToWorker =
  | {
      type: 'batch';
      seq: number;
      /** The ops' bytes are its first `length` bytes, the encoded ops the next `opsLength` (a recycled buffer can be larger). */
      bytes: ArrayBuffer;
      length: number;
      opsLength: number;
      droppedTotal: number;
    }
  | { type: 'close' };

export type FromWorker =
  | { type: 'ready'; metricsUrl?: string }
  | ({ type: 'failed' } & WireError)
  /** The batch is applied (its buffer stays: live decoding keeps views of it). */
  | { type: 'ack'; seq: number }
  | { type: 'closed'; lines: string[] }
  /** A log line for the tap's thread to write: on this port, in order with `closed`, not lost with the worker's own stderr when it is terminated. */
  | { type: 'log'; line: string };
