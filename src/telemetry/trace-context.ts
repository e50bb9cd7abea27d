/**
 * W3C trace context (SEP-414): parse it from `params._meta` or an HTTP header, format it, write it into a request. Through @opentelemetry/core's W3C
 * propagator on a plain carrier and an explicit root context: nothing here touches the global OTel context or propagator.
 */
import { ROOT_CONTEXT, trace, type SpanContext, type TextMapGetter, type TextMapSetter } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { isRecord, type JsonRpcMessage, type JsonRpcRequest } from '../model/jsonrpc.js';

export interface TraceCarrier {
  traceparent?: string;
  tracestate?: string;
}

const propagator = new W3CTraceContextPropagator();

const getter: TextMapGetter<TraceCarrier> = {
  keys: (c) => Object.keys(c),
  get: (c, key) => (key === 'traceparent' ? c.traceparent : key === 'tracestate' ? c.tracestate : undefined),
};

const setter: TextMapSetter<TraceCarrier> = {
  set: (c, key, value) => {
    if (key === 'traceparent') c.traceparent = value;
    else if (key === 'tracestate') c.tracestate = value;
  },
};

/** The remote span context a carrier names, or undefined when it is absent or invalid. */
export function parseTraceContext(carrier: TraceCarrier): SpanContext | undefined {
  if (typeof carrier.traceparent !== 'string') return undefined;
  const ctx = propagator.extract(ROOT_CONTEXT, carrier, getter);
  const sc = trace.getSpanContext(ctx);
  return sc && trace.isSpanContextValid(sc) ? sc : undefined;
}

/** `traceparent` (and `tracestate` when the context has one) for a span context. */
export function formatTraceContext(sc: SpanContext): TraceCarrier {
  const carrier: TraceCarrier = {};
  propagator.inject(trace.setSpanContext(ROOT_CONTEXT, sc), carrier, setter);
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
