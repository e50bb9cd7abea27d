/**
 * The pipeline a tap feeds, with the sinks it asked for: its side path (side-path.ts: the recording, live telemetry in a
 * worker), or a pipeline on this thread when the tap needs the span ids while forwarding (`--inject-trace-context`) or
 * `thread: 'main'` asks (profiling), or both (the input goes to each). With nothing downstream, nothing is decoded.
 * No wait at start-up (the worker boots beside the traffic) but for `required` recordings and sinks on this thread; what a
 * tap can check in a millisecond (the recording's directory and header, the spool's place, the metrics port) fails here.
 */
import { randomBytes } from 'node:crypto';
import { McptapError } from '../errors.js';
import { Redactor, withNames, type RedactionRules } from '../redact/redactor.js';
import { SeededSpanIds } from '../telemetry/seeded-span-ids.js';
import { telemetryEnabled, type TelemetryConfig } from '../telemetry/telemetry-config.js';
import type { TraceContextMinter } from '../telemetry/trace-context-minter.js';
import { systemClock } from '../util/clock.js';
import type { Logger, LogLevel } from '../util/logger.js';
import type { Transport } from '../model/events.js';
import type { Pipeline } from './pipeline.js';
import { discardingInput, teeInput, type PipelineInput } from './pipeline-input.js';
import type { RecordingOptions } from './recording-options.js';
import type { AttachedSinks, TapSinkOptions } from './sink-setup.js';
import type { SidePath } from './side-path.js';
import type { CheckRulesSource } from '../check/live-check.js';
import type { PrintSinkOptions } from '../sinks/print-sink.js';
import { createServer } from 'node:net';
import { precheckRecordingFile } from '../store/recording-file-precheck.js';

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
  /** The user's rules (`--redact FILE`), applied with the built-in ones everywhere they apply. */
  redactRules?: RedactionRules;
  /** HMAC key of redaction tokens (`MCPTAP_REDACT_KEY`): equal secrets get equal tokens across runs. Random when absent. */
  redactKey?: Buffer | string;
  /** The tap writes trace context into forwarded requests when span export is on (`--inject-trace-context`). */
  injectsTraceContext?: boolean;
  /** Where decoding and live telemetry run: a worker thread (default) or this one (profiling, debugging). */
  thread?: 'worker' | 'main';
  /** Niceness of the worker thread (live telemetry; Linux); default 5. */
  workerNice?: number;
  /** Recording failed under `required`: the tap should stop. */
  onFatal?: (err: Error) => void;
  /**
   * `--check RULES.yaml` (text and name, validated by the caller): run by the recorder's pipeline,
   * which records the findings and says them, and by live telemetry's, which counts them.
   */
  check?: CheckRulesSource;
  /** `--print`: a line per completed exchange through `writeLine` (stderr); decoded on this thread. */
  print?: PrintSinkOptions;
}

export interface TapPipeline {
  readonly input: PipelineInput;
  /** Makes header tokens in the tap's thread; same key as the recorder's. */
  readonly redactor: Redactor;
  /** Present when live spans run in this thread and the tap injects trace context. */
  readonly minter: TraceContextMinter | undefined;
  /** Resolves once every sink is up, with the Prometheus scrape URL if one is served; rejects with why they could not start. */
  readonly ready: Promise<{ metricsUrl?: string }>;
  /** Flushes and closes everything; the lines worth telling the user. `incomplete`: why the recording lacks traffic (see RecordingEnd). Idempotent. */
  close(incomplete?: string): Promise<string[]>;
  /** Once closing: the process may exit without losing recorded traffic (the indexer holds it all); telemetry may be lost. */
  readonly handedOver: Promise<void>;
  /** Once closed: what of the forwarded traffic the recording lacks (SidePath.recordingLoss). */
  recordingLoss(): { bytes: number; events: number };
  /** Right before an exit on a signal: see SidePath.checkIndexer. */
  checkIndexer(): void;
}

/** Live telemetry runs in a worker by default; this thread when the tap needs its span ids, or when asked. */
export async function openTapPipeline(opts: TapPipelineOptions): Promise<TapPipeline> {
  const redactKey = opts.redactKey ?? randomBytes(32);
  const redactor = new Redactor({ ...withNames(opts.redactRules, opts.redactFields, opts.redactHeaders), key: redactKey });
  const telemetryOn = Boolean(opts.telemetry && telemetryEnabled(opts.telemetry));
  const injects = Boolean(opts.injectsTraceContext && opts.telemetry?.injectTraceContext);
  // Checks with nothing else downstream run here: no thread for them alone.
  const checkOnly = opts.check !== undefined && !opts.recording && !telemetryOn;
  const decodeHere = opts.thread === 'main' || (telemetryOn && injects) || checkOnly || opts.print !== undefined;
  if (telemetryOn) await checkMetricsPort(opts.telemetry);
  // One seed for the live spans and the recording, wherever each is made: `mcptap export` then reproduces the live ids.
  const { transport, target, redactFields, redactHeaders, redactRules } = opts;
  const common: Common = { transport, target, redactFields, redactHeaders, redactRules, redactKey, spanIdSeed: SeededSpanIds.randomSeed() };
  const here = decodeHere ? await openHere(opts, common, telemetryOn, injects) : undefined;
  const side =
    opts.recording || (telemetryOn && !here)
      ? await openSidePath(opts, common, here, telemetryOn).catch(async (err: unknown) => {
          await here?.sinks.close();
          throw err;
        })
      : undefined;
  const ready = (side?.ready ?? Promise.resolve()).then(() => {
    const metricsUrl = here?.sinks.telemetry?.metricsUrl ?? side?.metricsUrl;
    return metricsUrl ? { metricsUrl } : {};
  });
  // Sinks that cannot start while traffic already flows: said once; the traffic goes on unobserved.
  ready.catch((err: Error) => opts.logger.error(`${err.message}; traffic is forwarded, but not observed`));
  // Nothing downstream: nothing is decoded; such a tap costs what a bare forwarder costs.
  const input = here && side ? teeInput(side, here.pipeline) : (side ?? here?.pipeline ?? discardingInput(systemClock));
  let closing: Promise<string[]> | undefined;
  const close = (incomplete?: string) => {
    closing ??= Promise.all([side?.close(incomplete) ?? [], here?.sinks.close() ?? []]).then(([a, b]) => [...a, ...b]);
    return closing;
  };
  const handedOver = side?.handedOver ?? Promise.resolve();
  const recordingLoss = () => side?.recordingLoss ?? { bytes: 0, events: 0 };
  const checkIndexer = () => side?.checkIndexer();
  return { input, redactor, minter: here?.sinks.telemetry?.minter, ready, close, handedOver, recordingLoss, checkIndexer };
}

