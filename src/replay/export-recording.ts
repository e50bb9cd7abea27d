/**
 * `mcptap export`: a recording's exchanges as OpenTelemetry spans, sent after the fact with their
 * original timestamps. The recording turns back into its TapEvent stream (`store.events`) and runs
 * through the same OtelSpanSink the live tap used, so names, attributes, events, status and trace
 * linkage are the live ones. Span ids are the live ones too when the recording holds the tap's
 * span-id seed (`meta.otel`, written by every tap since it existed); older recordings get a seed
 * derived from the recording itself, so exporting twice still gives the same ids.
 *
 * Only spans: OTel metric points carry their collection time, so replayed metrics would be
 * stamped "now" and mislead. The export paces itself against the span queue (nothing is dropped
 * for being fast) and stops at the first batch the collector did not take.
 */
import { createHash } from 'node:crypto';
import type { Redact } from '../telemetry/otel-content.js';
import type { RecordingStore } from '../store/recording-store.js';
import type { RecordingInfo } from '../store/types.js';
import { McptapError } from '../errors.js';
import { NO_SPAN_COUNTS, notDelivered, type SpanExportCounts } from '../telemetry/counting-span-processor.js';
import { readRecordingOtelMeta } from '../telemetry/recording-otel-meta.js';
import { createTelemetry, type Telemetry } from '../telemetry/telemetry.js';
import type { TelemetryConfig } from '../telemetry/telemetry-config.js';
import { silentLogger, type Logger } from '../util/logger.js';
import { ReplayClock } from './replay-clock.js';

export interface ExportProgress {
  /** Exchange spans ended so far. */
  exchanges: number;
  /** Exchanges in the recording. */
  totalExchanges: number;
}

export interface ExportRecordingOptions {
  store: RecordingStore;
  recordingId: number;
  /** Where spans go (`traces.otlp` or `traces.console`); its metric settings are ignored. */
  config: TelemetryConfig;
  logger?: Logger;
  /** Applied to captured content (the recording is already redacted; this adds the user's rules). */
  redact?: Redact;
  onProgress?: (p: ExportProgress) => void;
}

export interface ExportRecordingResult {
  recordingId: number;
  /** Exchange spans and `mcp.session` spans made. */
  exchangeSpans: number;
  sessionSpans: number;
  counts: SpanExportCounts;
  /** The recording held the live tap's seed: span ids equal the live ones. */
  liveSpanIds: boolean;
  /** Some spans did not reach the collector (it refused or could not be reached). */
  failed: boolean;
  /** The replay stopped early because a batch failed. */
  aborted: boolean;
}

export async function exportRecording(opts: ExportRecordingOptions): Promise<ExportRecordingResult> {
  const { store, recordingId } = opts;
  const info = store.getRecording(recordingId);
  if (!info) throw new McptapError('MCPTAP_NO_RECORDING', `no recording ${recordingId}`);
  if (!opts.config.traces.otlp && !opts.config.traces.console) throw new McptapError('MCPTAP_BAD_FLAG', 'export needs a span destination (--otlp URL)');
  const meta = readRecordingOtelMeta(info.meta);
  const clock = new ReplayClock(info.startedUs);
  const timeoutMs = opts.config.traces.otlp?.timeoutMillis ?? 10_000;
  const telemetry = await createTelemetry(spansOnly(opts.config), {
    logger: opts.logger ?? silentLogger,
    clock,
    spanIdSeed: meta?.spanIdSeed ?? derivedSeed(info),
    ...(meta?.traceContextInjected ? { recordedInjection: true } : {}),
    ...(opts.redact ? { redact: opts.redact } : {}),
    // Shutdown includes the last batch and its retries: allow the exporter its whole timeout.
    shutdownTimeoutMillis: timeoutMs * 2 + 1000,
  });
  const replay = await replayInto(telemetry, opts, clock);
  await telemetry.shutdown();
  const counts = telemetry.spanCounts() ?? NO_SPAN_COUNTS;
  return {
    recordingId,
    ...replay,
    counts,
    liveSpanIds: meta !== undefined,
    failed: replay.aborted || notDelivered(counts) > 0,
  };
}

async function replayInto(telemetry: Telemetry, opts: ExportRecordingOptions, clock: ReplayClock) {
  const totalExchanges = opts.store.summary(opts.recordingId).exchanges;
  const batch = Math.max(1, opts.config.spanQueue.maxExportBatchSize);
  let exchangeSpans = 0;
  let sessionSpans = 0;
  let aborted = false;
  for (const event of opts.store.events(opts.recordingId)) {
    clock.observe(event);
    for (const sink of telemetry.sinks) sink.onEvent(event);
    if (event.type === 'connection-opened') sessionSpans++;
    if (event.type !== 'exchange-completed' && event.type !== 'connection-closed') continue;
    if (event.type === 'exchange-completed') {
      // Counted apart from the call: `?.` skips evaluating its arguments when there is no listener.
      exchangeSpans++;
      opts.onProgress?.({ exchanges: exchangeSpans, totalExchanges });
    }
    // Wait for the exporter whenever a batch is ready: the queue never fills, and a dead collector stops us early.
    if ((telemetry.spanCounts() ?? NO_SPAN_COUNTS).queued >= batch) {
      await telemetry.forceFlush();
      if ((aborted = (telemetry.spanCounts() ?? NO_SPAN_COUNTS).droppedExportFailed > 0)) break;
    }
  }
  // Exchanges still in flight at the end of the recording are ended (as unfinished) by the sink's close.
  const pending = opts.store.exchanges({ recordingId: opts.recordingId, outcome: 'pending' }).length;
  if (!aborted) exchangeSpans += pending;
  opts.onProgress?.({ exchanges: exchangeSpans, totalExchanges });
  return { exchangeSpans, sessionSpans, aborted };
}

/** Traces only, never injecting, nothing served. */
function spansOnly(config: TelemetryConfig): TelemetryConfig {
  return {
    ...config,
    traces: { ...(config.traces.otlp ? { otlp: config.traces.otlp } : {}), ...(config.traces.console ? { console: true } : {}) },
    metrics: { intervalMillis: config.metrics.intervalMillis },
    injectTraceContext: false,
  };
}

/** For recordings without a stored seed: stable per recording, unrelated across recordings. */
function derivedSeed(info: RecordingInfo): string {
  return createHash('sha256').update(`mcptap-recording\u0000${info.id}\u0000${info.startedUs}\u0000${info.target}`).digest('hex').slice(0, 32);
}
