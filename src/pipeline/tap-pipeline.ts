/**
 * The pipeline a tap feeds, with the sinks it asked for. One path records: the tap's ops go to a
 * worker thread (worker-pipeline.ts), which spools them for the recording indexer (a process of its
 * own that writes SQLite). Live telemetry runs in that worker too, or in this thread when the tap
 * needs the span ids while forwarding (`--inject-trace-context`) or when `thread: 'main'` asks (for
 * profiling); then the tap's input goes to both. With nothing downstream, nothing is decoded.
 */
import { randomBytes } from 'node:crypto';
import { Redactor } from '../redact/redactor.js';
import { SeededSpanIds } from '../telemetry/seeded-span-ids.js';
import { telemetryEnabled, type TelemetryConfig } from '../telemetry/telemetry-config.js';
import type { TraceContextMinter } from '../telemetry/trace-context-minter.js';
import { systemClock } from '../util/clock.js';
import type { Logger, LogLevel } from '../util/logger.js';
import type { Transport } from '../model/events.js';
import { Pipeline } from './pipeline.js';
import { discardingInput, teeInput, type PipelineInput } from './pipeline-input.js';
import type { RecordingOptions } from './recording-options.js';
import { attachSinks, type AttachedSinks } from './sink-setup.js';
import type { WorkerPipeline } from './worker-pipeline.js';

export interface TapPipelineOptions {
  transport: Transport;
  /** Command line or upstream URL, stored with the recording. */
  target: string;
  logger: Logger;
  logLevel: LogLevel;
  maxLineBytes?: number;
  recording?: RecordingOptions;
  telemetry?: TelemetryConfig;
  /** Extra JSON fields / headers to redact (added to the defaults). */
  redactFields?: string[];
  redactHeaders?: string[];
  /** HMAC key of redaction tokens (`MCPTAP_REDACT_KEY`): equal secrets get equal tokens across runs. Random when absent. */
  redactKey?: Buffer | string;
  /** The tap writes trace context into forwarded requests when span export is on (`--inject-trace-context`). */
  injectsTraceContext?: boolean;
  /** Where decoding and live telemetry run: a worker thread (default) or this one (profiling, debugging). */
  thread?: 'worker' | 'main';
  /** Niceness of the worker thread (Linux); default: 0 when recording, 5 for telemetry alone. */
  workerNice?: number;
  /** Recording failed under `required`: the tap should stop. */
  onFatal?: (err: Error) => void;
}

export interface TapPipeline {
  readonly input: PipelineInput;
  /** Makes header tokens in the tap's thread; same key as the recorder's. */
  readonly redactor: Redactor;
  /** Present when live spans run in this thread and the tap injects trace context. */
  readonly minter: TraceContextMinter | undefined;
  readonly metricsUrl: string | undefined;
  /**
   * Flushes and closes everything; one line per thing worth telling the user (drops). `incomplete`:
   * why the recording lacks what it should hold (kept with it, see RecordingEnd). Idempotent.
   */
  close(incomplete?: string): Promise<string[]>;
}

/** Live telemetry runs in a worker by default; this thread when the tap needs its span ids, or when asked. */
export async function openTapPipeline(opts: TapPipelineOptions): Promise<TapPipeline> {
  const redactKey = opts.redactKey ?? randomBytes(32);
  const redactor = new Redactor({ fields: opts.redactFields ?? [], headers: opts.redactHeaders ?? [], key: redactKey });
  const telemetryOn = Boolean(opts.telemetry && telemetryEnabled(opts.telemetry));
  const injects = Boolean(opts.injectsTraceContext && opts.telemetry?.injectTraceContext);
  const decodeHere = opts.thread === 'main' || (telemetryOn && injects);
  if (!opts.recording && !telemetryOn && !decodeHere) {
    // Nothing downstream: nothing is decoded; such a tap costs what a bare forwarder costs.
    return { input: discardingInput(systemClock), redactor, minter: undefined, metricsUrl: undefined, close: async () => [] };
  }
  // One seed for the live spans and the recording, wherever each is made: `mcptap export` then reproduces the live ids.
  const spanIdSeed = SeededSpanIds.randomSeed();
  const common = { transport: opts.transport, target: opts.target, redactKey, spanIdSeed, ...redactLists(opts) };
  let here: { pipeline: Pipeline; sinks: AttachedSinks } | undefined;
  if (decodeHere) {
    const pipeline = new Pipeline({ logger: opts.logger, ...(opts.maxLineBytes !== undefined ? { maxLineBytes: opts.maxLineBytes } : {}) });
    const telemetry = telemetryOn ? { telemetry: opts.telemetry!, injectsTraceContext: injects } : {};
    here = { pipeline, sinks: await attachSinks(pipeline, { ...common, ...telemetry, logger: opts.logger }) };
  }
  let worker: WorkerPipeline | undefined;
  if (opts.recording || (telemetryOn && !here)) {
    const { WorkerPipeline } = await import('./worker-pipeline.js');
    try {
      worker = await WorkerPipeline.start({
        sinks: {
          ...common,
          ...(here ? {} : opts.telemetry ? { telemetry: opts.telemetry } : {}),
          // Spans made in this thread with their context in the forwarded bytes: said in the recording, for `export`.
          ...(here?.sinks.telemetry?.minter && injects ? { traceContextInjected: true } : {}),
        },
        ...(opts.recording ? { recording: opts.recording } : {}),
        logger: opts.logger,
        logLevel: opts.logLevel,
        nice: opts.workerNice ?? (opts.recording?.required || !telemetryOn || here ? 0 : DEFAULT_TELEMETRY_NICE),
        ...(opts.maxLineBytes !== undefined ? { maxLineBytes: opts.maxLineBytes } : {}),
        ...(opts.onFatal ? { onFatal: opts.onFatal } : {}),
      });
    } catch (err) {
      await here?.sinks.close();
      throw err;
    }
  }
  const metricsUrl = here?.sinks.telemetry?.metricsUrl ?? worker?.metricsUrl;
  const input = here && worker ? teeInput(worker, here.pipeline) : (worker ?? here!.pipeline);
  let closing: Promise<string[]> | undefined;
  const close = (incomplete?: string) => {
    closing ??= Promise.all([worker?.close(incomplete) ?? [], here?.sinks.close() ?? []]).then(([a, b]) => [...a, ...b]);
    return closing;
  };
  return { input, redactor, minter: here?.sinks.telemetry?.minter, metricsUrl, close };
}

/**
 * Live telemetry (decoding, spans, metrics) is background work that yields to forwarding (and to
 * the host and the server on the same machine) under CPU contention. A worker that only spools a
 * recording must keep up (the indexer that does the heavy part runs niced anyway), as must one
 * under `required`: those compete on equal terms.
 */
const DEFAULT_TELEMETRY_NICE = 5;

function redactLists(opts: TapPipelineOptions): { redactFields?: string[]; redactHeaders?: string[] } {
  return { ...(opts.redactFields ? { redactFields: opts.redactFields } : {}), ...(opts.redactHeaders ? { redactHeaders: opts.redactHeaders } : {}) };
}
