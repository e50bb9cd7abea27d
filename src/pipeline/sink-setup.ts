/**
 * Builds sinks and attaches them to a pipeline: the recorder (in the recording indexer process)
 * and live telemetry (in the pipeline worker, or in the tap's thread). Shared by `mcptap stdio`,
 * `mcptap http` and the demo, so every tap records and exports alike.
 */
import type { Pipeline } from './pipeline.js';
import type { Transport } from '../model/events.js';
import type { Logger } from '../util/logger.js';
import type { SqliteRecorder } from '../sinks/sqlite-recorder.js';
import { Redactor, withNames, type RedactionRules } from '../redact/redactor.js';
import { VERSION } from '../version.js';
import { RECORDING_DEFAULTS } from './recording-options.js';
import { McptapError } from '../errors.js';
import type { Telemetry } from '../telemetry/telemetry.js';
import { telemetryEnabled, type TelemetryConfig } from '../telemetry/telemetry-config.js';
import { recordingOtelMeta } from '../telemetry/recording-otel-meta.js';
import { SeededSpanIds } from '../telemetry/seeded-span-ids.js';
import type { CheckRulesSource } from '../check/live-check.js';
import type { CheckSink } from '../check/check-sink.js';

export interface TapSinkOptions {
  record?: string;
  requireRecording?: boolean;
  transport: Transport;
  /** Command line or upstream URL, stored with the recording. */
  target: string;
  logger: Logger;
  /** Extra JSON fields / headers to redact (added to the defaults). */
  redactFields?: string[];
  redactHeaders?: string[];
  /** The user's rules (`--redact FILE`): plain data, it crosses to the pipeline thread and the indexer. */
  redactRules?: RedactionRules;
  /** The redaction key (HMAC of secrets), one per tap run: a token made in the tap's thread matches the recorder's. Random when absent. */
  redactKey?: Buffer | string;
  /** Drops counted outside the pipeline's sinks (e.g. a worker pipeline's full side path), for the drop metrics. */
  extraDropCounts?: () => Array<[string, number]>;
  /** OpenTelemetry export (spans and metrics); nothing is created when nothing is configured. */
  telemetry?: TelemetryConfig;
  /** Where the console exporters (`OTEL_TRACES_EXPORTER=console`, …) write their lines; default stderr. */
  writeLine?: (line: string) => void;
  /** How long the recorder's writes wait for another writer of the file (ms; default 10 s). */
  lockWaitMs?: number;
  /** Called when recording fails and --require-recording is set: the tap should stop. */
  onFatal?: (err: Error) => void;
  /** The tap writes `telemetry.minter`'s contexts into forwarded requests (`--inject-trace-context`); said in the recording, for `export`. */
  injectsTraceContext?: boolean;
  /** The live spans were made elsewhere (another thread) and their context injected: said in the recording. */
  traceContextInjected?: boolean;
  /** Seed of the span ids (SeededSpanIds), random when absent: one for the live spans and the recording, so `mcptap export` reproduces the live ids. */
  spanIdSeed?: string;
  /** `--check RULES.yaml`: findings recorded (kind `check`) and counted (`mcptap.check.findings`); `speak`: said on stderr here. */
  check?: CheckRulesSource & { speak: boolean };
}

export interface AttachedSinks {
  readonly redactor: Redactor;
  readonly telemetry: Telemetry | undefined;
  /** Flush and close every sink; returns one line per sink worth telling the user (drops, where the recording is). */
  close(): Promise<string[]>;
  /** The recording (if any) may lack traffic: kept with its end, for `mcptap ls`. */
  markIncomplete(why: string): void;
  /** Events the recorder dropped (its queue full, or writes that failed: a full disk): what the recording lacks. */
  recorderDropped(): number;
}

