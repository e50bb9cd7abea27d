/**
 * createTelemetry with real SDK providers and real exporters against an OTLP receiver and a
 * Prometheus scrape in this process: what gets built, what gets exported, how failures are
 * counted, and that nothing is registered in the global OpenTelemetry API.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { context, metrics, propagation, ProxyTracerProvider, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { McptapError } from '../../src/errors.js';
import { exitCodeFor } from '../../src/cli/exit-codes.js';
import { createTelemetry } from '../../src/telemetry/telemetry.js';
import { resolveTelemetryConfig, type Env, type TelemetryFlags } from '../../src/telemetry/telemetry-config.js';
import type { Logger } from '../../src/util/logger.js';
import { TrafficScript } from '../sinks/traffic-script.js';
import { startOtlpReceiver } from './otlp-receiver.js';

function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const at = (lvl: string) => (m: string) => void lines.push(`${lvl}: ${m}`);
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** `n` completed tools/call exchanges on one stdio connection (no session span unless `open`). */
function calls(n: number, open = false): TrafficScript {
  const s = new TrafficScript();
  if (open) s.open({ transport: 'stdio', target: 'srv' }, 0);
  for (let i = 1; i <= n; i++) {
    s.request(i, 'tools/call', { name: 'echo', arguments: { i } }, i * 10);
    s.result(i, { content: [] }, i * 10 + 5);
  }
  return s;
}

const config = (flags: TelemetryFlags, env: Env) => resolveTelemetryConfig(flags, env);

afterEach(() => {
  vi.restoreAllMocks();
});

