/**
 * mcptap as a library. Everything the CLI does is reachable from here; nothing here imports
 * commander or touches process-wide state (no global OpenTelemetry provider, no global logger).
 */
export * from './model/jsonrpc.js';
export type * from './model/frame.js';
export type * from './model/exchange.js';
export type * from './model/events.js';
export { OUTCOMES, isFailure, type Outcome } from './model/outcome.js';

export * from './protocol/mcp.js';
export * from './protocol/error-codes.js';

export { NdjsonDecoder, type NdjsonDecoderOptions } from './parse/ndjson-decoder.js';
export { parseMessageBytes, counter, type SeqSource, type FrameOrigin } from './parse/frame-parser.js';
export { Correlator, type CorrelatorOptions, type StreamEnd } from './correlate/correlator.js';
export { Pipeline, type PipelineOptions } from './pipeline/pipeline.js';
export type { Sink, SinkStats } from './sinks/sink.js';

export { startStdioTap, serverExitCode, type StdioTapOptions, type StdioTap, type StdioTapResult } from './tap/stdio-tap.js';

export { RecordingStore, type OpenStoreOptions } from './store/recording-store.js';
export type * from './store/types.js';
export { SqliteRecorder, type SqliteRecorderOptions } from './sinks/sqlite-recorder.js';
export { Redactor, redactorFromEnv, type RedactorOptions, type RedactionRules } from './redact/redactor.js';
export { loadRedactionRules, parseRedactionRules } from './redact/redaction-rules.js';
export { rewriteRecording, type RewriteOptions, type RewriteResult, type RewriteStep } from './store/recording-rewrite.js';

export { OtelSpanSink } from './telemetry/otel-span-sink.js';
export { OtelMetricsSink } from './telemetry/otel-metrics-sink.js';
export { createTelemetry, type Telemetry } from './telemetry/telemetry.js';
export { resolveTelemetryConfig, type TelemetryConfig } from './telemetry/telemetry-config.js';
export { exportRecording, type ExportRecordingOptions, type ExportRecordingResult, type ExportProgress } from './replay/export-recording.js';
export { ReplayClock } from './replay/replay-clock.js';
export { jsonlLines, jsonlHeader } from './interchange/jsonl-export.js';
export { importJsonl, type ImportJsonlOptions, type ImportJsonlResult } from './interchange/jsonl-import.js';
export { JSONL_VERSION, decodeHeader, decodeLine, isoMicros, parseTimeUs, type JsonlHeader, type JsonlLine } from './interchange/jsonl-format.js';
export { recordingHar, harChunks, type Har, type HarEntry } from './interchange/har-export.js';
export { mergeRecordings, type MergeSource, type MergedRecording } from './interchange/merge-recordings.js';
export * from './mock/index.js';

export * from './reference/reference-server.js';

export * from './load/index.js';
export * from './client/index.js';
export { startHttpTap, DEFAULT_HTTP_TAP_PORT, DEFAULT_HTTP_TAP_HOST, type HttpTap, type HttpTapOptions } from './tap/http-tap.js';

export { McptapError, ERROR_CODES, isMcptapErrorCode, type McptapErrorCode, type ErrorKind } from './errors.js';
export { createLogger, silentLogger, type Logger, type LogLevel } from './util/logger.js';
export { systemClock, type Clock } from './util/clock.js';
export { VERSION } from './version.js';
