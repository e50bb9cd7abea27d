/**
 * The telemetry flags every tap command shares, and their mapping to a typed TelemetryConfig.
 * Thin by rule: validation and the OTEL_* environment rules live in src/telemetry/telemetry-config.ts.
 */
import type { Command } from 'commander';
import { TELEMETRY_FLAGS } from './stdio-option-flags.js';
import { resolveTelemetryConfig, type Env, type TelemetryConfig, type TelemetryFlags } from '../telemetry/telemetry-config.js';

/** Adds `--otlp`, `--metrics`, `--service-name`, `--capture-content`, `--inject-trace-context`. */
export function addTelemetryOptions(cmd: Command): Command {
  return addMetricsOptions(cmd, 'export a span per exchange and metrics over OTLP/HTTP to this base URL (/v1/traces, /v1/metrics are appended)')
    .option(TELEMETRY_FLAGS.captureContent, 'also export tool arguments and results, request params and resource URIs (redacted, truncated)')
    .option(
      TELEMETRY_FLAGS.injectTraceContext,
      "CHANGES THE FORWARDED BYTES: each host->server request is re-serialized with params._meta.traceparent set to the tap's span " +
        '(so the server span becomes its child; whitespace may change, ids are kept); other messages pass unchanged. Needs span export (--otlp). ' +
        'stdio only: the HTTP tap says so and forwards the bytes unchanged',
    )
    .addHelpText('after', ENV_HELP + SAMPLER_HELP);
}

/** `mcptap load`'s: `--otlp`, `--metrics`, `--service-name` for its live metrics (it exports no spans). */
export function addLoadMetricsOptions(cmd: Command): Command {
  return addMetricsOptions(cmd, 'export live load metrics over OTLP/HTTP to this base URL (/v1/metrics is appended)').addHelpText('after', ENV_HELP);
}

function addMetricsOptions(cmd: Command, otlp: string): Command {
  return cmd
    .option(TELEMETRY_FLAGS.otlp, otlp)
    .option(TELEMETRY_FLAGS.metrics, 'serve Prometheus metrics at http://HOST:PORT/metrics (port 0 picks a free port)')
    .option(TELEMETRY_FLAGS.serviceName, 'OpenTelemetry service.name (default: $OTEL_SERVICE_NAME or "mcptap")');
}

const ENV_HELP = `
Telemetry also follows the standard variables: OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
OTEL_EXPORTER_OTLP_PROTOCOL (http/protobuf | http/json), OTEL_EXPORTER_OTLP_HEADERS, OTEL_SERVICE_NAME,
OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_EXPORTER and OTEL_METRICS_EXPORTER (otlp | console | none; metrics
also prometheus). "console" writes JSON lines to stderr. Nothing is exported unless one of these is set.`;

const SAMPLER_HELP = `
OTEL_TRACES_SAMPLER picks the exchanges that get a span (parentbased_always_on by default; always_on, always_off,
traceidratio, parentbased_always_off, parentbased_traceidratio), with the ratio 0..1 in OTEL_TRACES_SAMPLER_ARG;
metrics always count every exchange. Example, 10% of traces and all metrics:
  OTEL_TRACES_SAMPLER=parentbased_traceidratio OTEL_TRACES_SAMPLER_ARG=0.1 mcptap http --otlp http://collector:4318 ...`;

/** The parsed flags (commander's camelCased option values) and the environment, as a TelemetryConfig. */
export function telemetryConfigFromOptions(opts: Readonly<Record<string, unknown>>, env: Env = process.env): TelemetryConfig {
  return resolveTelemetryConfig(telemetryFlagsOf(opts), env);
}

export function telemetryFlagsOf(opts: Readonly<Record<string, unknown>>): TelemetryFlags {
  const flags: TelemetryFlags = {};
  if (typeof opts.otlp === 'string') flags.otlp = opts.otlp;
  if (typeof opts.metrics === 'string') flags.metrics = opts.metrics;
  if (typeof opts.serviceName === 'string') flags.serviceName = opts.serviceName;
  if (opts.captureContent === true) flags.captureContent = true;
  if (opts.injectTraceContext === true) flags.injectTraceContext = true;
  return flags;
}