/** What the sinks of both places are built from. */
type Common = Pick<TapSinkOptions, 'transport' | 'target' | 'redactKey' | 'redactFields' | 'redactHeaders' | 'redactRules'> & { spanIdSeed: string };

interface Here {
  pipeline: Pipeline;
  sinks: AttachedSinks;
}

/** Decoding and live telemetry on this thread (the tap needs the span ids while forwarding, or profiling asks). */
async function openHere(opts: TapPipelineOptions, common: Common, telemetryOn: boolean, injects: boolean): Promise<Here> {
  // Loaded on demand: most taps decode in the pipeline thread, and start-up pays for every module.
  const [{ Pipeline }, { attachSinks }] = await Promise.all([import('./pipeline.js'), import('./sink-setup.js')]);
  const pipeline = new Pipeline({ logger: opts.logger, maxLineBytes: opts.maxLineBytes });
  const telemetry = telemetryOn ? { telemetry: opts.telemetry, injectsTraceContext: injects } : {};
  // The checks count findings with telemetry, and say them without a recording (else the recorder does).
  const check = checkFor(opts, !opts.recording || telemetryOn);
  const sinks = await attachSinks(pipeline, { ...common, ...telemetry, ...check, logger: opts.logger });
  if (opts.print) {
    const { PrintSink } = await import('../sinks/print-sink.js');
    pipeline.addSink(new PrintSink(opts.print));
  }
  return { pipeline, sinks };
}

/** The side path: the recording, and live telemetry in the worker unless it runs `here`. */
async function openSidePath(opts: TapPipelineOptions, common: Common, here: Here | undefined, telemetryOn: boolean): Promise<SidePath> {
  const { SidePath } = await import('./side-path.js');
  // The recording's directory and header fail here, before any traffic; the spool's place in SpooledRecording.open.
  if (opts.recording) precheckRecordingFile(opts.recording.path);
  const minted = here?.sinks.telemetry?.minter !== undefined && opts.telemetry?.injectTraceContext === true && opts.injectsTraceContext === true;
  const side = new SidePath({
    sinks: {
      ...common,
      ...(here ? {} : opts.telemetry ? { telemetry: opts.telemetry } : {}),
      // For the recorder's pipeline (it says the findings), and for live telemetry's here (it counts them).
      ...checkFor(opts, opts.recording !== undefined || (!here && telemetryOn)),
      // Spans made in this thread with their context in the forwarded bytes: said in the recording, for `export`.
      ...(minted ? { traceContextInjected: true } : {}),
    },
    ...(opts.recording ? { recording: opts.recording } : {}),
    logger: opts.logger,
    logLevel: opts.logLevel,
    nice: opts.workerNice ?? DEFAULT_TELEMETRY_NICE,
    maxLineBytes: opts.maxLineBytes,
    onFatal: opts.onFatal,
    // A required recording must be known to work before any traffic: it is waited for, and so is the worker beside it.
    ...(opts.recording?.required ? {} : { bootDeadlineMs: BOOT_DEADLINE_MS }),
  });
  if (opts.recording?.required) await side.ready;
  return side;
}

/** Live telemetry (decoding, spans, metrics) is background work that yields to forwarding, the host and the server under contention. */
const DEFAULT_TELEMETRY_NICE = 5;

/** The worker boots when the server first answers, or after this long: its start-up would compete with the server's (docs/architecture.md). */
const BOOT_DEADLINE_MS = 2000;

/** `--check` where `runs`: said there unless a recording's indexer says the findings. */
function checkFor(opts: TapPipelineOptions, runs: boolean): Pick<TapSinkOptions, 'check'> {
  return opts.check && runs ? { check: { ...opts.check, speak: !opts.recording } } : {};
}

/** A `--metrics` port that cannot be bound fails now (exit 2), before any traffic: the sinks start later, with traffic flowing. */
async function checkMetricsPort(telemetry: TelemetryConfig | undefined): Promise<void> {
  const where = telemetry?.metrics.prometheus;
  if (!where || where.port === 0) return;
  const probe = createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject);
      probe.listen(where.port, where.host, resolve);
    });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    const hint = code === 'EADDRINUSE' ? ': another process has the port, pick another (or port 0 for a free one)' : '';
    throw new McptapError('MCPTAP_METRICS_LISTEN', `--metrics ${where.host}:${where.port}: cannot listen (${code})${hint}`);
  }
  await new Promise<void>((resolve) => probe.close(() => resolve()));
}
