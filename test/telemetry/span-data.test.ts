/**
 * Spans as data: the pure exchangeSpan and the one emitSpan that hands its data to the SDK's
 * tracer, and OtelSpanSink on real correlated traffic (stdio and HTTP: trace context, progress,
 * cancels, SSE, captured content, injected trace context) through a BasicTracerProvider: every
 * sampler, seeded ids reproduced by a second run (as `mcptap export` does), spans still open at
 * close, and nothing built for a span the sampler drops.
 */
import { describe, expect, it } from 'vitest';
import { SpanKind, SpanStatusCode, TraceFlags } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, type ReadableSpan, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { TapEvent } from '../../src/model/events.js';
import { OtelSpanSink } from '../../src/telemetry/otel-span-sink.js';
import { SeededSpanIds } from '../../src/telemetry/seeded-span-ids.js';
import { emitSpan, exchangePlace, exchangeSpan, PresetIdGenerator, sessionLinkTo, type SpanData } from '../../src/telemetry/span-data.js';
import { samplerFor } from '../../src/telemetry/trace-context.js';
import { SAMPLER_NAMES, type SamplerConfig } from '../../src/telemetry/telemetry-config.js';
import { TraceContextMinter } from '../../src/telemetry/trace-context-minter.js';
import { TrafficScript } from '../sinks/traffic-script.js';

/** When TrafficScript's connections open (its time 0). */
const OPENED_US = 1_767_225_600_000_000;

/** A provider whose one processor keeps the ended spans. */
function provider(sampler: SamplerConfig | undefined) {
  const ended: ReadableSpan[] = [];
  const processor: SpanProcessor = {
    onStart: () => {},
    onEnd: (s) => void ended.push(s),
    forceFlush: async () => {},
    shutdown: async () => {},
  };
  const idGenerator = new PresetIdGenerator();
  const p = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'span-data-test' }),
    idGenerator,
    sampler: samplerFor(sampler),
    spanProcessors: [processor],
    spanLimits: { eventCountLimit: 1024, attributeValueLengthLimit: 8192 + 64 },
  });
  return { tracer: p.getTracer('mcptap', '9.9.9'), idGenerator, ended };
}

interface SinkRun {
  spans: ReadableSpan[];
  /** Values the redactor was asked for (captured content, error messages). */
  redacted: number;
}

/** OtelSpanSink fed {@link traffic} with seeded ids and one injected context; closed with the stdio exchange 8 still open. */
function sinkTraffic(sampler: SamplerConfig | undefined, captureContent = true): SinkRun {
  const { tracer, idGenerator, ended } = provider(sampler);
  let r = 0;
  const minter = new TraceContextMinter({ random: (n) => Buffer.alloc(n, ++r), sampler: samplerFor(sampler) });
  minter.mint('http-1', 'c2s', 7, {
    jsonrpc: '2.0',
    id: 7,
    method: 'tools/call',
    params: { name: 'echo', _meta: { traceparent: `00-${'c'.repeat(32)}-${'d'.repeat(16)}-01` } },
  });
  let redacted = 0;
  const sink = new OtelSpanSink({
    tracer,
    sampler: samplerFor(sampler),
    captureContent,
    maxContentLength: 8192,
    spanIds: new SeededSpanIds('c0ffee'),
    idGenerator,
    minter,
    redact: (v) => (redacted++, v),
    clock: { nowUs: () => 1_767_225_700_000_000 },
  });
  for (const e of traffic()) sink.onEvent(e);
  void sink.close();
  expect(sink.stats().errors).toBe(0);
  return { spans: ended, redacted };
}

/** Everything an exporter reads from a span, but the resource and scope. */
function view(s: ReadableSpan) {
  return {
    name: s.name,
    kind: s.kind,
    spanContext: s.spanContext(),
    parentSpanContext: s.parentSpanContext,
    startTime: s.startTime,
    endTime: s.endTime,
    status: s.status,
    attributes: s.attributes,
    links: s.links,
    events: s.events,
  };
}

