/**
 * The OTEL_* variables plus mcptap's flags, resolved into one validated {@link TelemetryConfig}; pure (env is a parameter). Flags win; nothing is
 * exported unless asked. Traces go to OTLP with `--otlp`, an OTLP endpoint variable or `OTEL_TRACES_EXPORTER=otlp` (default http://localhost:4318);
 * `console` is JSON lines on stderr; `none` wins over an endpoint. Metrics likewise (also `prometheus`, or `--metrics HOST:PORT`). OTEL_TRACES_SAMPLER
 * picks the span sampler (default `parentbased_always_on`); metrics are never sampled. `OTEL_SDK_DISABLED=true` ignores the environment, not flags.
 */
import { McptapError } from '../errors.js';
import { httpSchemeHint } from '../util/url-scheme-hint.js';

export interface OtlpTarget {
  /** Full signal URL (…/v1/traces or …/v1/metrics). */
  url: string;
  protocol: 'http/json' | 'http/protobuf';
  headers: Record<string, string>;
  timeoutMillis: number;
}

export interface TelemetryConfig {
  serviceName: string;
  resourceAttributes: Record<string, string>;
  traces: { otlp?: OtlpTarget; console?: boolean };
  metrics: { otlp?: OtlpTarget; prometheus?: { host: string; port: number }; console?: boolean; intervalMillis: number };
  /** Export resource URIs, tool arguments and results (redacted, truncated). */
  captureContent: boolean;
  /** Write the tap's span context into forwarded requests' `params._meta.traceparent`. */
  injectTraceContext: boolean;
  maxContentLength: number;
  spanQueue: { maxQueueSize: number; maxExportBatchSize: number; scheduledDelayMillis: number; exportTimeoutMillis: number };
  /** Which spans are recorded and exported (OTEL_TRACES_SAMPLER); absent: `parentbased_always_on`. */
  sampler?: SamplerConfig;
}

/** The OTel spec's sampler names, as OTEL_TRACES_SAMPLER spells them. */
export const SAMPLER_NAMES = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;

/** A sampler as plain data (the config crosses to the pipeline worker); telemetry.ts builds the SDK's. */
export interface SamplerConfig {
  name: (typeof SAMPLER_NAMES)[number];
  /** The ratio of the `*traceidratio` samplers, 0..1. */
  ratio?: number;
}

/** The telemetry flags every tap command shares (see src/cli/telemetry-options.ts). */
export interface TelemetryFlags {
  otlp?: string;
  metrics?: string;
  serviceName?: string;
  captureContent?: boolean;
  injectTraceContext?: boolean;
}

export type Env = Readonly<Record<string, string | undefined>>;

const DEFAULT_OTLP_BASE = 'http://localhost:4318';

/** True when the config exports anything at all (otherwise no providers or sinks are created). */
export function telemetryEnabled(c: TelemetryConfig): boolean {
  return Boolean(c.traces.otlp || c.traces.console || c.metrics.otlp || c.metrics.prometheus || c.metrics.console);
}

