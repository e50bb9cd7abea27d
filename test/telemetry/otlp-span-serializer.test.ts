/**
 * OtlpSpanSerializer against the SDK's ProtobufTraceSerializer: for the same spans the request
 * bytes must be identical. Spans are plain ReadableSpan records here, so values the API would
 * never let through (bytes, nested objects, undefined) are covered too, along with lengths whose
 * varints take 1 to 4 bytes, 64-bit integers, non-ASCII and malformed UTF-16 strings.
 */
import { describe, expect, it } from 'vitest';
import { SpanKind, SpanStatusCode, TraceFlags, type Attributes, type HrTime, type Link, type SpanContext } from '@opentelemetry/api';
import { TraceState } from '@opentelemetry/core';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import type { ReadableSpan, TimedEvent } from '@opentelemetry/sdk-trace-base';
import { OtlpSpanSerializer } from '../../src/telemetry/otlp-span-serializer.js';

const RESOURCE = defaultResource().merge(resourceFromAttributes({ 'service.name': 'mcptap-test', 'service.version': '1.2.3', 'host.name': 'héllo' }));
const OTHER_RESOURCE = resourceFromAttributes({ 'service.name': 'other' });
const SCOPE = { name: 'mcptap', version: '0.1.0', schemaUrl: undefined };
const OTHER_SCOPE = { name: 'other-scope', version: '', schemaUrl: 'https://opentelemetry.io/schemas/1.40.0' };

let counter = 0;
function hex(n: number, len: number): string {
  return n.toString(16).padStart(len, '0').slice(-len);
}

function span(over: Partial<ReadableSpan> & { ctx?: Partial<SpanContext> } = {}): ReadableSpan {
  const i = ++counter;
  const ctx: SpanContext = { traceId: hex(i * 7919, 32), spanId: hex(i * 104729 + 1, 16), traceFlags: TraceFlags.SAMPLED, ...over.ctx };
  const start: HrTime = [1_767_225_600 + i, (i * 123_457) % 1e9];
  return {
    name: `tools/call echo ${i}`,
    kind: SpanKind.CLIENT,
    spanContext: () => ctx,
    startTime: start,
    endTime: [start[0] + 1, 999_999_999],
    duration: [1, 0],
    ended: true,
    status: { code: SpanStatusCode.UNSET },
    attributes: { 'mcp.method.name': 'tools/call', 'jsonrpc.request.id': String(i), 'server.port': 8080 },
    links: [],
    events: [],
    resource: RESOURCE,
    instrumentationScope: SCOPE,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
    ...over,
  };
}

const ODD_VALUES: Attributes = {
  ascii: 'plain',
  empty: '',
  accents: 'café – naïve',
  emoji: 'tool 🔧 ok',
  lone: 'bad \ud800 surrogate',
  long: 'x'.repeat(200),
  longer: 'y'.repeat(20_000),
  longUnicode: 'é'.repeat(100),
  zero: 0,
  negative: -1,
  big: 2 ** 32 + 5,
  bigger: 2 ** 53 + 2,
  huge: 2 ** 62,
  tooBig: 2 ** 64,
  minInt: -(2 ** 63),
  negBig: -(2 ** 40) - 3,
  float: 1.5,
  nan: NaN,
  inf: -Infinity,
  negZero: -0,
  yes: true,
  no: false,
  strings: ['a', 'bé', 'c'],
  numbers: [1, 2.5, -3],
  withNulls: ['a', null as unknown as string, 'b'],
  emptyArray: [],
  ['']: 'empty key',
  ['ключ']: 'unicode key',
};

function serializeBoth(spans: ReadableSpan[]): [Buffer, Buffer] {
  const ours = new OtlpSpanSerializer().serialize(spans);
  const sdk = ProtobufTraceSerializer.serializeRequest(spans)!;
  return [Buffer.from(ours), Buffer.from(sdk)];
}

