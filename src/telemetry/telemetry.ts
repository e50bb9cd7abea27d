/**
 * Builds mcptap's OpenTelemetry plumbing from a {@link TelemetryConfig}: providers, exporters, and the span and metrics sinks that feed them.
 * Invariants: nothing is registered globally (provider, propagator, context manager, diag logger: library users may run their own SDK); nothing is
 * created when nothing is configured; exporter failures are counted and reported once on the logger, never thrown, and nothing goes to stdout;
 * `shutdown()` is idempotent and bounded in time (close-deadline.ts), and does not wait for an OTLP endpoint never reached.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OTLPTraceExporter as OtlpJsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPMetricExporter as OtlpJsonMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPMetricExporter as OtlpProtoMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import type { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { defaultResource, resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import { MeterProvider, type IMetricReader } from '@opentelemetry/sdk-metrics';
import type { Meter } from '@opentelemetry/api';
import { BasicTracerProvider, type Sampler, type SpanLimits } from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import { OtelMetricsSink } from './otel-metrics-sink.js';
import { METRIC_ORDER, type DropCounts } from './otel-metric-instruments.js';
import type { Redact } from './otel-content.js';
import { OtelSpanSink } from './otel-span-sink.js';
import type { Sink } from '../sinks/sink.js';
import type { Clock } from '../util/clock.js';
import { silentLogger, type Logger } from '../util/logger.js';
import { VERSION } from '../version.js';
import { McptapError } from '../errors.js';
import { CloseDeadline, OtlpReachability } from './close-deadline.js';
import { CountingMetricExporter, CountingSpanProcessor, NO_SPAN_COUNTS, notDelivered, type SpanExportCounts } from './counting-span-processor.js';
import { createOtlpProtoSpanExporter } from './otlp-proto-span-exporter.js';
import { OwnHistogramPeriodicReader, OwnHistogramPrometheusExporter, type OwnHistogramsRef } from './own-histogram-readers.js';
import { OwnHistograms, ownHistogramsSupported } from './own-histograms.js';
import { SeededSpanIds } from './seeded-span-ids.js';
import { PresetIdGenerator } from './span-data.js';
import { samplerFor, samplesNothing } from './trace-context.js';
import { StderrMetricExporter, StderrSpanExporter, type WriteLine } from './stderr-exporters.js';
import { telemetryEnabled, type TelemetryConfig } from './telemetry-config.js';
import { TraceContextMinter } from './trace-context-minter.js';

export interface TelemetryDeps {
  logger?: Logger;
  clock?: Clock;
  /** Applied to captured content before export (only used with `captureContent`). */
  redact?: Redact;
  /** Drop counts per sink for `mcptap.sink.dropped`, read at each collection. */
  dropCounts?: DropCounts;
  /** Where the console exporters write. Default: stderr. */
  writeLine?: WriteLine;
  /** Upper bound on `shutdown()`; shorter when every OTLP endpoint refused and none was ever reached. Default 5000 ms. */
  shutdownTimeoutMillis?: number;
  /** Seed of the derived span ids; a tap stores it in its recording so `mcptap export` reproduces the live ids. Default: random per call. */
  spanIdSeed?: string;
  /** Replaying a recording made with `--inject-trace-context` (see OtelSpanSink). */
  recordedInjection?: boolean;
  /** Build the tap's span and metrics sinks (default true); `mcptap load` says false and records its own on {@link Telemetry.meter}. */
  tapSinks?: boolean;
}

export interface Telemetry {
  /** The sinks to add to the pipeline; empty when nothing is configured. */
  readonly sinks: readonly Sink[];
  readonly spanSink?: OtelSpanSink;
  readonly metricsSink?: OtelMetricsSink;
  /** Present when `injectTraceContext` is on and traces are exported: the tap's injector. */
  readonly minter?: TraceContextMinter;
  /** The Prometheus scrape URL, when serving one (the real port when 0 was asked for). */
  readonly metricsUrl?: string;
  /** The meter of the metrics provider, when metrics are exported (the load run's instruments). */
  readonly meter?: Meter;
  /** Span export counts summed over span exporters; undefined without traces. */
  spanCounts(): SpanExportCounts | undefined;
  forceFlush(): Promise<void>;
  /** True once a scrape started after this call is answered, false after `timeoutMillis`: a short-lived process waits so Prometheus has its last values. */
  nextScrape(timeoutMillis: number): Promise<boolean>;
  /** Closes the sinks (ending open spans), flushes and stops providers and the scrape server. */
  shutdown(): Promise<void>;
}