export function resolveTelemetryConfig(flags: TelemetryFlags, env: Env = {}): TelemetryConfig {
  // The OTel spec reads empty as unset (`${VAR}` templates leave it empty), so an empty PROMETHEUS_HOST keeps loopback.
  const set: Env = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v.trim() !== ''));
  const e: Env = set.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true' ? {} : set;
  if (flags.otlp !== undefined) httpUrl(flags.otlp, '--otlp');
  const resourceAttributes = parseKeyValues(e.OTEL_RESOURCE_ATTRIBUTES, 'OTEL_RESOURCE_ATTRIBUTES');
  const tracesList = exporterList(e.OTEL_TRACES_EXPORTER, 'OTEL_TRACES_EXPORTER', ['otlp', 'console', 'none']);
  const metricsList = exporterList(e.OTEL_METRICS_EXPORTER, 'OTEL_METRICS_EXPORTER', ['otlp', 'console', 'prometheus', 'none']);
  return {
    serviceName: flags.serviceName ?? e.OTEL_SERVICE_NAME ?? resourceAttributes['service.name'] ?? 'mcptap',
    resourceAttributes,
    traces: {
      ...(wantsOtlp(tracesList, flags, e, 'TRACES') ? { otlp: otlpTarget(flags, e, 'TRACES', 'v1/traces') } : {}),
      ...(tracesList?.includes('console') ? { console: true } : {}),
    },
    metrics: {
      ...(wantsOtlp(metricsList, flags, e, 'METRICS') ? { otlp: otlpTarget(flags, e, 'METRICS', 'v1/metrics') } : {}),
      ...prometheusOf(flags, e, metricsList),
      ...(metricsList?.includes('console') ? { console: true } : {}),
      intervalMillis: positiveInt(e.OTEL_METRIC_EXPORT_INTERVAL, 'OTEL_METRIC_EXPORT_INTERVAL') ?? 10_000,
    },
    captureContent: flags.captureContent ?? e.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT?.trim().toLowerCase() === 'true',
    injectTraceContext: flags.injectTraceContext ?? false,
    maxContentLength: 8192,
    ...samplerOf(e),
    spanQueue: {
      maxQueueSize: positiveInt(e.OTEL_BSP_MAX_QUEUE_SIZE, 'OTEL_BSP_MAX_QUEUE_SIZE') ?? 2048,
      maxExportBatchSize: positiveInt(e.OTEL_BSP_MAX_EXPORT_BATCH_SIZE, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE') ?? 512,
      scheduledDelayMillis: positiveInt(e.OTEL_BSP_SCHEDULE_DELAY, 'OTEL_BSP_SCHEDULE_DELAY') ?? 1000,
      exportTimeoutMillis: positiveInt(e.OTEL_BSP_EXPORT_TIMEOUT, 'OTEL_BSP_EXPORT_TIMEOUT') ?? 10_000,
    },
  };
}

function wantsOtlp(list: string[] | undefined, flags: TelemetryFlags, e: Env, signal: 'TRACES' | 'METRICS'): boolean {
  if (list?.includes('none')) return false;
  if (list?.includes('otlp')) return true;
  const endpointSet = flags.otlp !== undefined || Boolean(e[`OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`] || e.OTEL_EXPORTER_OTLP_ENDPOINT);
  // An explicit exporter list without `otlp` (e.g. only `console`) means no OTLP, unless the flag asks for it.
  return list === undefined ? endpointSet : flags.otlp !== undefined;
}

function otlpTarget(flags: TelemetryFlags, e: Env, signal: 'TRACES' | 'METRICS', path: string): OtlpTarget {
  const signalUrl = flags.otlp === undefined ? e[`OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`] : undefined;
  const url = signalUrl
    ? httpUrl(signalUrl, `OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`).toString()
    : signalPath(flags.otlp ?? e.OTEL_EXPORTER_OTLP_ENDPOINT ?? DEFAULT_OTLP_BASE, path);
  const signalProtocol = `OTEL_EXPORTER_OTLP_${signal}_PROTOCOL`;
  const protocolVar = e[signalProtocol] !== undefined ? signalProtocol : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const protocol = e[protocolVar] ?? 'http/protobuf';
  if (protocol !== 'http/json' && protocol !== 'http/protobuf') {
    throw configError(`${protocolVar}=${protocol} is not supported; use http/protobuf or http/json`);
  }
  const headers = {
    ...parseKeyValues(e.OTEL_EXPORTER_OTLP_HEADERS, 'OTEL_EXPORTER_OTLP_HEADERS'),
    ...parseKeyValues(e[`OTEL_EXPORTER_OTLP_${signal}_HEADERS`], `OTEL_EXPORTER_OTLP_${signal}_HEADERS`),
  };
  const signalTimeout = `OTEL_EXPORTER_OTLP_${signal}_TIMEOUT`;
  const timeoutMillis = positiveInt(e[signalTimeout], signalTimeout) ?? positiveInt(e.OTEL_EXPORTER_OTLP_TIMEOUT, 'OTEL_EXPORTER_OTLP_TIMEOUT') ?? 10_000;
  return { url, protocol, headers, timeoutMillis };
}

/** Base URL + signal path; a URL that already ends in a signal path is re-targeted to this one. */
function signalPath(base: string, path: string): string {
  const u = httpUrl(base, '--otlp / OTEL_EXPORTER_OTLP_ENDPOINT');
  u.pathname = `${u.pathname.replace(/\/v1\/(traces|metrics|logs)\/?$/, '').replace(/\/+$/, '')}/${path}`;
  return u.toString();
}

