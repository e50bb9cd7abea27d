/**
 * OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG on the span sink (asked before a span is built) and the SDK's tracer, checked against the OTLP
 * receiver in this process: spans and metrics both exported over OTLP/JSON. The ratio is checked
 * within a bound a correct sampler leaves with negligible probability; metrics are counted
 * exactly, whatever the spans.
 */
import { describe, expect, it } from 'vitest';
import { createTelemetry } from '../../src/telemetry/telemetry.js';
import { resolveTelemetryConfig, SAMPLER_NAMES, type Env } from '../../src/telemetry/telemetry-config.js';
import type { SpanExportCounts } from '../../src/telemetry/counting-span-processor.js';
import { McptapError } from '../../src/errors.js';
import { TrafficScript } from '../sinks/traffic-script.js';
import { startOtlpReceiver, type ReceivedSpan } from './otlp-receiver.js';

interface Exported {
  exchangeSpans: ReceivedSpan[];
  /** Data point counts of `mcp.client.operation.duration`, summed over attribute sets. */
  operationDurationCount: number;
  /** `mcptap.exchanges`, summed over outcomes. */
  exchangesCounted: number;
  spanSink: boolean;
  /** Trace export requests the receiver got (any span, session spans included). */
  traceExports: number;
  spanCounts: SpanExportCounts | undefined;
}

type Point = { count?: string | number; asInt?: string | number; asDouble?: number };
type MetricsBody = {
  resourceMetrics: { scopeMetrics: { metrics: { name: string; histogram?: { dataPoints: Point[] }; sum?: { dataPoints: Point[] } }[] }[] }[];
};

/** The cumulative total of a metric in the last export that has it. */
function metricTotal(bodies: string[], name: string, field: 'count' | 'sum'): number {
  for (const text of [...bodies].reverse()) {
    const body = JSON.parse(text) as MetricsBody;
    const metric = body.resourceMetrics.flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics)).find((m) => m.name === name);
    if (!metric) continue;
    const points = field === 'count' ? metric.histogram!.dataPoints : metric.sum!.dataPoints;
    return points.reduce((n, p) => n + Number(field === 'count' ? p.count : (p.asInt ?? p.asDouble)), 0);
  }
  return 0;
}

/**
 * `n` tools/call exchanges on one stdio connection, each with the caller's traceparent `parent(i)`
 * (none when it returns undefined), through the span and metrics sinks of a telemetry configured
 * from `env`.
 */
async function exportCalls(n: number, env: Env, parent: (i: number) => string | undefined = () => undefined): Promise<Exported> {
  const receiver = await startOtlpReceiver();
  try {
    const t = await createTelemetry(
      resolveTelemetryConfig({ otlp: receiver.url }, { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_METRIC_EXPORT_INTERVAL: '600000', ...env }),
    );
    const s = new TrafficScript('stdio-1').open({ transport: 'stdio', target: 'srv' }, 0);
    for (let i = 1; i <= n; i++) {
      const traceparent = parent(i);
      s.request(i, 'tools/call', { name: 'echo', arguments: {}, ...(traceparent ? { _meta: { traceparent } } : {}) }, i * 10);
      s.result(i, { content: [] }, i * 10 + 5);
      for (const e of s.events.splice(0)) for (const sink of t.sinks) sink.onEvent(e);
    }
    s.close(n * 10 + 100);
    for (const e of s.events) for (const sink of t.sinks) sink.onEvent(e);
    const spanSink = t.spanSink !== undefined;
    await t.shutdown();
    return {
      traceExports: receiver.requests.filter((r) => r.path === '/v1/traces').length,
      spanCounts: t.spanCounts(),
      exchangeSpans: receiver.spans.filter((x) => x.name !== 'mcp.session'),
      operationDurationCount: metricTotal(receiver.metricBodies, 'mcp.client.operation.duration', 'count'),
      exchangesCounted: metricTotal(receiver.metricBodies, 'mcptap.exchanges', 'sum'),
      spanSink,
    };
  } finally {
    await receiver.close();
  }
}

const traceparent = (i: number, flags: '00' | '01') => `00-${i.toString(16).padStart(32, 'a')}-${'b'.repeat(16)}-${flags}`;