describe('OtlpSpanSerializer', () => {
  it('writes the same bytes as the SDK serializer for plain spans', () => {
    const [ours, sdk] = serializeBoth([span(), span(), span({ kind: SpanKind.INTERNAL }), span({ kind: undefined as unknown as SpanKind })]);
    expect(ours.equals(sdk)).toBe(true);
  });

  it('writes the same bytes for every kind of attribute value, event, link, status and flag', () => {
    const remoteParent: SpanContext = {
      traceId: hex(1, 32),
      spanId: hex(2, 16),
      traceFlags: TraceFlags.SAMPLED,
      isRemote: true,
      traceState: new TraceState('vendor=1,other=two'),
    };
    const events: TimedEvent[] = [
      {
        name: 'mcp.progress',
        time: [1_767_225_601, 5],
        attributes: { 'mcp.progress.progress': 1, 'mcp.progress.total': 2.5, 'mcp.progress.message': 'étape 1' },
      },
      { name: 'sse.stream_end', time: [1_767_225_602, 0], attributes: {} },
      { name: 'no attrs', time: [0, 0] },
      { name: 'dropped', time: [4_294_967_295, 999_999_999], attributes: { a: undefined }, droppedAttributesCount: 3 },
    ];
    const links: Link[] = [
      { context: { traceId: hex(3, 32), spanId: hex(4, 16), traceFlags: TraceFlags.NONE }, attributes: { 'mcptap.link': 'session' } },
      { context: { ...remoteParent, traceFlags: 3 } },
      { context: { traceId: 'ABCDEF0123456789abcdef0123456789', spanId: 'abc', traceFlags: TraceFlags.SAMPLED }, attributes: {}, droppedAttributesCount: 2 },
    ];
    const spans = [
      span({ attributes: ODD_VALUES, droppedAttributesCount: 7 }),
      span({
        parentSpanContext: remoteParent,
        ctx: { traceId: remoteParent.traceId, traceState: remoteParent.traceState },
        events,
        droppedEventsCount: 12,
        links,
        droppedLinksCount: 300,
      }),
      span({ parentSpanContext: { ...remoteParent, isRemote: false, spanId: '' }, status: { code: SpanStatusCode.ERROR, message: 'tool said: ошибка' } }),
      span({ status: { code: SpanStatusCode.OK, message: '' }, ctx: { traceFlags: TraceFlags.NONE } }),
      span({
        attributes: {
          bytes: new Uint8Array([1, 2, 255]),
          nested: { a: 1, b: ['x', { c: true }] },
          nothing: undefined,
          nul: null,
          big: BigInt(5),
        } as unknown as Attributes,
      }),
      span({ name: '', attributes: {} }),
    ];
    const [ours, sdk] = serializeBoth(spans);
    expect(ours.equals(sdk)).toBe(true);
  });

  it('groups by resource and scope object in first-seen order, as the SDK does', () => {
    const spans = [
      span(),
      span({ instrumentationScope: OTHER_SCOPE }),
      span({ resource: OTHER_RESOURCE }),
      span(),
      span({ resource: OTHER_RESOURCE, instrumentationScope: OTHER_SCOPE }),
      span({ instrumentationScope: { ...SCOPE } }),
      span({ instrumentationScope: OTHER_SCOPE }),
    ];
    const [ours, sdk] = serializeBoth(spans);
    expect(ours.equals(sdk)).toBe(true);
  });

  it('writes the same bytes for batches whose lengths need 3 and 4 varint bytes, and reuses its buffer safely', () => {
    const serializer = new OtlpSpanSerializer();
    const big = Array.from({ length: 600 }, () => span({ attributes: { ...ODD_VALUES, longer: 'z'.repeat(4000) } }));
    const first = Buffer.from(serializer.serialize(big));
    expect(first.length).toBeGreaterThan(2 ** 21); // the resource and scope lengths need 4 varint bytes
    expect(first.equals(Buffer.from(ProtobufTraceSerializer.serializeRequest(big)!))).toBe(true);
    const small = [span(), span()];
    const firstCopy = Buffer.from(first);
    const second = Buffer.from(serializer.serialize(small));
    expect(second.equals(Buffer.from(ProtobufTraceSerializer.serializeRequest(small)!))).toBe(true);
    // The first result is the caller's: writing the second did not touch it.
    expect(first.equals(firstCopy)).toBe(true);
  });

  it('serializes an empty batch as an empty request', () => {
    const [ours, sdk] = serializeBoth([]);
    expect(ours.length).toBe(0);
    expect(ours.equals(sdk)).toBe(true);
  });
});
