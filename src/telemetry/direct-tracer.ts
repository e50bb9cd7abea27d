/**
 * A Tracer that makes the same spans as the SDK's (a BasicTracerProvider's tracer with the default
 * ParentBased(AlwaysOn) sampler) for mcptap's span sink, at a fraction of the CPU: no attribute
 * sanitizing passes before the span copies them anyway, no sampler objects, no clock reads when
 * the caller gives HrTimes (the span sink always does). See {@link DirectSpan}.
 *
 * Sampling: a span whose parent is valid and not sampled is not recorded (the API's non-recording
 * span with the new ids and flags 00), everything else is recorded and sampled: ParentBased
 * (AlwaysOn), the SDK's default. telemetry.ts uses the SDK's tracer instead whenever an OTEL_*
 * variable that the SDK reads for span building is set (sampler, span limits); see
 * {@link sdkTracerRequired}.
 *
 * Span processors are called as the provider's MultiSpanProcessor calls them (in order), so the
 * provider keeps its role for flush and shutdown.
 */
import {
  context as apiContext,
  INVALID_SPAN_CONTEXT,
  SpanKind,
  trace,
  TraceFlags,
  type Context,
  type Span as ApiSpan,
  type SpanOptions,
  type Tracer,
} from '@opentelemetry/api';
import { isTracingSuppressed, type InstrumentationScope } from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import type { IdGenerator, ReadableSpan, Span, SpanLimits, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { DirectSpan, type DirectSpanShared } from './direct-span.js';

export interface DirectTracerOptions {
  resource: Resource;
  scope: InstrumentationScope;
  idGenerator: IdGenerator;
  /** Called in order on start, ending and end, like the provider's own. */
  processors: readonly SpanProcessor[];
  /** Limits as the SDK would resolve them (see {@link sdkSpanLimits}). */
  limits: Required<SpanLimits>;
}

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

  constructor(opts: DirectTracerOptions) {
    this.ids = opts.idGenerator;
    this.shared = { resource: opts.resource, scope: opts.scope, processor: fanOut(opts.processors), limits: opts.limits };
  }

  startSpan(name: string, options: SpanOptions = {}, ctx: Context = apiContext.active()): ApiSpan {
    return this.start(name, options, ctx, false);
  }

  /**
   * startSpan that takes over `options.attributes`: the caller must not use that object again (the
   * span may keep it as its own attributes instead of copying it). The span sink builds a fresh
   * object per exchange span; this saves the copy.
   */
  startSpanAdopting(name: string, options: SpanOptions, ctx: Context): ApiSpan {
    return this.start(name, options, ctx, true);
  }

  private start(name: string, options: SpanOptions, ctx: Context, adoptAttributes: boolean): ApiSpan {
    if (options.root) ctx = trace.deleteSpan(ctx);
    if (isTracingSuppressed(ctx)) return trace.wrapSpanContext(INVALID_SPAN_CONTEXT);
    const parent = trace.getSpan(ctx)?.spanContext();
    // The SDK takes the span id first, then (for a root) the trace id: preset id generators rely on neither order, but keep it.
    const spanId = this.ids.generateSpanId();
    const validParent = parent && trace.isSpanContextValid(parent) ? parent : undefined;
    const traceId = validParent ? validParent.traceId : this.ids.generateTraceId();
    const sampled = !validParent || (validParent.traceFlags & TraceFlags.SAMPLED) !== 0;
    const spanContext = { traceId, spanId, traceFlags: sampled ? TraceFlags.SAMPLED : TraceFlags.NONE, traceState: validParent?.traceState };
    if (!sampled) return trace.wrapSpanContext(spanContext);
    return new DirectSpan(this.shared, {
      spanContext,
      parentSpanContext: validParent,
      name,
      kind: options.kind ?? SpanKind.INTERNAL,
      startTime: options.startTime,
      attributes: options.attributes,
      links: options.links,
      context: ctx,
      adoptAttributes,
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
