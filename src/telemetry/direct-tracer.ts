/**
 * A Tracer that makes the same spans as the SDK's (a BasicTracerProvider's tracer with the same
 * sampler) for mcptap's span sink, at a fraction of the CPU: no attribute sanitizing passes before
 * the span copies them anyway, no clock reads when the caller gives HrTimes (the span sink always
 * does). See {@link DirectSpan}.
 *
 * Sampling goes through the SDK's {@link Sampler} (telemetry.ts builds it from OTEL_TRACES_SAMPLER),
 * called as the SDK's tracer calls it: a span the sampler does not record is the API's
 * non-recording span with the new ids and flags 00, and nothing else is made. With
 * {@link DirectTracer.startSpanDeferred} the caller's options (attributes, links) are built only
 * for a span that is recorded; the sampler then sees none of them, which the spec's samplers never
 * read. telemetry.ts uses the SDK's tracer instead whenever an OTEL_* span limit is set (see
 * {@link sdkTracerRequired}).
 *
 * Span processors are called as the provider's MultiSpanProcessor calls them (in order), so the
 * provider keeps its role for flush and shutdown.
 */
import {
  context as apiContext,
  INVALID_SPAN_CONTEXT,
  SamplingDecision,
  SpanKind,
  trace,
  TraceFlags,
  type Attributes,
  type Context,
  type Link,
  type Span as ApiSpan,
  type SpanOptions,
  type Tracer,
} from '@opentelemetry/api';
import { isTracingSuppressed, type InstrumentationScope } from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import type { IdGenerator, ReadableSpan, Sampler, Span, SpanLimits, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { DirectSpan, type DirectSpanShared } from './direct-span.js';

export interface DirectTracerOptions {
  resource: Resource;
  scope: InstrumentationScope;
  idGenerator: IdGenerator;
  /** Called in order on start, ending and end, like the provider's own. */
  processors: readonly SpanProcessor[];
  /** Limits as the SDK would resolve them (see {@link sdkSpanLimits}). */
  limits: Required<SpanLimits>;
  /** Decides which spans are recorded and sampled; the provider's own (see samplers.ts). */
  sampler: Sampler;
}

const NO_ATTRIBUTES: Attributes = Object.freeze({});
const NO_LINKS = Object.freeze([]) as unknown as Link[];

export { sdkTracerRequired } from './telemetry-config.js';

/** The limits a BasicTracerProvider resolves from `spanLimits` when no OTEL_* limit is set. */
export function sdkSpanLimits(given: SpanLimits): Required<SpanLimits> {
  return {
    attributeCountLimit: given.attributeCountLimit ?? 128,
    attributeValueLengthLimit: given.attributeValueLengthLimit ?? Infinity,
    eventCountLimit: given.eventCountLimit ?? 128,
    linkCountLimit: given.linkCountLimit ?? 128,
    attributePerEventCountLimit: given.attributePerEventCountLimit ?? 128,
    attributePerLinkCountLimit: given.attributePerLinkCountLimit ?? 128,
  };
}

export class DirectTracer implements Tracer {
  private readonly shared: DirectSpanShared;
  private readonly ids: IdGenerator;
  private readonly sampler: Sampler;

  constructor(opts: DirectTracerOptions) {
    this.ids = opts.idGenerator;
    this.sampler = opts.sampler;
    this.shared = { resource: opts.resource, scope: opts.scope, processor: fanOut(opts.processors), limits: opts.limits };
  }

  startSpan(name: string, options: SpanOptions = {}, ctx: Context = apiContext.active()): ApiSpan {
    return this.start(name, options.kind ?? SpanKind.INTERNAL, ctx, options, undefined, false);
  }

  /**
   * The sampler decides from the name, kind, parent and trace id first; `build` makes the options
   * only for a span that is recorded, and the span takes over their `attributes` (the caller must
   * not use that object again: the span may keep it instead of copying it). A span sampled out
   * costs its ids and the sampler's call, no attributes. `root` in the built options is ignored.
   */
  startSpanDeferred(name: string, kind: SpanKind, ctx: Context, build: () => SpanOptions): ApiSpan {
    return this.start(name, kind, ctx, undefined, build, true);
  }

  private start(name: string, kind: SpanKind, ctx: Context, given: SpanOptions | undefined, build: (() => SpanOptions) | undefined, adopt: boolean): ApiSpan {
    if (given?.root) ctx = trace.deleteSpan(ctx);
    if (isTracingSuppressed(ctx)) return trace.wrapSpanContext(INVALID_SPAN_CONTEXT);
    const parent = trace.getSpan(ctx)?.spanContext();
    // The SDK takes the span id first, then (for a root) the trace id: preset id generators rely on neither order, but keep it.
    const spanId = this.ids.generateSpanId();
    const validParent = parent && trace.isSpanContextValid(parent) ? parent : undefined;
    const traceId = validParent ? validParent.traceId : this.ids.generateTraceId();
    const result = this.sampler.shouldSample(ctx, traceId, name, kind, given?.attributes ?? NO_ATTRIBUTES, given?.links ?? NO_LINKS);
    const traceFlags = result.decision === SamplingDecision.RECORD_AND_SAMPLED ? TraceFlags.SAMPLED : TraceFlags.NONE;
    const spanContext = { traceId, spanId, traceFlags, traceState: result.traceState ?? validParent?.traceState };
    if (result.decision === SamplingDecision.NOT_RECORD) return trace.wrapSpanContext(spanContext);
    const options = given ?? build!();
    // Attributes a sampler adds (none of the spec's do) go on top, in a copy of our own.
    const attributes = result.attributes ? { ...options.attributes, ...result.attributes } : options.attributes;
    return new DirectSpan(this.shared, {
      spanContext,
      parentSpanContext: validParent,
      name,
      kind,
      startTime: options.startTime,
      attributes,
      links: options.links,
      context: ctx,
      adoptAttributes: adopt || result.attributes !== undefined,
    });
  }

  startActiveSpan<F extends (span: ApiSpan) => unknown>(name: string, fn: F): ReturnType<F>;
  startActiveSpan<F extends (span: ApiSpan) => unknown>(name: string, options: SpanOptions, fn: F): ReturnType<F>;
  startActiveSpan<F extends (span: ApiSpan) => unknown>(name: string, options: SpanOptions, ctx: Context, fn: F): ReturnType<F>;
  startActiveSpan<F extends (span: ApiSpan) => unknown>(name: string, ...rest: unknown[]): ReturnType<F> {
    const fn = rest[rest.length - 1] as (span: ApiSpan) => ReturnType<F>;
    const options = (rest.length >= 2 ? rest[0] : undefined) as SpanOptions | undefined;
    const parentCtx = ((rest.length >= 3 ? rest[1] : undefined) as Context | undefined) ?? apiContext.active();
    const span = this.startSpan(name, options, parentCtx);
    return apiContext.with(trace.setSpan(parentCtx, span), fn, undefined, span);
  }
}

/** One processor calling `processors` in order (the provider's MultiSpanProcessor, for start and end). */
function fanOut(processors: readonly SpanProcessor[]): SpanProcessor {
  if (processors.length === 1) return processors[0]!;
  return {
    onStart: (span: Span, ctx: Context) => {
      for (const p of processors) p.onStart(span, ctx);
    },
    onEnding: (span: Span) => {
      for (const p of processors) p.onEnding?.(span);
    },
    onEnd: (span: ReadableSpan) => {
      for (const p of processors) p.onEnd(span);
    },
    forceFlush: async () => {
      await Promise.all(processors.map((p) => p.forceFlush()));
    },
    shutdown: async () => {
      await Promise.all(processors.map((p) => p.shutdown()));
    },
  };
}