const SCOPE = 'mcptap';

export async function createTelemetry(config: TelemetryConfig, deps: TelemetryDeps = {}): Promise<Telemetry> {
  const logger = deps.logger ?? silentLogger;
  if (!telemetryEnabled(config)) {
    return { sinks: [], spanCounts: () => undefined, forceFlush: async () => {}, nextScrape: async () => false, shutdown: async () => {} };
  }
  const resource = buildResource(config);
  // The OTLP exporters' sockets say whether their endpoints were ever reached (for the close).
  const reach = new OtlpReachability();
  const traces = buildTraces(config, resource, deps, logger, reach);
  const metrics = await buildMetrics(config, resource, deps, logger, reach).catch(async (err: unknown) => {
    await traces?.provider.shutdown().catch(() => {});
    throw err;
  });
  const deadline = new CloseDeadline(deps.shutdownTimeoutMillis ?? 5000, reach);
  const tap = deps.tapSinks === false ? undefined : buildSinks(config, traces, metrics, deps, logger, deadline);
  const sinks = [tap?.spanSink, tap?.metricsSink].filter((s) => s !== undefined);
  let stopping: Promise<void> | undefined;
  return {
    sinks,
    spanSink: tap?.spanSink,
    metricsSink: tap?.metricsSink,
    minter: tap?.minter,
    metricsUrl: metrics?.url,
    meter: metrics?.provider.getMeter(SCOPE, VERSION),
    spanCounts: () => (traces ? sumCounts(traces.processors.map((p) => p.counts())) : undefined),
    forceFlush: async () => {
      await Promise.allSettled([traces?.provider.forceFlush(), metrics?.provider.forceFlush()]);
    },
    nextScrape: (timeoutMillis) => (metrics?.server ? nextScrape(metrics.server, timeoutMillis) : Promise.resolve(false)),
    shutdown: () => (stopping ??= shutdownAll(sinks, traces, metrics, deadline, logger)),
  };
}

function buildSinks(
  config: TelemetryConfig,
  traces: TraceParts | undefined,
  metrics: MetricsParts | undefined,
  deps: TelemetryDeps,
  logger: Logger,
  deadline: CloseDeadline,
) {
  const closeWithin = (flush: Promise<void>) => deadline.within(flush);
  const minter = traces && config.injectTraceContext ? new TraceContextMinter({ sampler: traces.sampler }) : undefined;
  const spanSink =
    traces &&
    new OtelSpanSink({
      tracer: traces.provider.getTracer(SCOPE, VERSION),
      sampler: traces.sampler,
      captureContent: config.captureContent,
      maxContentLength: config.maxContentLength,
      idGenerator: traces.idGenerator,
      spanIds: new SeededSpanIds(traces.seed),
      recordedInjection: deps.recordedInjection,
      redact: deps.redact,
      minter,
      clock: deps.clock,
      logger,
      forceFlush: () => traces.provider.forceFlush(),
      closeWithin,
      exportDropped: () => traces.processors.reduce((n, p) => n + p.dropped, 0),
    });
  const metricsSink =
    metrics &&
    new OtelMetricsSink({
      meter: metrics.provider.getMeter(SCOPE, VERSION),
      histograms: metrics.histograms.own,
      dropCounts: deps.dropCounts,
      logger,
      forceFlush: () => metrics.provider.forceFlush(),
      closeWithin,
      exportDropped: () => metrics.pushExporters.reduce((n, e) => n + e.failed, 0),
    });
  return { minter, spanSink, metricsSink };
}

function buildResource(config: TelemetryConfig): Resource {
  return defaultResource().merge(
    resourceFromAttributes({
      ...config.resourceAttributes,
      [ATTR_SERVICE_NAME]: config.serviceName,
      [ATTR_SERVICE_VERSION]: config.resourceAttributes[ATTR_SERVICE_VERSION] ?? VERSION,
    }),
  );
}

