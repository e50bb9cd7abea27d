/**
 * The pipeline a tap command feeds: its sinks (--record, telemetry flags) and the thread they run
 * on. With anything to do downstream, decoding, correlation and the sinks run on a worker thread
 * (WorkerPipeline), so the tap's own thread does nothing but move bytes. In-process instead when
 * `--inject-trace-context` needs the span ids while forwarding, or when MCPTAP_PIPELINE_THREAD=main
 * says so (debugging, profiling). With nothing downstream at all, nothing is decoded.
 */
import { randomBytes } from 'node:crypto';
import { Pipeline } from '../pipeline/pipeline.js';
import { discardingInput, type PipelineInput } from '../pipeline/pipeline-input.js';
import { attachSinks, type TapSinkOptions } from '../pipeline/sink-setup.js';
import { REDACT_KEY_ENV, Redactor } from '../redact/redactor.js';
import { telemetryEnabled } from '../telemetry/telemetry-config.js';
import type { TraceContextMinter } from '../telemetry/trace-context-minter.js';
import type { Logger, LogLevel } from '../util/logger.js';
import { systemClock } from '../util/clock.js';

export interface TapPipelineOptions extends Omit<TapSinkOptions, 'redactKey' | 'extraDropCounts'> {
  logLevel: LogLevel;
  maxLineBytes?: number;
}

export interface TapPipeline {
  readonly input: PipelineInput;
  /** Makes header tokens in the tap's thread; same key as the recorder's. */
  readonly redactor: Redactor;
  /** Present with --inject-trace-context and span export (the pipeline then runs in-process). */
  readonly minter: TraceContextMinter | undefined;
  readonly metricsUrl: string | undefined;
  readonly thread: 'main' | 'worker';
  /**
   * Flush and close everything; one line per thing worth telling the user (drops). `incomplete`:
   * why the recording lacks what it should hold (kept with it, see RecordingEnd).
   */
  close(incomplete?: string): Promise<string[]>;
}

export async function openTapPipeline(opts: TapPipelineOptions): Promise<TapPipeline> {
  const envKey = process.env[REDACT_KEY_ENV];
  const redactKey = envKey ? envKey : randomBytes(32);
  const redactor = new Redactor({ fields: opts.redactFields ?? [], headers: opts.redactHeaders ?? [], key: redactKey });
  const telemetryOn = Boolean(opts.telemetry && telemetryEnabled(opts.telemetry));
  const busy = Boolean(opts.record) || telemetryOn;
  const injects = Boolean(opts.injectsTraceContext && opts.telemetry?.injectTraceContext);
  const forced = process.env.MCPTAP_PIPELINE_THREAD;
  if (busy && !injects && forced !== 'main') {
    const { WorkerPipeline } = await import('../pipeline/worker-pipeline.js');
    const { logger, onFatal, logLevel, maxLineBytes, ...sinks } = opts;
    const wp = await WorkerPipeline.start({
      sinks: { ...sinks, redactKey, recorderWriter: 'inline' },
      logger,
      logLevel,
      ...recordingTuning(process.env),
      nice: pipelineNice(process.env.MCPTAP_PIPELINE_NICE, opts.requireRecording === true || !telemetryOn),
      ...(maxLineBytes !== undefined ? { maxLineBytes } : {}),
      ...(onFatal ? { onFatal } : {}),
    });
    if (wp.metricsUrl) logger.warn(`Prometheus metrics at ${wp.metricsUrl}`);
    return { input: wp, redactor, minter: undefined, metricsUrl: wp.metricsUrl, thread: 'worker', close: (incomplete) => wp.close(incomplete) };
  }
  if (!busy) {
    // Nothing downstream: nothing is decoded (a bare forwarder), unless a debugging override asks.
    if (forced !== 'main') return { input: discardingInput(systemClock), redactor, minter: undefined, metricsUrl: undefined, thread: 'main', close: async () => [] };
  }
  const pipeline = new Pipeline({ logger: opts.logger, ...(opts.maxLineBytes !== undefined ? { maxLineBytes: opts.maxLineBytes } : {}) });
  const sinks = await attachSinks(pipeline, { ...opts, redactKey });
  if (sinks.telemetry?.metricsUrl) opts.logger.warn(`Prometheus metrics at ${sinks.telemetry.metricsUrl}`);
  const close = (incomplete?: string) => {
    if (incomplete) sinks.markIncomplete(incomplete);
    return sinks.close();
  };
  return { input: pipeline, redactor, minter: sinks.telemetry?.minter, metricsUrl: sinks.telemetry?.metricsUrl, thread: 'main', close };
}

