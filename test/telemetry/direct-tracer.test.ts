/**
 * DirectTracer against the SDK's tracer (a BasicTracerProvider's, with the same resource, ids,
 * limits and processors): the same calls must give the same spans, field for field, the same
 * processor calls, and the same OTLP bytes. Covered twice: through the public Tracer/Span API
 * (limits, invalid values, status rules, sampling by the parent, suppressed tracing, calls after
 * end) and through OtelSpanSink fed real correlated traffic (stdio and HTTP, trace context,
 * progress, cancels, SSE, captured content, injected trace context).
 */
import { describe, expect, it } from 'vitest';
import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type Context, type Span as ApiSpan, type Tracer } from '@opentelemetry/api';
import { suppressTracing, TraceState } from '@opentelemetry/core';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  type IdGenerator,
  type ReadableSpan,
  type Sampler,
  type Span,
  type SpanLimits,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import type { TapEvent } from '../../src/model/events.js';
import { OtelSpanSink } from '../../src/telemetry/otel-span-sink.js';
import { DirectTracer, sdkSpanLimits, sdkTracerRequired } from '../../src/telemetry/direct-tracer.js';
import { PresetIdGenerator } from '../../src/telemetry/preset-id-generator.js';
import { samplerFor } from '../../src/telemetry/samplers.js';
import { SAMPLER_NAMES, type SamplerConfig } from '../../src/telemetry/telemetry-config.js';
import { SeededSpanIds } from '../../src/telemetry/seeded-span-ids.js';
import { TraceContextMinter } from '../../src/telemetry/trace-context-minter.js';
import { TrafficScript } from '../sinks/traffic-script.js';

const RESOURCE = resourceFromAttributes({ 'service.name': 'direct-tracer-test' });

/** Ids from a counter (both tracers draw the same sequence). */
class CountingIds implements IdGenerator {
  private n = 0;
  generateTraceId(): string {
    return (++this.n).toString(16).padStart(32, '0');
  }
  generateSpanId(): string {
    return (++this.n).toString(16).padStart(16, '0');
  }
}

/** Records what a processor is told, in order. */
class RecordingProcessor implements SpanProcessor {
  readonly calls: string[] = [];
  readonly ended: ReadableSpan[] = [];
  onStart(span: Span, ctx: Context): void {
    this.calls.push(`start ${span.name} ${ctx === ROOT_CONTEXT ? 'root' : 'ctx'}`);
  }
  onEnding(span: Span): void {
    this.calls.push(`ending ${span.name} ${span.ended}`);
  }
  onEnd(span: ReadableSpan): void {
    this.calls.push(`end ${span.name} ${span.ended}`);
    this.ended.push(span);
  }
  async forceFlush(): Promise<void> {}
  async shutdown(): Promise<void> {}
}

type Body = (tracer: Tracer, returned: ApiSpan[], ids: IdGenerator) => void;

interface Run {
  spans: ReadableSpan[];
  calls: string[];
  returned: ApiSpan[];
}

function run(kind: 'sdk' | 'direct', limits: SpanLimits, ids: () => IdGenerator, body: Body, sampler: Sampler): Run {
  const processor = new RecordingProcessor();
  const idGenerator = ids();
  const provider = new BasicTracerProvider({ resource: RESOURCE, idGenerator, sampler, spanProcessors: [processor], spanLimits: limits });
  const tracer =
    kind === 'sdk'
      ? provider.getTracer('mcptap', '9.9.9')
      : new DirectTracer({
          resource: RESOURCE,
          scope: { name: 'mcptap', version: '9.9.9', schemaUrl: undefined },
          idGenerator,
          processors: [processor],
          limits: sdkSpanLimits(limits),
          sampler,
        });
  const returned: ApiSpan[] = [];
  body(tracer, returned, idGenerator);
  return { spans: processor.ended, calls: processor.calls, returned };
}

/** Everything an exporter can read from a span. */
function view(s: ReadableSpan) {
  return {
    name: s.name,
    kind: s.kind,
    spanContext: s.spanContext(),
    parentSpanContext: s.parentSpanContext,
    startTime: s.startTime,
    endTime: s.endTime,
    duration: s.duration,
    ended: s.ended,
    status: s.status,
    attributes: s.attributes,
    attributeKeys: Object.keys(s.attributes),
    links: s.links,
    events: s.events,
    droppedAttributesCount: s.droppedAttributesCount,
    droppedEventsCount: s.droppedEventsCount,
    droppedLinksCount: s.droppedLinksCount,
    resource: s.resource,
    scope: s.instrumentationScope,
  };
}