interface TraceParts {
  provider: BasicTracerProvider;
  processors: CountingSpanProcessor[];
  otlp: CountingSpanProcessor | undefined;
  idGenerator: PresetIdGenerator;
  /** The provider's and the tracer's sampler (OTEL_TRACES_SAMPLER), also the minter's. */
  sampler: Sampler;
  seed: string;
}

function buildTraces(config: TelemetryConfig, resource: Resource, deps: TelemetryDeps, logger: Logger, reach: OtlpReachability): TraceParts | undefined {
  // No span can be sampled and no context is propagated: not even a non-recording span is needed.
  if (samplesNothing(config.sampler) && !config.injectTraceContext) return undefined;
  const queue = { ...config.spanQueue, logger };
  const processors: CountingSpanProcessor[] = [];
  let otlp: CountingSpanProcessor | undefined;
  const target = config.traces.otlp;
  if (target) {
    const opts = reach.exporterOptions(target, 'TRACES');
    // The OTLP exporter tells its processor what the collector refused.
    const exporter =
      target.protocol === 'http/json' ? new OtlpJsonTraceExporter(opts) : createOtlpProtoSpanExporter(opts, (n, why) => otlp?.collectorRejected(n, why));
    processors.push((otlp = new CountingSpanProcessor(exporter, queue)));
  }
  if (config.traces.console) processors.push(new CountingSpanProcessor(new StderrSpanExporter(deps.writeLine), queue));
  if (processors.length === 0) return undefined;
  const idGenerator = new PresetIdGenerator();
  // Long SSE streams and progress-heavy calls make many events; captured content makes long values.
  const spanLimits: SpanLimits = { eventCountLimit: 1024, attributeValueLengthLimit: config.maxContentLength + 64 };
  // An explicit sampler: the SDK would otherwise read OTEL_TRACES_SAMPLER from process.env itself.
  const sampler = samplerFor(config.sampler);
  const provider = new BasicTracerProvider({ resource, idGenerator, sampler, spanProcessors: processors, spanLimits });
  return { provider, processors, otlp, idGenerator, sampler, seed: deps.spanIdSeed ?? SeededSpanIds.randomSeed() };
}

interface MetricsParts {
  provider: MeterProvider;
  /** The per-exchange histograms' own aggregation, when every reader allows it (see own-histograms.ts). */
  histograms: OwnHistogramsRef;
  pushExporters: CountingMetricExporter[];
  /** Metrics go to an OTLP endpoint. */
  otlp?: boolean;
  server?: Server;
  url?: string;
}

async function buildMetrics(
  config: TelemetryConfig,
  resource: Resource,
  deps: TelemetryDeps,
  logger: Logger,
  reach: OtlpReachability,
): Promise<MetricsParts | undefined> {
  const m = config.metrics;
  const pushExporters: CountingMetricExporter[] = [];
  if (m.otlp) {
    const opts = reach.exporterOptions(m.otlp, 'METRICS');
    pushExporters.push(
      new CountingMetricExporter(m.otlp.protocol === 'http/json' ? new OtlpJsonMetricExporter(opts) : new OtlpProtoMetricExporter(opts), logger),
    );
  }
  if (m.console) pushExporters.push(new CountingMetricExporter(new StderrMetricExporter(deps.writeLine), logger));
  const histograms: OwnHistogramsRef = {};
  const exportIntervalMillis = m.intervalMillis;
  const exportTimeoutMillis = Math.min(exportIntervalMillis, m.otlp?.timeoutMillis ?? exportIntervalMillis);
  const readers: IMetricReader[] = pushExporters.map(
    (exporter) => new OwnHistogramPeriodicReader({ exporter, exportIntervalMillis, exportTimeoutMillis }, histograms),
  );
  let prometheus: PrometheusExporter | undefined;
  if (m.prometheus) readers.push((prometheus = new OwnHistogramPrometheusExporter({ preventServerStart: true }, histograms)));
  if (readers.length === 0) return undefined;
  const provider = new MeterProvider({ resource, readers });
  if (ownHistogramsSupported(readers)) histograms.own = new OwnHistograms(readers, { name: SCOPE, version: VERSION, schemaUrl: undefined }, METRIC_ORDER);
  const otlp = m.otlp !== undefined;
  if (!prometheus || !m.prometheus) return { provider, pushExporters, histograms, otlp };
  try {
    const served = await servePrometheus(prometheus, m.prometheus.host, m.prometheus.port);
    return { provider, pushExporters, histograms, otlp, ...served };
  } catch (err) {
    await provider.shutdown().catch(() => {});
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    throw new McptapError('MCPTAP_METRICS_LISTEN', `--metrics ${m.prometheus.host}:${m.prometheus.port}: cannot listen (${code})`);
  }
}