describe('createTelemetry', () => {
  it('creates nothing when nothing is configured', async () => {
    const t = await createTelemetry(config({ captureContent: true, injectTraceContext: true }, {}));
    expect(t.sinks).toEqual([]);
    expect(t.spanSink).toBeUndefined();
    expect(t.metricsSink).toBeUndefined();
    expect(t.minter).toBeUndefined();
    expect(t.spanCounts()).toBeUndefined();
    await t.shutdown();
  });

  it('registers nothing in the global OpenTelemetry API', async () => {
    const receiver = await startOtlpReceiver();
    const t = await createTelemetry(
      config({ otlp: receiver.url, metrics: '127.0.0.1:0', injectTraceContext: true }, { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }),
    );
    expect(t.sinks.map((s) => s.name)).toEqual(['otel-spans', 'otel-metrics']);
    for (const e of calls(3, true).close(100).events) for (const s of t.sinks) s.onEvent(e);
    await t.shutdown();
    await receiver.close();
    expect(receiver.spans.length).toBe(4);

    const tp = trace.getTracerProvider();
    expect(tp).toBeInstanceOf(ProxyTracerProvider);
    expect((tp as ProxyTracerProvider).getDelegate().constructor.name).toBe('NoopTracerProvider');
    expect(metrics.getMeterProvider().constructor.name).toBe('NoopMeterProvider');
    expect(propagation.fields()).toEqual([]);
    expect(context.active()).toBe(ROOT_CONTEXT);
    const registry = (globalThis as Record<symbol, Record<string, unknown> | undefined>)[Symbol.for('opentelemetry.js.api.1')];
    for (const key of ['trace', 'metrics', 'propagation', 'context', 'diag']) expect(registry?.[key]).toBeUndefined();
  });

  it('exports http/protobuf by default (the OTLP spec default)', async () => {
    const receiver = await startOtlpReceiver();
    const t = await createTelemetry(config({ otlp: receiver.url }, { OTEL_METRICS_EXPORTER: 'none' }));
    for (const e of calls(2).events) t.spanSink!.onEvent(e);
    await t.shutdown();
    await receiver.close();
    expect(receiver.requests.map((r) => [r.path, r.contentType])).toEqual([['/v1/traces', 'application/x-protobuf']]);
    expect(receiver.requests[0]!.bytes).toBeGreaterThan(100);
    expect(t.spanCounts()).toMatchObject({ exported: 2, droppedQueueFull: 0, droppedExportFailed: 0 });
  });

  it('counts spans a collector refused in an OTLP partial success as not delivered (http/protobuf)', async () => {
    // An in-process fake collector, on purpose: no OTLP receiver on the registry answers partial successes on demand.
    const message = Buffer.from('span limit exceeded (test)');
    const partial = Buffer.concat([Buffer.from([0x08, 3, 0x12, message.length]), message]); // rejected_spans 3, error_message
    const body = Buffer.concat([Buffer.from([0x0a, partial.length]), partial]); // ExportTraceServiceResponse.partial_success
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(body));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const logger = recordingLogger();
    const t = await createTelemetry(config({ otlp: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }, { OTEL_METRICS_EXPORTER: 'none' }), {
      logger,
    });
    for (const e of calls(5).events) t.spanSink!.onEvent(e);
    await t.shutdown();
    server.close();
    expect(t.spanCounts()).toMatchObject({ exported: 2, rejectedByCollector: 3 });
    expect(logger.lines).toContainEqual(
      'warn: otel: the collector refused 3 spans of an export (span limit exceeded (test)); further refusals counted, not logged',
    );
    expect(logger.lines.some((l) => l.includes('otel: 3 spans were not delivered') && l.includes('3 refused by the collector'))).toBe(true);
  });

  it('sends OTLP metrics to /v1/metrics in the configured protocol: http/protobuf by default, http/json', async () => {
    const proto = await startOtlpReceiver();
    const p = await createTelemetry(config({ otlp: proto.url }, { OTEL_TRACES_EXPORTER: 'none', OTEL_METRIC_EXPORT_INTERVAL: '60000' }));
    for (const e of calls(2, true).close(100).events) p.metricsSink!.onEvent(e);
    await p.shutdown();
    await proto.close();
    expect(proto.requests.length).toBeGreaterThan(0);
    for (const r of proto.requests) expect([r.path, r.contentType]).toEqual(['/v1/metrics', 'application/x-protobuf']);
    expect(Math.max(...proto.requests.map((r) => r.bytes))).toBeGreaterThan(100);

    const receiver = await startOtlpReceiver();
    const t = await createTelemetry(
      config({ otlp: receiver.url }, { OTEL_TRACES_EXPORTER: 'none', OTEL_METRIC_EXPORT_INTERVAL: '60000', OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: 'http/json' }),
    );
    expect(t.sinks.map((s) => s.name)).toEqual(['otel-metrics']);
    for (const e of calls(2, true).close(100).events) t.metricsSink!.onEvent(e);
    await t.shutdown();
    await receiver.close();
    const body = JSON.parse(receiver.metricBodies.at(-1)!) as { resourceMetrics: { scopeMetrics: { metrics: { name: string }[] }[] }[] };
    const names = body.resourceMetrics.flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics.map((m) => m.name)));
    expect(names).toEqual(expect.arrayContaining(['mcp.client.operation.duration', 'mcp.client.session.duration', 'mcptap.exchanges']));
  });

  it('applies service name, resource attributes and OTLP headers from the environment', async () => {
    const receiver = await startOtlpReceiver();
    const env = {
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_METRICS_EXPORTER: 'none',
      OTEL_SERVICE_NAME: 'claude-code-tap',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=test,team=a%20b',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=k%3D1',
    };
    const t = await createTelemetry(config({ otlp: receiver.url }, env));
    for (const e of calls(1).events) t.spanSink!.onEvent(e);
    await t.shutdown();
    await receiver.close();
    expect(receiver.spans[0]!.resource).toMatchObject({
      'service.name': 'claude-code-tap',
      'deployment.environment': 'test',
      team: 'a b',
      'service.version': expect.any(String),
    });
    expect(receiver.requests[0]!.headers['x-api-key']).toBe('k=1');
  });

  it('counts spans lost to a failing collector; never throws and never writes to stdout', async () => {
    const stdout = vi.spyOn(process.stdout, 'write');
    const logger = recordingLogger();
    const receiver = await startOtlpReceiver();
    receiver.failNext = 1000;
    const t = await createTelemetry(config({ otlp: receiver.url }, { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_METRICS_EXPORTER: 'none' }), { logger });
    for (const e of calls(5).events) t.spanSink!.onEvent(e);
    await t.spanSink!.flush();
    for (const e of calls(3).events) t.spanSink!.onEvent(e);
    await t.shutdown();
    await receiver.close();
    expect(receiver.requests.length).toBeGreaterThanOrEqual(2);
    expect(t.spanCounts()).toMatchObject({ exported: 0, droppedExportFailed: 8 });
    expect(t.spanSink!.stats().dropped).toBe(8);
    expect(logger.lines.filter((l) => l.includes('span export failed'))).toHaveLength(1);
    expect(stdout).not.toHaveBeenCalled();
  });

  it('counts spans refused by a full queue', async () => {
    const logger = recordingLogger();
    const receiver = await startOtlpReceiver();
    const c = config({ otlp: receiver.url }, { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_METRICS_EXPORTER: 'none', OTEL_BSP_SCHEDULE_DELAY: '600000' });
    c.spanQueue.maxQueueSize = 2;
    const t = await createTelemetry(c, { logger });
    // Queue of 2 (so batches of 2): the first full batch is handed to the exporter at once, the
    // next two wait in the queue, and the rest are refused while that export is in flight.
    for (const e of calls(6).events) t.spanSink!.onEvent(e);
    const during = t.spanCounts()!;
    expect(during.queued).toBe(2);
    expect(during.droppedQueueFull).toBe(2);
    await t.shutdown();
    await receiver.close();
    expect(receiver.spans).toHaveLength(4);
    expect(t.spanCounts()).toMatchObject({ exported: 4, droppedQueueFull: 2, droppedExportFailed: 0, queued: 0, sending: 0 });
    expect(t.spanSink!.stats().dropped).toBe(2);
    expect(logger.lines.filter((l) => l.includes('span queue full ('))).toHaveLength(1);
    // Said once more at shutdown, with the totals.
    expect(logger.lines.filter((l) => l.includes('spans were not delivered'))).toEqual([
      expect.stringContaining('otel: 2 spans were not delivered (2 refused with the queue full, 0 in failed exports); 4 were delivered'),
    ]);
  });

  it('writes console exports as JSON lines to stderr (the injected writer), not stdout', async () => {
    const stdout = vi.spyOn(process.stdout, 'write');
    const lines: string[] = [];
    const t = await createTelemetry(config({}, { OTEL_TRACES_EXPORTER: 'console', OTEL_METRICS_EXPORTER: 'console' }), { writeLine: (l) => lines.push(l) });
    expect(t.sinks.map((s) => s.name)).toEqual(['otel-spans', 'otel-metrics']);
    for (const e of calls(1).events) for (const s of t.sinks) s.onEvent(e);
    await t.shutdown();
    const records = lines.map((l) => JSON.parse(l) as { otel: string; name: string });
    expect(records.filter((r) => r.otel === 'span').map((r) => r.name)).toEqual(['tools/call echo']);
    expect(records.filter((r) => r.otel === 'metric').map((r) => r.name)).toContain('mcp.client.operation.duration');
    expect(stdout).not.toHaveBeenCalled();
  });

  it('fails with a usage error when the metrics port is taken', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const { port } = blocker.address() as AddressInfo;
    try {
      const err = await createTelemetry(config({ metrics: `127.0.0.1:${port}` }, {})).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(McptapError);
      expect(err).toMatchObject({ code: 'MCPTAP_METRICS_LISTEN' });
      expect(exitCodeFor(err)).toBe(2);
      expect((err as Error).message).toContain('EADDRINUSE');
    } finally {
      await new Promise<void>((r) => blocker.close(() => r()));
    }
  });

  it('bounds shutdown when the collector never answers, and shutdown is idempotent', async () => {
    const logger = recordingLogger();
    const hung = createServer(() => {
      /* never answers: a collector that hangs (a real collector cannot be made to) */
    });
    await new Promise<void>((r) => hung.listen(0, '127.0.0.1', r));
    const { port } = hung.address() as AddressInfo;
    try {
      const t = await createTelemetry(config({ otlp: `http://127.0.0.1:${port}` }, { OTEL_METRICS_EXPORTER: 'none' }), { logger, shutdownTimeoutMillis: 200 });
      for (const e of calls(1).events) t.spanSink!.onEvent(e);
      const first = t.shutdown();
      expect(t.shutdown()).toBe(first);
      await first;
      expect(logger.lines.some((l) => l.includes('shutdown did not finish'))).toBe(true);
    } finally {
      hung.closeAllConnections();
      await new Promise<void>((r) => hung.close(() => r()));
    }
  });
});