function expectSame(limits: SpanLimits, ids: () => IdGenerator, body: Body, sampler: SamplerConfig | undefined = undefined): Run {
  const sdk = run('sdk', limits, ids, body, samplerFor(sampler));
  const direct = run('direct', limits, ids, body, samplerFor(sampler));
  expect(direct.spans.map(view)).toEqual(sdk.spans.map(view));
  expect(direct.calls).toEqual(sdk.calls);
  expect(direct.returned.map((s) => [s.spanContext(), s.isRecording()])).toEqual(sdk.returned.map((s) => [s.spanContext(), s.isRecording()]));
  expect(Buffer.from(ProtobufTraceSerializer.serializeRequest(direct.spans)!).equals(Buffer.from(ProtobufTraceSerializer.serializeRequest(sdk.spans)!))).toBe(
    true,
  );
  return direct;
}

const T = (s: number, ns = 0): [number, number] => [1_767_225_600 + s, ns];
const TIGHT: SpanLimits = {
  attributeCountLimit: 4,
  attributeValueLengthLimit: 5,
  eventCountLimit: 3,
  linkCountLimit: 2,
  attributePerEventCountLimit: 2,
  attributePerLinkCountLimit: 1,
};
const remote = (flags: number) => ({ traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: flags, isRemote: true, traceState: new TraceState('v=1') });

describe('DirectTracer makes the SDK tracer spans', () => {
  it('through the Tracer and Span API, limits and odd input included', () => {
    const direct = expectSame(
      TIGHT,
      () => new CountingIds(),
      (tracer, returned) => {
        const links = [
          { context: remote(1), attributes: { a: 'long value', b: 2 } },
          { context: remote(0) },
          { context: remote(1), attributes: { c: undefined } },
        ];
        const s = tracer.startSpan(
          'first',
          {
            kind: SpanKind.CLIENT,
            startTime: T(1, 5),
            attributes: {
              a: 'abcdefgh',
              n: 1,
              bad: { x: 1 } as never,
              arr: ['abcdefg', 'x'],
              mixed: [1, 'a'] as never,
              none: undefined,
              '': 'empty key',
              more: true,
              most: 3,
            },
            links,
          },
          ROOT_CONTEXT,
        );
        s.setAttribute('a', 'replaced value');
        s.setAttribute('over', 'limit');
        s.setAttributes({ n: 2, another: 'x' });
        for (let i = 0; i < 5; i++) s.addEvent(`e${i}`, { i, text: 'long text', x: 1 }, T(2, i));
        s.addEvent('time only', T(3));
        s.addEvent('date', new Date(1_767_225_700_123));
        s.addLink({ context: remote(1), attributes: { k: 'v' } });
        s.addLinks([{ context: remote(0) }]);
        // Frozen links: kept as they are only where the copy would be equal.
        s.addLink(Object.freeze({ context: remote(1), attributes: Object.freeze({ k: 'v' }) }));
        s.addLink(Object.freeze({ context: remote(1), attributes: Object.freeze({ k: 'too long' }) }));
        s.addLink(Object.freeze({ context: remote(1), attributes: Object.freeze({ a: 1, b: 2 }) }));
        s.setStatus({ code: SpanStatusCode.UNSET, message: 'ignored' });
        s.setStatus({ code: SpanStatusCode.ERROR, message: 42 as never });
        s.setStatus({ code: SpanStatusCode.ERROR, message: 'it failed' });
        s.updateName('renamed');
        s.recordException(new Error('boom'), T(4));
        s.recordException({ code: 'ECONNRESET', message: 'reset' }, T(4, 1));
        s.end(T(5));
        s.setAttribute('after', 'end');
        s.addEvent('after end');
        s.end(T(6));
        returned.push(s);
        const ok = tracer.startSpan('ok status', { startTime: T(1) }, ROOT_CONTEXT);
        ok.setStatus({ code: SpanStatusCode.OK });
        ok.setStatus({ code: SpanStatusCode.ERROR, message: 'too late' });
        ok.end(T(0)); // before its start: the SDK clamps the end time
        returned.push(ok);
        const child = tracer.startSpan('child of a sampled remote parent', { startTime: T(1), links: [] }, trace.setSpanContext(ROOT_CONTEXT, remote(1)));
        child.end(new Date(1_767_225_800_000));
        returned.push(child);
        returned.push(tracer.startSpan('child of an unsampled parent', { startTime: T(1) }, trace.setSpanContext(ROOT_CONTEXT, remote(0))));
        returned.push(tracer.startSpan('suppressed', { startTime: T(1) }, suppressTracing(ROOT_CONTEXT)));
        const orphan = tracer.startSpan(
          'invalid parent is a root',
          { startTime: T(1) },
          trace.setSpanContext(ROOT_CONTEXT, { ...remote(1), traceId: '0'.repeat(32) }),
        );
        orphan.end(T(1, 1));
        returned.push(orphan);
        const rooted = tracer.startSpan('root option', { root: true, startTime: T(1) }, trace.setSpanContext(ROOT_CONTEXT, remote(1)));
        rooted.end(1_767_225_900_000);
        returned.push(rooted);
        tracer.startActiveSpan('active', { startTime: T(1) }, ROOT_CONTEXT, (span) => {
          expect(trace.getSpan(context.active())).toBeUndefined(); // no context manager is registered: nothing becomes active
          span.end(T(2));
          returned.push(span);
        });
      },
    );
    expect(direct.spans.map((s) => s.name)).toEqual([
      'renamed',
      'ok status',
      'child of a sampled remote parent',
      'invalid parent is a root',
      'root option',
      'active',
    ]);
    expect(direct.spans[0]!.droppedEventsCount).toBeGreaterThan(0);
    expect(direct.spans[0]!.droppedLinksCount).toBeGreaterThan(0);
    expect(direct.spans[0]!.droppedAttributesCount).toBeGreaterThan(0);
    expect(direct.spans[0]!.links.map((l) => l.attributes)).toEqual([{ k: 'too l' }, { a: 1 }]);
  });

  it('through OtelSpanSink on real correlated traffic, with preset ids, content capture and injected trace context', () => {
    // 2 sessions + 13 exchanges, less the resources/read whose caller's parent was not sampled.
    expect(sinkTraffic(undefined).length).toBe(14);
  });

  it('with every OTEL_TRACES_SAMPLER sampler, through OtelSpanSink (the sampler decides before any attribute is built)', () => {
    const counts: Record<string, number> = {};
    for (const name of SAMPLER_NAMES) {
      const config: SamplerConfig = name.endsWith('traceidratio') ? { name, ratio: 0.5 } : { name };
      counts[name] = sinkTraffic(config).length;
    }
    expect(counts.always_on).toBe(15);
    expect(counts.always_off).toBe(0);
    expect(counts.parentbased_always_on).toBe(14);
    // Only the children of a sampled caller: the injected call and the tools/call with a sampled traceparent.
    expect(counts.parentbased_always_off).toBe(2);
    // Half of the roots, the same way on both tracers (expectSame); children follow their parent.
    expect(counts.traceidratio).toBeGreaterThan(0);
    expect(counts.traceidratio).toBeLessThan(15);
    expect(counts.parentbased_traceidratio).toBeGreaterThanOrEqual(2);
    expect(counts.parentbased_traceidratio).toBeLessThan(14);
  });
});