export async function attachSinks(pipeline: Pipeline, opts: TapSinkOptions): Promise<AttachedSinks> {
  const redactor = new Redactor({
    ...withNames(opts.redactRules, opts.redactFields, opts.redactHeaders),
    ...(opts.redactKey !== undefined ? { key: opts.redactKey } : {}),
  });
  const spanIdSeed = opts.spanIdSeed ?? SeededSpanIds.randomSeed();
  let telemetry: Telemetry | undefined;
  if (opts.telemetry && telemetryEnabled(opts.telemetry)) {
    // Loaded on demand: a tap without telemetry never pays for loading the OpenTelemetry SDK.
    const { createTelemetry } = await import('../telemetry/telemetry.js');
    telemetry = await createTelemetry(opts.telemetry, {
      logger: opts.logger,
      clock: pipeline.clock,
      redact: (v, at) => redactor.redactContent(v, at),
      dropCounts: () => [...pipeline.sinks().map((s) => [s.name, s.stats().dropped] as [string, number]), ...(opts.extraDropCounts?.() ?? [])],
      spanIdSeed,
      ...(opts.writeLine ? { writeLine: opts.writeLine } : {}),
    });
  }
  let recorder: SqliteRecorder | undefined;
  if (opts.record) {
    try {
      const { SqliteRecorder } = await import('../sinks/sqlite-recorder.js');
      recorder = new SqliteRecorder({
        path: opts.record,
        recording: {
          transport: opts.transport,
          target: opts.target,
          startedUs: pipeline.clock.nowUs(),
          mcptapVersion: VERSION,
          meta: recordingOtelMeta({ spanIdSeed, traceContextInjected: opts.traceContextInjected ?? Boolean(opts.injectsTraceContext && telemetry?.minter) }),
        },
        logger: opts.logger,
        clock: pipeline.clock,
        redactor,
        ...(opts.requireRecording ? { requireRecording: true } : {}),
        ...(opts.onFatal ? { onFatal: opts.onFatal } : {}),
        // Off the traffic's path (the indexer): it can wait for another writer of the file rather than drop.
        busyTimeoutMs: opts.lockWaitMs ?? RECORDING_DEFAULTS.lockWaitMs,
      });
    } catch (err) {
      await telemetry?.shutdown();
      throw new McptapError('MCPTAP_RECORD_OPEN', `cannot record to ${opts.record}: ${(err as Error).message}`);
    }
    pipeline.addSink(recorder);
  }
  // After the recorder: a finding about an event reaches the recording after the event itself.
  const check = opts.check ? await openCheck(opts.check, pipeline, telemetry, recorder, opts.writeLine) : undefined;
  for (const sink of telemetry?.sinks ?? []) pipeline.addSink(sink);
  return {
    redactor,
    telemetry,
    markIncomplete: (why) => recorder?.markIncomplete(why),
    recorderDropped: () => recorder?.stats().dropped ?? 0,
    async close() {
      // The end's findings (pending requests, assertions over all exchanges) while the recorder still takes them.
      check?.();
      await pipeline.close();
      await telemetry?.shutdown();
      const lines: string[] = [];
      if (recorder) {
        const s = recorder.stats();
        if (s.dropped > 0) lines.push(`recording ${opts.record}: ${s.dropped} events dropped (${s.droppedQueue} queue full, ${s.droppedWrite} write failures)`);
      }
      return lines;
    },
  };
}

/** The live check sink: findings recorded as anomalies, counted, said where `speak`. Returns its end: the end's findings, the summary. */
async function openCheck(
  source: CheckRulesSource & { speak: boolean },
  pipeline: Pipeline,
  telemetry: Telemetry | undefined,
  recorder: SqliteRecorder | undefined,
  writeLine: ((line: string) => void) | undefined,
): Promise<() => void> {
  const { liveCheckSink, findingAnomaly, checkSummary } = await import('../check/live-check.js');
  const counter = telemetry?.meter?.createCounter('mcptap.check.findings', {
    description: 'Findings of the live check rules (--check), by rule and severity',
    unit: '{finding}',
  });
  const say = source.speak ? (writeLine ?? ((line: string) => void process.stderr.write(`${line}\n`))) : undefined;
  const sink: CheckSink = liveCheckSink({
    source,
    onFinding: (f) => {
      recorder?.onEvent(findingAnomaly(f, pipeline.clock.nowUs()));
      counter?.add(1, { rule: f.ruleId, severity: f.severity });
    },
    ...(say && { say }),
  });
  pipeline.addSink(sink);
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    say?.(checkSummary(sink.finish(), source.name));
  };
}