/** The signals a tap passes on to its server, and obeys itself once the server is gone. */
export const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * Closes a tap's pipeline once its traffic is over, which may take a while: the recording's
 * backlog is indexed then. A SIGINT, SIGTERM or SIGHUP meanwhile is obeyed at once (hosts send
 * SIGTERM, then SIGKILL a few seconds later): the process exits with `exitCode`, the recording's
 * indexer (a process of its own) completes the recording in the background, and telemetry not yet
 * exported is lost. Returns the lines worth telling the user.
 */
export async function closeObeyingSignals(pipeline: TapPipeline, opts: { logger: Logger; record?: string; exitCode: number }): Promise<string[]> {
  const stopNow = (sig: NodeJS.Signals) => {
    const recording = opts.record ? `; the recording indexer completes ${opts.record} in the background` : '';
    opts.logger.warn(`${sig} while closing: stopping now${recording}`);
    process.exit(opts.exitCode);
  };
  for (const s of STOP_SIGNALS) process.once(s, stopNow);
  try {
    return await pipeline.close();
  } finally {
    for (const s of STOP_SIGNALS) process.off(s, stopNow);
  }
}

/**
 * The worker's niceness. Live telemetry (decoding, spans, metrics) is background work that yields
 * to forwarding (and to the host and the server on the same machine) under CPU contention. A
 * worker that only spools the recording does little per batch and must keep up (the indexer that
 * does the heavy part runs at 19 anyway), as must one under --require-recording: those compete on
 * equal terms. MCPTAP_PIPELINE_NICE (0-19) overrides.
 */
function pipelineNice(env: string | undefined, mustKeepUp: boolean): number {
  return envInt(env, 0, 19) ?? (mustKeepUp ? 0 : DEFAULT_PIPELINE_NICE);
}

const DEFAULT_PIPELINE_NICE = 5;

/**
 * MCPTAP_SPOOL_BYTES: the recording spool's size (default 1 GiB; a batch larger than the spool is
 * spooled in parts, but a single HTTP message larger than the spool is lost: keep it well above the
 * largest message). MCPTAP_SPOOL_DIR: where the spool goes (default: RAM, /dev/shm, when it has room,
 * else beside the recording; spool.ts). MCPTAP_INDEX_LAG_MS: how long indexing waits while traffic
 * flows (default 10 s).
 */
function recordingTuning(env: NodeJS.ProcessEnv): { spoolBytes?: number; indexLagMs?: number } {
  const spoolBytes = envInt(env.MCPTAP_SPOOL_BYTES, 1, Number.MAX_SAFE_INTEGER);
  const indexLagMs = envInt(env.MCPTAP_INDEX_LAG_MS, 1, Number.MAX_SAFE_INTEGER);
  return { ...(spoolBytes !== undefined ? { spoolBytes } : {}), ...(indexLagMs !== undefined ? { indexLagMs } : {}) };
}

/** An integer setting from the environment within [min, max]; undefined when unset or not one. */
function envInt(v: string | undefined, min: number, max: number): number | undefined {
  const n = v === undefined || v.trim() === '' ? NaN : Number(v);
  return Number.isInteger(n) && n >= min && n <= max ? n : undefined;
}