describe('OtelSpanSink through the SDK tracer', () => {
  it('makes one span per exchange and session, with seeded ids a second run reproduces', () => {
    const first = sinkTraffic(undefined);
    // 2 sessions + 13 exchanges, less the resources/read whose caller's parent was not sampled.
    expect(first.spans).toHaveLength(14);
    expect(sinkTraffic(undefined).spans.map(view)).toEqual(first.spans.map(view));
    const ids = new SeededSpanIds('c0ffee');
    const echo = first.spans.find((s) => s.name === 'tools/call echo' && s.attributes['mcptap.connection.id'] === 'stdio-1')!;
    expect(echo.spanContext()).toMatchObject(ids.exchange('stdio-1/c2s/2'));
    const session = first.spans.find((s) => s.name === 'mcp.session' && s.attributes['mcptap.connection.id'] === 'stdio-1')!;
    expect(session.spanContext()).toMatchObject(ids.session('stdio-1', OPENED_US));
    // Every exchange of the connection links to its session span, with the sampler's flags.
    expect(echo.links[0]).toEqual({
      context: expect.objectContaining({ ...ids.session('stdio-1', OPENED_US), traceFlags: TraceFlags.SAMPLED }),
      attributes: { 'mcptap.link': 'session' },
    });
    // What the session revealed later is on its span; the close's reason too.
    expect(session.attributes).toMatchObject({ 'mcp.protocol.version': '2025-11-25', 'mcptap.close.reason': 'exited with code 0' });
  });

  it('gives an injected exchange the minted ids under the caller, and links an HTTP traceparent header', () => {
    const { spans } = sinkTraffic(undefined);
    const injected = spans.find((s) => s.attributes['mcptap.exchange.key'] === 'http-1/c2s/1')!;
    expect(injected.spanContext().traceId).toBe('c'.repeat(32));
    expect(injected.spanContext().spanId).toBe(Buffer.alloc(8, 1).toString('hex'));
    expect(injected.parentSpanContext?.spanId).toBe('d'.repeat(16));
    expect(injected.links.map((l) => [l.attributes?.['mcptap.link'], l.context.spanId])).toEqual([
      ['session', new SeededSpanIds('c0ffee').session('http-1', OPENED_US).spanId],
      ['http', '2'.repeat(16)],
    ]);
  });

  it('ends what is still open at close as unfinished: an exchange with its start attributes only, its session', async () => {
    const { tracer, idGenerator, ended } = provider(undefined);
    const sink = new OtelSpanSink({
      tracer,
      sampler: samplerFor(undefined),
      idGenerator,
      spanIds: new SeededSpanIds('c0ffee'),
      clock: { nowUs: () => OPENED_US + 5_000_000 },
    });
    const s = new TrafficScript('stdio-1').open({ transport: 'stdio', target: 'srv' }, 0);
    s.request(1, 'tools/call', { name: 'slow', arguments: {} }, 10);
    for (const e of s.events) sink.onEvent(e);
    await sink.close();
    expect(ended.map((x) => [x.name, x.attributes['mcptap.unfinished'], x.attributes['mcptap.outcome'], x.endTime])).toEqual([
      ['tools/call slow', true, undefined, [1_767_225_605, 0]],
      ['mcp.session', true, undefined, [1_767_225_605, 0]],
    ]);
    expect(ended[0]!.spanContext()).toMatchObject(new SeededSpanIds('c0ffee').exchange('stdio-1/c2s/1'));
  });

  it('with every OTEL_TRACES_SAMPLER sampler; a dropped span is never built', () => {
    const counts: Record<string, number> = {};
    for (const name of SAMPLER_NAMES) {
      const config: SamplerConfig = name.endsWith('traceidratio') ? { name, ratio: 0.5 } : { name };
      counts[name] = sinkTraffic(config).spans.length;
    }
    expect(counts.always_on).toBe(15);
    expect(counts.always_off).toBe(0);
    expect(counts.parentbased_always_on).toBe(14);
    // Only the children of a sampled caller: the injected call and the prompts/get with a sampled traceparent.
    expect(counts.parentbased_always_off).toBe(2);
    expect(counts.traceidratio).toBeGreaterThan(0);
    expect(counts.traceidratio).toBeLessThan(15);
    expect(counts.parentbased_traceidratio).toBeGreaterThanOrEqual(2);
    expect(counts.parentbased_traceidratio).toBeLessThan(14);
    // Captured content is redacted while the span's data is built: always_off builds none.
    expect(sinkTraffic({ name: 'always_off' }).redacted).toBe(0);
    expect(sinkTraffic({ name: 'always_on' }).redacted).toBeGreaterThan(0);
  });
});

