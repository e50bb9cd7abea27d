/**
 * What crosses between a {@link PipelineThread} (the tap's thread) and its pipeline worker.
 *
 * A batch is ONE transferred buffer holding every op's bytes back to back, in op order, then the
 * op list encoded by wire-codec.ts: per tick, one postMessage and one copy of the bytes, whatever
 * the number of chunks. Ops are tuples whose first element is an {@link Op} code; `len` fields say how many of
 * the buffer's next bytes are the op's.
 */
import type { WireError } from '../errors.js';
import type { LongStreamEdge, StreamEnd } from '../model/events.js';
import type { AnomalyKind, ConnectionInfo } from '../model/events.js';
import type { Channel, Direction } from '../model/frame.js';
import type { FrameOrigin } from '../model/frame.js';
import type { ClockOrigin } from '../util/clock.js';
import type { LogLevel } from '../util/logger.js';
import type { AnomalyExtra, ConnectionClose } from './pipeline-input.js';
import type { RecordingOptions } from './recording-options.js';
import type { SpoolHandover } from './spool.js';
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
/** The sinks' options as they cross to the worker; the recording comes as {@link RecordingOptions}. */
export type WorkerSinkOptions = Omit<TapSinkOptions, 'logger' | 'onFatal' | 'extraDropCounts' | 'record' | 'requireRecording'>;

export interface PipelineWorkerData {
  sinks: WorkerSinkOptions;
  logLevel: LogLevel;
  clockOrigin: ClockOrigin;
  maxLineBytes?: number;
  /** Scheduling niceness of the worker thread (Linux). */
  nice: number;
  recording?: RecordingOptions;
}

/** What the pipeline worker asks of the recording indexer, whose process the tap's thread owns (indexer-relay.ts). */
export type IndexerCall =
  | { kind: 'spooled'; end: number; waitingForRoom: boolean }
  | { kind: 'close'; end: number; endedUs: number; incomplete?: string }
  | { kind: 'abandon'; why: string };

/** What the recording indexer said, relayed to the pipeline worker. */
export type IndexerEvent =
  | { kind: 'ready' }
  | ({ kind: 'failed' } & WireError)
  | { kind: 'indexed'; position: number }
  | { kind: 'gone'; why: string }
  | { kind: 'closed'; lines: string[] };

export type ToWorker =
  | {
      type: 'batch';
      seq: number;
      /**
       * The ops' bytes are its first `length` bytes; the ops themselves (wire-codec.ts) the next
       * `opsLength` (a recycled buffer can be larger).
       */
      bytes: ArrayBuffer;
      length: number;
      opsLength: number;
      droppedTotal: number;
      /** Already in the spool (the tap's thread spooled it before this worker was up): for live telemetry only. */
      spooled?: true;
    }
  | { type: 'close'; incomplete?: string }
  /**
   * With a recording: its spool, which the tap's thread created at its start and wrote until now
   * (indexer-relay.ts), how far its indexer had got and its process id. Batches after this one are not spooled yet.
   */
  | { type: 'spool'; handover: SpoolHandover; indexed: number; pid?: number }
  | { type: 'indexer'; event: IndexerEvent };

export type FromWorker =
  | { type: 'ready'; metricsUrl?: string }
  | ({ type: 'failed' } & WireError)
  /** `buffer`: the batch's byte buffer, handed back for reuse once nothing refers to it any more. */
  | { type: 'ack'; seq: number; buffer?: ArrayBuffer }
  | { type: 'fatal'; message: string }
  /** `lostBytes`: traffic the recording lacks because it could not be spooled. */
  | { type: 'closed'; lines: string[]; lostBytes: number }
  /** Closing: every batch is in the spool and the indexer was told to end the recording; it finishes it even if this process dies now. */
  | { type: 'handed-over' }
  | { type: 'indexer'; call: IndexerCall }
  /** The worker is up and spools from now on: the tap's thread hands the spool over (`spool`). */
  | { type: 'take-spool' }
  /**
   * A log line, for the tap's thread to write. On this port, in order with `closed`: the worker's
   * own stderr reaches the tap's on a channel of its own, and lines still on their way there were
   * lost when the worker was terminated after `closed`.
   */
  | { type: 'log'; line: string };