/** Our own server, not the exporter's: it can bind port 0, report the real port, and give listen errors to the caller, not the OTel diag channel. */
async function servePrometheus(exporter: PrometheusExporter, host: string, port: number): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if ((req.method === 'GET' || req.method === 'HEAD') && path === '/metrics') {
      const startedAt = performance.now();
      res.once('finish', () => server.emit(SCRAPED, startedAt));
      return exporter.getMetricsRequestHandler(req, res);
    }
    res.statusCode = 404;
    res.end('not found; metrics are at /metrics\n');
  });
  server.listen(port, host);
  await once(server, 'listening');
  server.on('error', () => {});
  // The scrape endpoint must not keep the process alive after the tap is done.
  server.unref();
  const addr = server.address() as AddressInfo;
  const shownHost = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return { server, url: `http://${shownHost}:${addr.port}/metrics` };
}

/** Emitted by the scrape server when it has answered a scrape. */
const SCRAPED = 'mcptap:scraped';

function nextScrape(server: Server, timeoutMillis: number): Promise<boolean> {
  const calledAt = performance.now();
  return new Promise((resolve) => {
    const done = (scraped: boolean) => {
      clearTimeout(timer);
      server.off(SCRAPED, onScrape);
      resolve(scraped);
    };
    const onScrape = (startedAt: number) => startedAt >= calledAt && done(true);
    const timer = setTimeout(() => done(false), timeoutMillis);
    server.on(SCRAPED, onScrape);
  });
}

async function shutdownAll(
  sinks: readonly Sink[],
  traces: TraceParts | undefined,
  metrics: MetricsParts | undefined,
  deadline: CloseDeadline,
  logger: Logger,
): Promise<void> {
  const work = (async () => {
    await Promise.allSettled(sinks.map((s) => s.close()));
    await Promise.allSettled([traces?.provider.shutdown(), metrics?.provider.shutdown()]);
  })();
  const outcome = await deadline.within(work);
  if (outcome === 'expired') logger.warn(`otel: shutdown did not finish within ${deadline.ms} ms; unsent telemetry was dropped`);
  const spans = traces ? sumCounts(traces.processors.map((p) => p.counts())) : undefined;
  if (outcome === 'unreachable') {
    // Nothing ever reached the endpoint: one line for all of it, instead of the detailed count below.
    const otlpSpans = traces?.otlp ? notDelivered(traces.otlp.counts()) : undefined;
    const what = [otlpSpans !== undefined ? `${otlpSpans} spans` : undefined, metrics?.otlp ? 'the metrics' : undefined].filter(Boolean).join(' and ');
    logger.warn(`otel: ${what} not delivered: ${deadline.gaveUpBecause}; stopped without waiting for it`);
  } else if (spans && notDelivered(spans) > 0) {
    const pending = spans.queued + spans.sending;
    logger.warn(
      `otel: ${notDelivered(spans)} spans were not delivered (${spans.droppedQueueFull} refused with the queue full, ${spans.droppedExportFailed} in failed exports` +
        `${spans.rejectedByCollector > 0 ? `, ${spans.rejectedByCollector} refused by the collector` : ''}${pending > 0 ? `, ${pending} queued or being sent at the deadline` : ''}); ${spans.exported} were delivered`,
    );
  }
  if (metrics?.server) {
    metrics.server.closeAllConnections();
    await new Promise<void>((resolve) => metrics.server!.close(() => resolve()));
  }
}

function sumCounts(all: SpanExportCounts[]): SpanExportCounts {
  const sum: SpanExportCounts = { ...NO_SPAN_COUNTS };
  for (const c of all) for (const k of Object.keys(sum) as (keyof SpanExportCounts)[]) sum[k] += c[k];
  return sum;
}