/** OtelSpanSink fed {@link traffic} on both tracers (expectSame), captured content off and on: the spans ended. */
function sinkTraffic(sampler: SamplerConfig | undefined): ReadableSpan[] {
  const events = traffic();
  const seed = 'c0ffee';
  let spans: ReadableSpan[] = [];
  for (const captureContent of [false, true]) {
    const out = expectSame(
      { eventCountLimit: 1024, attributeValueLengthLimit: 8192 + 64 },
      () => new PresetIdGenerator(),
      (tracer, _returned, ids) => {
        // The same minted ids for both runs: a counting random source.
        let r = 0;
        const minter = new TraceContextMinter({ random: (n) => Buffer.alloc(n, ++r), sampler: samplerFor(sampler) });
        minter.mint('http-1', 'c2s', 7, {
          jsonrpc: '2.0',
          id: 7,
          method: 'tools/call',
          params: { name: 'echo', _meta: { traceparent: `00-${'c'.repeat(32)}-${'d'.repeat(16)}-01` } },
        });
        const sink = new OtelSpanSink({
          tracer,
          captureContent,
          maxContentLength: 8192,
          spanIds: new SeededSpanIds(seed),
          idGenerator: ids as PresetIdGenerator,
          minter,
          redact: (v) => v,
          clock: { nowUs: () => 1_767_225_700_000_000 },
        });
        for (const e of events) sink.onEvent(e);
        void sink.close();
        expect(sink.stats().errors).toBe(0);
      },
      sampler,
    );
    spans = out.spans;
  }
  return spans;
}

describe('sdkTracerRequired', () => {
  it('is false for an empty environment and any sampler (DirectTracer samples), true for a span limit', () => {
    expect(sdkTracerRequired({})).toBe(false);
    expect(sdkTracerRequired({ OTEL_TRACES_SAMPLER: 'parentbased_always_on', OTEL_SERVICE_NAME: 'x', OTEL_SPAN_EVENT_COUNT_LIMIT: ' ' })).toBe(false);
    expect(sdkTracerRequired({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.5' })).toBe(false);
    expect(sdkTracerRequired({ OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT: '10' })).toBe(true);
    expect(sdkTracerRequired({ OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT: '100' })).toBe(true);
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
