/**
 * OTLP/HTTP protobuf serialization of an ExportTraceServiceRequest from ReadableSpans, for the
 * span exporter telemetry.ts builds (same transport, retries and OTEL_EXPORTER_OTLP_* handling as
 * the SDK's exporter; only the serializer is ours).
 *
 * Why: the SDK serializer walks every span twice (a size estimate, then the write) and encodes
 * every attribute key anew, for every span. This one writes once into a reused buffer and keeps
 * each attribute key's encoding (tag, length, bytes) after its first use: mcptap's spans repeat
 * the same dozen keys.
 *
 * Invariant: the bytes are exactly those of the SDK's ProtobufTraceSerializer for the same spans
 * (same fields, same order, same grouping by resource and scope object, shortest varints);
 * test/telemetry/otlp-span-serializer.test.ts compares them.
 */
import type { Attributes, Link, SpanStatus } from '@opentelemetry/api';
import type { InstrumentationScope } from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan, TimedEvent } from '@opentelemetry/sdk-trace-base';
import { ProtoWriter, utf8Length, varintSize } from './proto-writer.js';

/** Attribute keys whose encoding is kept; past this many distinct keys, new ones are encoded each time. */
const MAX_CACHED_KEYS = 4096;
/** Distinct values kept per key; a key that has more (request ids, exchange keys) is not cached by value. */
const MAX_VALUES_PER_KEY = 64;
const MAX_CACHED_VALUE_LENGTH = 256;
const MIN_INT64 = -(2 ** 63);

interface KeyCache {
  /** KeyValue.key: tag 1, length, UTF-8 bytes. */
  bytes: Uint8Array;
  /** Length-prefixed KeyValue messages by value; null once the key had too many values. */
  values: Map<string | number | boolean, Uint8Array> | null;
}
const MAX_INT64 = 2 ** 63;
/** OTLP span flags: the context's W3C flags plus "has is_remote" and "is_remote". */
const HAS_IS_REMOTE = 0x100;
const IS_REMOTE = 0x200;

export class OtlpSpanSerializer {
  private readonly w = new ProtoWriter();
  /** Per attribute key: its KeyValue.key encoding and, for keys with few values, whole KeyValues by value. */
  private readonly keys = new Map<string, KeyCache>();
  /** The last link context written, its ids when written, and their encoding (fields 1 and 2). */
  private lastLinkContext: object | undefined;
  private lastLinkIds: [string, string] = ['', ''];
  private lastLinkBytes = new Uint8Array(0);

  serialize(spans: readonly ReadableSpan[]): Uint8Array {
    const w = this.w;
    w.pos = 0;
    for (const [resource, scopes] of groupSpans(spans)) {
      w.ensure(1);
      w.byte(0x0a); // ExportTraceServiceRequest.resource_spans (1)
      const rs = w.begin(3);
      this.resource(resource);
      for (const [scope, list] of scopes) {
        w.ensure(1);
        w.byte(0x12); // ResourceSpans.scope_spans (2)
        const ss = w.begin(3);
        this.scope(scope);
        for (const span of list) this.span(span);
        if (scope.schemaUrl) this.stringField(0x1a, scope.schemaUrl);
        w.end(ss, 3);
      }
      if (resource.schemaUrl) this.stringField(0x1a, resource.schemaUrl);
      w.end(rs, 3);
    }
    return w.take();
  }

  private resource(resource: Resource): void {
    const w = this.w;
    w.ensure(1);
    w.byte(0x0a); // ResourceSpans.resource (1)
    const start = w.begin(2);
    if (resource.attributes) this.attributes(resource.attributes, 0x0a);
    w.ensure(2);
    w.byte(0x10); // dropped_attributes_count (2): not tracked, always 0
    w.byte(0);
    w.end(start, 2);
  }

  private scope(scope: InstrumentationScope & { attributes?: Attributes; droppedAttributesCount?: number }): void {
    const w = this.w;
    w.ensure(1);
    w.byte(0x0a); // ScopeSpans.scope (1)
    const start = w.begin(1);
    this.stringField(0x0a, scope.name);
    if (scope.version) this.stringField(0x12, scope.version);
    if (scope.attributes) this.attributes(scope.attributes, 0x1a);
    if (scope.droppedAttributesCount) this.varintField(0x20, scope.droppedAttributesCount);
    w.end(start, 1);
  }