describe('exchangeSpan and emitSpan', () => {
  const s = new TrafficScript('stdio-1').open({ transport: 'stdio', target: 'srv' }, 0);
  s.request(1, 'tools/call', { name: 'echo', arguments: {} }, 10);
  s.send('s2c', { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'p', progress: 1 } }, 11);
  s.error(1, -32000, 'db password=hunter2', 12);
  const [ex] = s.completed();

  it('builds the span as data: times, attributes, links, status, redacted error text', () => {
    const session = { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: TraceFlags.SAMPLED };
    const data = exchangeSpan(ex!, {
      place: exchangePlace(ex!, undefined, { traceId: '1'.repeat(32), spanId: '2'.repeat(16) }),
      sessionLink: sessionLinkTo(session),
      headers: { traceparent: `00-${'3'.repeat(32)}-${'4'.repeat(16)}-01` },
      redact: (v) => String(v).replace(/hunter2/, '[REDACTED]'),
    });
    expect(data).toMatchObject({ name: 'tools/call echo', kind: SpanKind.CLIENT, ids: { traceId: '1'.repeat(32), spanId: '2'.repeat(16) } });
    expect(data.parent).toBeUndefined();
    expect(data.links.map((l) => l.attributes?.['mcptap.link'])).toEqual(['session', 'http']);
    expect(data.status).toEqual({ code: SpanStatusCode.ERROR, message: 'db password=[REDACTED]' });
    expect(data.attributes).toMatchObject({ 'mcp.method.name': 'tools/call', 'mcptap.outcome': 'jsonrpc_error', 'rpc.response.status_code': '-32000' });
    expect(data.events).toHaveLength(0);
    const unfinished = exchangeSpan(ex!, { place: exchangePlace(ex!, undefined, undefined), unfinishedAtUs: 99_000 });
    expect(unfinished.attributes).toMatchObject({ 'mcptap.unfinished': true });
    expect(unfinished.status).toBeUndefined();
  });

  it('emitSpan hands the data to the SDK tracer unchanged, with its preset ids', () => {
    const { tracer, idGenerator, ended } = provider(undefined);
    const parent = { traceId: '5'.repeat(32), spanId: '6'.repeat(16), traceFlags: TraceFlags.SAMPLED, isRemote: true };
    const data: SpanData = {
      name: 'n',
      kind: SpanKind.CLIENT,
      startTime: [1, 0],
      endTime: [2, 500],
      parent,
      ids: { traceId: '5'.repeat(32), spanId: '7'.repeat(16) },
      attributes: { a: 1 },
      links: [{ context: parent, attributes: { l: 'x' } }],
      events: [{ name: 'e', attributes: { b: 2 }, time: [1, 10] }],
      status: { code: SpanStatusCode.ERROR, message: 'm' },
    };
    emitSpan(tracer, data, idGenerator);
    expect(ended).toHaveLength(1);
    const span = ended[0]!;
    expect(view(span)).toMatchObject({
      name: 'n',
      kind: SpanKind.CLIENT,
      startTime: [1, 0],
      endTime: [2, 500],
      attributes: { a: 1 },
      status: { code: SpanStatusCode.ERROR, message: 'm' },
      spanContext: { traceId: '5'.repeat(32), spanId: '7'.repeat(16) },
      parentSpanContext: parent,
    });
    expect(span.links).toEqual([{ context: parent, attributes: { l: 'x' } }]);
    expect(span.events).toEqual([{ name: 'e', attributes: { b: 2 }, time: [1, 10], droppedAttributesCount: 0 }]);
  });
});

