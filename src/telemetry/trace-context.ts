/**
 * W3C trace context (SEP-414): parse it from `params._meta` or an HTTP header, format it, write it into a request; and the sampling decision for a
 * span whose ids are known before it exists. Through @opentelemetry/core's W3C propagator on a plain carrier and an explicit root context: nothing
 * here touches the global OTel context or propagator. Invariant: the samplers ({@link samplerFor}) decide from the parent and trace id alone, never
 * the span's name, attributes or links, so a span's sampling is decided before it is built, and the minter decides as the tracer will.
 */
import {
  defaultTextMapGetter,
  defaultTextMapSetter,
  ROOT_CONTEXT,
  SamplingDecision,
  SpanKind,
  trace,
  TraceFlags,
  type Attributes,
  type Link,
  type SpanContext,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { AlwaysOffSampler, AlwaysOnSampler, ParentBasedSampler, TraceIdRatioBasedSampler, type Sampler } from '@opentelemetry/sdk-trace-base';
import { isRecord, type JsonRpcMessage, type JsonRpcRequest } from '../model/jsonrpc.js';
import type { SpanIds } from './seeded-span-ids.js';
import type { SamplerConfig } from './telemetry-config.js';

export interface TraceCarrier {
  traceparent?: string;
  tracestate?: string;
}

const propagator = new W3CTraceContextPropagator();

/** The remote span context a carrier names, or undefined when it is absent or invalid. */
export function parseTraceContext(carrier: TraceCarrier): SpanContext | undefined {
  if (typeof carrier.traceparent !== 'string') return undefined;
  const ctx = propagator.extract(ROOT_CONTEXT, carrier, defaultTextMapGetter);
  const sc = trace.getSpanContext(ctx);
  return sc && trace.isSpanContextValid(sc) ? sc : undefined;
}

/** `traceparent` (and `tracestate` when the context has one) for a span context. */
export function formatTraceContext(sc: SpanContext): TraceCarrier {
  const carrier: TraceCarrier = {};
  propagator.inject(trace.setSpanContext(ROOT_CONTEXT, sc), carrier, defaultTextMapSetter);
  return carrier;
}

const NO_CARRIER: TraceCarrier = Object.freeze({});

/** `_meta.traceparent` / `_meta.tracestate` of a request, when they are strings (a shared frozen object when there are none). */
export function metaTraceCarrier(msg: JsonRpcMessage): TraceCarrier {
  const params = (msg as { params?: unknown }).params;
  const meta = isRecord(params) && isRecord(params._meta) ? params._meta : undefined;
  if (!meta || (meta.traceparent === undefined && meta.tracestate === undefined)) return NO_CARRIER;
  const out: TraceCarrier = {};
  if (typeof meta.traceparent === 'string') out.traceparent = meta.traceparent;
  if (typeof meta.tracestate === 'string') out.tracestate = meta.tracestate;
  return out;
}

/** A copy of `request` whose `params._meta` carries `carrier` (replacing its trace context, keeping the rest); positional params: unchanged. */
export function withTraceContext(request: JsonRpcRequest, carrier: TraceCarrier): JsonRpcRequest {
  if (Array.isArray(request.params)) return request;
  const params = request.params ?? {};
  const meta: Record<string, unknown> = isRecord(params._meta) ? { ...params._meta } : {};
  delete meta.tracestate;
  if (carrier.traceparent !== undefined) meta.traceparent = carrier.traceparent;
  if (carrier.tracestate !== undefined) meta.tracestate = carrier.tracestate;
  return { ...request, params: { ...params, _meta: meta } };
}

/** A span's context decided up front, and whether the sampler records it. */
export interface Decision {
  context: SpanContext;
  recorded: boolean;
}

/**
 * The SDK tracer's decision for a CLIENT span of these ids (samplers use parent and trace id alone), so a sampled-out span is never built.
 * `parent` is a valid context ({@link parseTraceContext} returns no other).
 */
export function decide(sampler: Sampler, name: string, parent: SpanContext | undefined, ids: SpanIds): Decision {
  const traceId = parent?.traceId ?? ids.traceId;
  const ctx = parent ? trace.setSpanContext(ROOT_CONTEXT, parent) : ROOT_CONTEXT;
  const result = sampler.shouldSample(ctx, traceId, name, SpanKind.CLIENT, NO_ATTRIBUTES, NO_LINKS as Link[]);
  const traceState = result.traceState ?? parent?.traceState;
  const context: SpanContext = {
    traceId,
    spanId: ids.spanId,
    traceFlags: result.decision === SamplingDecision.RECORD_AND_SAMPLED ? TraceFlags.SAMPLED : TraceFlags.NONE,
    ...(traceState ? { traceState } : {}),
  };
  return { context, recorded: result.decision !== SamplingDecision.NOT_RECORD };
}

const NO_ATTRIBUTES: Attributes = Object.freeze({});
const NO_LINKS: readonly Link[] = Object.freeze([]);

/** The SDK's Sampler for a {@link SamplerConfig}, the classes the SDK's own environment reader builds. */
export function samplerFor(config: SamplerConfig | undefined): Sampler {
  switch (config?.name ?? 'parentbased_always_on') {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(config?.ratio ?? 1);
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config?.ratio ?? 1) });
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

/** No span can ever be sampled: a tap that propagates no context needs no span sink at all. */
export function samplesNothing(config: SamplerConfig | undefined): boolean {
  return config?.name === 'always_off' || (config?.name === 'traceidratio' && config.ratio === 0);
}