describe('OTEL_TRACES_SAMPLER on the fast tracer', () => {
  it('traceidratio 0.1: about a tenth of the exchanges are exported as spans, every one is counted in the metrics', async () => {
    // 4,000 exchanges with random trace ids: the count is Binomial(4000, 0.1), mean 400, sd 19;
    // 300..500 is more than 5 sd either way (a correct sampler fails it about once in 10^6 runs).
    const n = 4000;
    const out = await exportCalls(n, { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' });
    expect(out.exchangeSpans.length).toBeGreaterThanOrEqual(300);
    expect(out.exchangeSpans.length).toBeLessThanOrEqual(500);
    expect(out.operationDurationCount).toBe(n);
    expect(out.exchangesCounted).toBe(n);
    // The spans that are exported are whole: every start and end attribute, the sampled flag.
    for (const span of out.exchangeSpans) expect(span.attributes).toMatchObject({ 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'echo' });
  });

  it('every sampler keeps the fast tracer; sampled out, an exchange reaches nothing on the export path', async () => {
    // Issue 23: OTEL_TRACES_SAMPLER once switched the tap to the SDK's tracer, which builds every
    // span's attributes before the sampler's decision. Resolved from the environment as the CLI does.
    for (const name of SAMPLER_NAMES.filter((n) => n !== 'always_off')) {
      const out = await exportCalls(5, { OTEL_TRACES_SAMPLER: name, OTEL_TRACES_SAMPLER_ARG: '0.1' });
      expect({ name, spanSink: out.spanSink }).toEqual({ name, spanSink: true });
    }
    // A ratio that samples (almost) nothing but still builds the span sink: 2,000 exchanges and the
    // session, each a 4-in-2^32 chance, so a correct sampler records one about once in 10^6 runs.
    const n = 2000;
    const out = await exportCalls(n, { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.000000001' });
    expect(out.spanSink).toBe(true);
    expect(out.traceExports).toBe(0);
    expect(out.spanCounts).toEqual({ exported: 0, droppedQueueFull: 0, droppedExportFailed: 0, queued: 0, sending: 0, rejectedByCollector: 0 });
    expect(out.operationDurationCount).toBe(n);
    expect(out.exchangesCounted).toBe(n);
  });

  it('always_off: no span at all (no span sink is built), full metrics', async () => {
    const out = await exportCalls(200, { OTEL_TRACES_SAMPLER: 'always_off' });
    expect(out.spanSink).toBe(false);
    expect(out.exchangeSpans).toHaveLength(0);
    expect(out.operationDurationCount).toBe(200);
    expect(out.exchangesCounted).toBe(200);
  });

  it('parentbased_traceidratio follows the caller: a sampled-out parent is never exported, a sampled one always', async () => {
    // Ratio 0: a root is never sampled; only the children of sampled parents are.
    const parent = (i: number) => (i % 3 === 0 ? undefined : traceparent(i, i % 3 === 1 ? '01' : '00'));
    const out = await exportCalls(300, { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' }, parent);
    expect(out.exchangeSpans).toHaveLength(100);
    for (const span of out.exchangeSpans) expect(span.parentSpanId).toBe('b'.repeat(16));
    expect(new Set(out.exchangeSpans.map((x) => x.traceId))).toEqual(new Set(Array.from({ length: 100 }, (_, k) => traceparent(3 * k + 1, '01').slice(3, 35))));
    expect(out.operationDurationCount).toBe(300);
  });

  it('parentbased_traceidratio 1 and the default: a sampled-out parent still wins over the root sampler', async () => {
    const parent = (i: number) => (i % 2 === 0 ? traceparent(i, '00') : undefined);
    for (const env of [{ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '1' }, {}]) {
      const out = await exportCalls(40, env, parent);
      expect(out.exchangeSpans).toHaveLength(20);
      for (const span of out.exchangeSpans) expect(span.parentSpanId).toBeUndefined();
      expect(out.exchangesCounted).toBe(40);
    }
  });

  it('always_on exports the children of a sampled-out parent too', async () => {
    const out = await exportCalls(10, { OTEL_TRACES_SAMPLER: 'always_on' }, (i) => traceparent(i, '00'));
    expect(out.exchangeSpans).toHaveLength(10);
  });
});

describe('OTEL_TRACES_SAMPLER in the config', () => {
  const resolve = (env: Env) => resolveTelemetryConfig({ otlp: 'http://127.0.0.1:4318' }, env);

  it('resolves the spec names and the ratio (1 when absent), the default to nothing', () => {
    expect(resolve({}).sampler).toBeUndefined();
    expect(resolve({ OTEL_TRACES_SAMPLER: 'parentbased_always_on' }).sampler).toBeUndefined();
    expect(resolve({ OTEL_TRACES_SAMPLER: ' ParentBased_TraceIdRatio ', OTEL_TRACES_SAMPLER_ARG: '0.25' }).sampler).toEqual({
      name: 'parentbased_traceidratio',
      ratio: 0.25,
    });
    expect(resolve({ OTEL_TRACES_SAMPLER: 'traceidratio' }).sampler).toEqual({ name: 'traceidratio', ratio: 1 });
    expect(resolve({ OTEL_TRACES_SAMPLER: 'always_off', OTEL_TRACES_SAMPLER_ARG: 'ignored' }).sampler).toEqual({ name: 'always_off' });
    expect(resolve({ OTEL_TRACES_SAMPLER: 'always_off', OTEL_SDK_DISABLED: 'true' }).sampler).toBeUndefined();
  });

  it('refuses an unknown sampler or a ratio outside 0..1 with a usage error', () => {
    for (const env of [
      { OTEL_TRACES_SAMPLER: 'jaeger_remote' },
      { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '10%' },
      { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '1.5' },
    ]) {
      let error: unknown;
      try {
        resolve(env);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(McptapError);
      expect((error as McptapError).code).toBe('MCPTAP_TELEMETRY_CONFIG');
    }
  });
});