  private span(span: ReadableSpan): void {
    const w = this.w;
    w.ensure(1);
    w.byte(0x12); // ScopeSpans.spans (2)
    const start = w.begin(2);
    const ctx = span.spanContext();
    this.hexField(0x0a, ctx.traceId);
    this.hexField(0x12, ctx.spanId);
    const traceState = ctx.traceState?.serialize();
    if (traceState) this.stringField(0x1a, traceState);
    const parent = span.parentSpanContext;
    if (parent?.spanId) this.hexField(0x22, parent.spanId);
    this.stringField(0x2a, span.name);
    const kind = span.kind == null ? 0 : span.kind + 1;
    if (kind !== 0) this.varintField(0x30, kind);
    this.timeField(0x39, span.startTime);
    this.timeField(0x41, span.endTime);
    if (span.attributes) this.attributes(span.attributes, 0x4a);
    this.varintField(0x50, span.droppedAttributesCount);
    for (const event of span.events) this.event(event);
    this.varintField(0x60, span.droppedEventsCount);
    for (const link of span.links) this.link(link);
    this.varintField(0x70, span.droppedLinksCount);
    this.status(span.status);
    // flags (16, fixed32): tag 133 takes two bytes.
    w.ensure(2);
    w.byte(0x85);
    w.byte(0x01);
    w.fixed32(spanFlags(ctx.traceFlags, parent?.isRemote));
    w.end(start, 2);
  }

  private event(event: TimedEvent): void {
    const w = this.w;
    w.ensure(1);
    w.byte(0x5a); // Span.events (11)
    const start = w.begin(1);
    this.timeField(0x09, event.time);
    this.stringField(0x12, event.name);
    if (event.attributes) this.attributes(event.attributes, 0x1a);
    this.varintField(0x20, event.droppedAttributesCount || 0);
    w.end(start, 1);
  }

  private link(link: Link): void {
    const w = this.w;
    w.ensure(1);
    w.byte(0x6a); // Span.links (13)
    const start = w.begin(1);
    const ctx = link.context;
    // Exchange spans link to their session span: the same context object, span after span.
    if (ctx !== this.lastLinkContext || ctx.traceId !== this.lastLinkIds[0] || ctx.spanId !== this.lastLinkIds[1]) {
      const from = w.pos;
      this.hexField(0x0a, ctx.traceId);
      this.hexField(0x12, ctx.spanId);
      this.lastLinkContext = ctx;
      this.lastLinkIds = [ctx.traceId, ctx.spanId];
      this.lastLinkBytes = Uint8Array.prototype.slice.call(w.buf, from, w.pos);
    } else {
      w.raw(this.lastLinkBytes);
    }
    const traceState = ctx.traceState?.serialize();
    if (traceState) this.stringField(0x1a, traceState);
    if (link.attributes) this.attributes(link.attributes, 0x22);
    this.varintField(0x28, link.droppedAttributesCount || 0);
    w.ensure(1);
    w.byte(0x35); // flags (6, fixed32)
    w.fixed32(spanFlags(ctx.traceFlags, ctx.isRemote));
    w.end(start, 1);
  }

  private status(status: SpanStatus): void {
    const w = this.w;
    w.ensure(1);
    w.byte(0x7a); // Span.status (15)
    const start = w.begin(1);
    if (status.message) this.stringField(0x12, status.message);
    this.varintField(0x18, status.code);
    w.end(start, 1);
  }

  /** Repeated KeyValue under the one-byte tag `tag`. */
  private attributes(attrs: Attributes, tag: number): void {
    const w = this.w;
    for (const key in attrs) {
      if (!Object.prototype.hasOwnProperty.call(attrs, key)) continue;
      const value = attrs[key];
      const k = this.key(key);
      const t = typeof value;
      if (k.values !== null && (t === 'string' || t === 'number' || t === 'boolean')) {
        // A value this key had before: the whole KeyValue is one copy.
        const cached = k.values.get(value as string | number | boolean);
        if (cached) {
          w.ensure(1);
          w.byte(tag);
          w.raw(cached);
          continue;
        }
      }
      w.ensure(1);
      w.byte(tag);
      const from = w.pos;
      if (t === 'string') {
        w.stringKeyValueBody(k.bytes, value as string);
      } else {
        const start = w.begin(1);
        w.raw(k.bytes);
        w.ensure(1);
        w.byte(0x12); // KeyValue.value (2)
        const v = w.begin(1);
        this.anyValue(value);
        w.end(v, 1);
        w.end(start, 1);
      }
      if (k.values !== null && (t === 'string' || t === 'number' || t === 'boolean')) this.remember(k, value as string | number | boolean, from);
    }
  }

  /** Keep the KeyValue just written (from `from`) for this key and value; a key with too many values stops being cached. */
  private remember(k: KeyCache, value: string | number | boolean, from: number): void {
    const values = k.values!;
    if (values.size >= MAX_VALUES_PER_KEY) {
      k.values = null;
      return;
    }
    if (typeof value === 'string' && value.length > MAX_CACHED_VALUE_LENGTH) return;
    values.set(value, Uint8Array.prototype.slice.call(this.w.buf, from, this.w.pos));
  }