function prometheusOf(flags: TelemetryFlags, e: Env, list: string[] | undefined): { prometheus?: { host: string; port: number } } {
  if (flags.metrics !== undefined) return { prometheus: parseHostPort(flags.metrics) };
  if (!list?.includes('prometheus') || list.includes('none')) return {};
  return {
    prometheus: {
      host: e.OTEL_EXPORTER_PROMETHEUS_HOST ?? 'localhost',
      port: portOf(e.OTEL_EXPORTER_PROMETHEUS_PORT ?? '9464', 'OTEL_EXPORTER_PROMETHEUS_PORT'),
    },
  };
}

/** `HOST:PORT`, `[v6]:PORT`, `:PORT` or `PORT` (host defaults to 127.0.0.1; port 0 picks a free one). */
export function parseHostPort(text: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(text.trim()) ?? /^()()(\d+)$/.exec(text.trim());
  if (!m) throw configError(`--metrics expects HOST:PORT, got ${JSON.stringify(text)}`);
  return { host: m[1] || m[2] || '127.0.0.1', port: portOf(m[3]!, '--metrics') };
}

function portOf(text: string, what: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text.trim()) || n > 65535) throw configError(`${what}: ${JSON.stringify(text)} is not a port`);
  return n;
}

function httpUrl(text: string, what: string): URL {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw configError(`${what}: ${JSON.stringify(text)} is not a URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw configError(`${what}: only http and https URLs are supported, ${httpSchemeHint(text, u.protocol)}`);
  return u;
}

function exporterList(text: string | undefined, what: string, allowed: string[]): string[] | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  const list = text
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  const bad = list.find((x) => !allowed.includes(x));
  if (bad) throw configError(`${what}=${text}: unsupported exporter ${JSON.stringify(bad)} (supported: ${allowed.join(', ')})`);
  return list;
}

/** `k=v,k2=v2` with percent-encoded values (W3C baggage style, as OTEL_* variables use). */
export function parseKeyValues(text: string | undefined, what: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (!text) return out;
  // Error messages name the entry's position, never its text: header values are often secrets.
  text.split(',').forEach((part, i) => {
    if (part.trim() === '') return;
    const eq = part.indexOf('=');
    if (eq <= 0) throw configError(`${what}: entry ${i + 1} is not key=value`);
    try {
      out[decodeURIComponent(part.slice(0, eq).trim())] = decodeURIComponent(part.slice(eq + 1).trim());
    } catch {
      throw configError(`${what}: entry ${i + 1} has bad percent-encoding`);
    }
  });
  return out;
}

function positiveInt(text: string | undefined, what: string): number | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n <= 0) throw configError(`${what}=${text}: expected a positive integer`);
  return n;
}

function configError(message: string): McptapError {
  return new McptapError('MCPTAP_TELEMETRY_CONFIG', message);
}

/** OTEL_TRACES_SAMPLER[_ARG]; unlike the SDK, a bad name or ratio is a usage error (a typo must not trace 100%). Default: no `sampler`. */
function samplerOf(e: Env): { sampler?: SamplerConfig } {
  const text = e.OTEL_TRACES_SAMPLER?.trim().toLowerCase();
  if (text === undefined || text === 'parentbased_always_on') return {};
  const name = SAMPLER_NAMES.find((n) => n === text);
  if (!name) throw configError(`OTEL_TRACES_SAMPLER=${e.OTEL_TRACES_SAMPLER}: unsupported sampler (supported: ${SAMPLER_NAMES.join(', ')})`);
  if (!name.endsWith('traceidratio')) return { sampler: { name } };
  const arg = e.OTEL_TRACES_SAMPLER_ARG?.trim();
  // The spec's default ratio when the argument is absent.
  if (arg === undefined) return { sampler: { name, ratio: 1 } };
  const ratio = Number(arg);
  if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1) throw configError(`OTEL_TRACES_SAMPLER_ARG=${arg}: expected a ratio from 0 to 1 for ${name}`);
  return { sampler: { name, ratio } };
}