/** A stdio session and an HTTP connection: handshake, errors, progress, cancels, trace context, SSE. */
function traffic(): TapEvent[] {
  const s = new TrafficScript('stdio-1').open({ transport: 'stdio', target: 'node server.mjs', pid: 42 }, 0);
  s.handshake(1);
  s.request(1, 'tools/call', { name: 'echo', arguments: { message: 'hi' } }, 10);
  s.result(1, { content: [{ type: 'text', text: 'Echo: hi' }] }, 25);
  s.request(2, 'tools/call', { name: 'get-sum', arguments: { a: 'x' } }, 30);
  s.result(2, { content: [{ type: 'text', text: 'bad a' }], isError: true }, 31);
  s.request(3, 'no/such-method', {}, 40);
  s.error(3, -32601, 'Method not found', 41);
  s.request(4, 'tools/call', { name: 'long-op', arguments: {}, _meta: { progressToken: 'p4' } }, 50);
  s.send('s2c', { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'p4', progress: 1, total: 2, message: 'step 1' } }, 60);
  s.result(4, { content: [] }, 80);
  s.request(
    5,
    'prompts/get',
    { name: 'greet', _meta: { traceparent: `00-${'4bf92f3577b34da6a3ce929d0e0e4736'}-${'00f067aa0ba902b7'}-01`, tracestate: 'vendor=1' } },
    90,
  );
  s.result(5, { messages: [] }, 95);
  s.request(6, 'resources/read', { uri: 'file:///tmp/x', _meta: { traceparent: `00-${'4bf92f3577b34da6a3ce929d0e0e4736'}-${'00f067aa0ba902b7'}-00` } }, 96);
  s.result(6, { contents: [] }, 97);
  s.request(7, 'tools/call', { name: 'slow', arguments: {} }, 100);
  s.send('c2s', { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7, reason: 'stop' } }, 110);
  s.result(7, { content: [] }, 120);
  s.request('s1', 'sampling/createMessage', { messages: [], maxTokens: 10 }, 150, { direction: 's2c' });
  s.result('s1', { role: 'assistant', content: { type: 'text', text: 'ok' }, model: 'm' }, 160, { direction: 'c2s' });
  s.request(8, 'tools/call', { name: 'never-answered', arguments: {} }, 170);
  s.tick(1200);
  s.close(2000);
  const h = new TrafficScript('http-1').open({ transport: 'http', target: 'http://127.0.0.1:8931/mcp' }, 0);
  const header = { traceparent: `00-${'1'.repeat(32)}-${'2'.repeat(16)}-01` };
  h.request(7, 'tools/call', { name: 'echo', arguments: { text: 'hé' } }, 5, { channel: 'http-body', context: { streamId: 'a', headers: header } });
  h.send('s2c', { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x' } }, 6, {
    channel: 'sse',
    context: { streamId: 'a', httpStatus: 200 },
  });
  h.send('s2c', { jsonrpc: '2.0', id: 7, result: { content: [] } }, 8, { channel: 'sse', context: { streamId: 'a', httpStatus: 200 } });
  h.endStream('a', {}, 9);
  h.request(9, 'tools/call', { name: 'streamed' }, 10, { channel: 'http-body', context: { streamId: 'c' } });
  h.endStream('c', { outcome: 'transport_error', errorClass: 'connection_reset' }, 12);
  h.request(8, 'tools/list', {}, 20, { channel: 'http-body', context: { streamId: 'b' } });
  h.send('s2c', { jsonrpc: '2.0', id: 8, result: { tools: [] } }, 21, { channel: 'http-body', context: { streamId: 'b', httpStatus: 200 } });
  h.close(30, 'client closed', null);
  return [...s.events, ...h.events];
}