  /** The body of an AnyValue (nothing for values OTLP cannot carry). */
  private anyValue(value: unknown): void {
    const w = this.w;
    if (typeof value === 'string') {
      this.stringField(0x0a, value);
    } else if (typeof value === 'boolean') {
      this.varintField(0x10, value ? 1 : 0);
    } else if (typeof value === 'number') {
      if (Number.isInteger(value) && value >= MIN_INT64 && value < MAX_INT64) {
        this.varintField(0x18, value);
      } else {
        w.ensure(1);
        w.byte(0x21);
        w.double(value);
      }
    } else if (value instanceof Uint8Array) {
      w.ensure(1);
      w.byte(0x3a);
      w.bytes(value);
    } else if (Array.isArray(value)) {
      w.ensure(1);
      w.byte(0x2a); // array_value (5): ArrayValue { repeated AnyValue values = 1 }
      const start = w.begin(1);
      for (const item of value) {
        w.ensure(1);
        w.byte(0x0a);
        const s = w.begin(1);
        this.anyValue(item);
        w.end(s, 1);
      }
      w.end(start, 1);
    } else if (typeof value === 'object' && value !== null) {
      this.kvList(value as Record<string, unknown>);
    }
  }

  /** kvlist_value (6): KeyValueList { repeated KeyValue values = 1 }. */
  private kvList(obj: Record<string, unknown>): void {
    const w = this.w;
    w.ensure(1);
    w.byte(0x32);
    const start = w.begin(1);
    for (const k in obj) {
      if (!Object.prototype.hasOwnProperty.call(obj, k)) continue;
      w.ensure(1);
      w.byte(0x0a);
      const kv = w.begin(1);
      this.stringField(0x0a, k);
      w.ensure(1);
      w.byte(0x12);
      const v = w.begin(1);
      this.anyValue(obj[k]);
      w.end(v, 1);
      w.end(kv, 1);
    }
    w.end(start, 1);
  }

  /** Tag, length and bytes of a KeyValue.key, kept per key. */
  private key(key: string): KeyCache {
    const cached = this.keys.get(key);
    if (cached) return cached;
    const n = utf8Length(key);
    const out = Buffer.allocUnsafe(1 + varintSize(n) + n);
    out[0] = 0x0a;
    let p = 1;
    let x = n;
    while (x > 0x7f) {
      out[p++] = (x & 0x7f) | 0x80;
      x >>>= 7;
    }
    out[p++] = x;
    out.write(key, p, n, 'utf8');
    const entry: KeyCache = { bytes: out, values: new Map() };
    if (this.keys.size < MAX_CACHED_KEYS) this.keys.set(key, entry);
    return entry;
  }

  private stringField(tag: number, s: string): void {
    this.w.ensure(1);
    this.w.byte(tag);
    this.w.string(s);
  }

  private hexField(tag: number, hex: string): void {
    this.w.ensure(1);
    this.w.byte(tag);
    this.w.hexBytes(hex);
  }

  private varintField(tag: number, v: number): void {
    this.w.ensure(1);
    this.w.byte(tag);
    this.w.varint(v);
  }

  private timeField(tag: number, t: readonly [number, number]): void {
    this.w.ensure(1);
    this.w.byte(tag);
    this.w.fixed64Time(t);
  }
}

function spanFlags(traceFlags: number, isRemote: boolean | undefined): number {
  return (traceFlags & 0xff) | HAS_IS_REMOTE | (isRemote ? IS_REMOTE : 0);
}

/** Spans by resource, then by instrumentation scope, both by identity and in first-seen order. */
function groupSpans(spans: readonly ReadableSpan[]): Map<Resource, Map<InstrumentationScope, ReadableSpan[]>> {
  const out = new Map<Resource, Map<InstrumentationScope, ReadableSpan[]>>();
  let lastScope: InstrumentationScope | undefined;
  let lastResource: Resource | undefined;
  let lastList: ReadableSpan[] | undefined;
  for (const span of spans) {
    // Spans of one tracer share both objects: skip the lookups while they repeat.
    if (span.resource === lastResource && span.instrumentationScope === lastScope && lastList) {
      lastList.push(span);
      continue;
    }
    let scopes = out.get(span.resource);
    if (!scopes) out.set(span.resource, (scopes = new Map()));
    let list = scopes.get(span.instrumentationScope);
    if (!list) scopes.set(span.instrumentationScope, (list = []));
    list.push(span);
    lastResource = span.resource;
    lastScope = span.instrumentationScope;
    lastList = list;
  }
  return out;
}
