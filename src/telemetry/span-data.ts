/**
 * Spans as data: an exchange's span is built once, when it completed (or unfinished, at close), by the pure {@link exchangeSpan}; {@link emitSpan}
 * alone hands such data to the SDK's tracer, so its sampler, limits, processors and exporters see an ordinary span. Trace context (SEP-414): the parent
 * is `params._meta.traceparent`, else none; with `--inject-trace-context` the span's ids were minted up front and the parent is what the caller sent.
 * An HTTP `traceparent` header is a link, as is the connection's session span.
 */
import {
  ROOT_CONTEXT,
  SamplingDecision,
  SpanKind,
  trace,
  TraceFlags,
  type Attributes,
  type HrTime,
  type Link,
  type SpanContext,
  type SpanStatus,
  type Tracer,
} from '@opentelemetry/api';
import type { Sampler } from '@opentelemetry/sdk-trace-base';
import type { Exchange } from '../model/exchange.js';
import { exchangeEndAttributes, exchangeStartAttributes, spanNameOf, statusOf, usToHrTime, type ConnectionFacts } from './otel-attributes.js';
import { contentAttributes, contentString, type ContentOptions, type Redact } from './otel-content.js';
import { exchangeEvents, type SpanEventData } from './otel-span-events.js';
import type { PresetIdGenerator } from './preset-id-generator.js';
import type { SpanIds } from './seeded-span-ids.js';
import type { MintedTraceContext } from './trace-context-minter.js';
import { metaTraceCarrier, parseTraceContext } from './trace-context.js';

/** One finished span, as the SDK's tracer is to make it. */
export interface SpanData {
  name: string;
  kind: SpanKind;
  startTime: HrTime;
  endTime: HrTime;
  /** The parent's context; a root span without one. */
  parent?: SpanContext | undefined;
  /** The span's own ids, decided up front (seeded or injected); random without them. */
  ids?: SpanIds | undefined;
  attributes: Attributes;
  links: readonly Link[];
  events: readonly SpanEventData[];
  status?: SpanStatus | undefined;
}

/** Where an exchange span sits in its trace: decided from the request alone, before anything else is built. */
export interface ExchangePlace {
  name: string;
  parent: SpanContext | undefined;
  ids: SpanIds | undefined;
}

/** The exchange's span name, parent and own ids. An injected context is the span's own: its parent is what the caller sent. */
export function exchangePlace(ex: Exchange, minted: MintedTraceContext | undefined, seeded: SpanIds | undefined): ExchangePlace {
  const parent = minted ? minted.parent : parseTraceContext(metaTraceCarrier(ex.request));
  return { name: spanNameOf(ex), parent, ids: minted?.spanContext ?? seeded };
}

/** The HTTP request's trace headers, as the tap saw them (redacted frames keep them). */
export interface TraceHeaders {
  traceparent: string;
  tracestate?: string;
}

export interface ExchangeSpanInput {
  place: ExchangePlace;
  /** connectionAttributes of the exchange's connection. */
  connAttrs?: Attributes;
  /** What the connection revealed earlier (protocol version, session id). */
  facts?: ConnectionFacts;
  sessionLink?: Link;
  /** The HTTP request's `traceparent` header: the HTTP span, a link. */
  headers?: TraceHeaders;
  /** Captured content (redacted, truncated); none without. */
  content?: ContentOptions;
  /** Applied to a JSON-RPC error's message, free text a server may fill with anything. */
  redact?: Redact;
  /** An exchange still open at close: it ends then, with its start attributes and `mcptap.unfinished`. */
  unfinishedAtUs?: number;
}

const SESSION_LINK_ATTRS: Attributes = Object.freeze({ 'mcptap.link': 'session' });
const HTTP_LINK_ATTRS: Attributes = Object.freeze({ 'mcptap.link': 'http' });
const NO_LINKS: readonly Link[] = Object.freeze([]);
const NO_EVENTS: readonly SpanEventData[] = Object.freeze([]);

/** The link every exchange span of a connection gets to its `mcp.session` span. */
export function sessionLinkTo(session: SpanContext): Link {
  return Object.freeze({ context: session, attributes: SESSION_LINK_ATTRS });
}

/** An exchange's span: CLIENT, from the request to the response (or the end of its stream, or its cancel). */
export function exchangeSpan(ex: Exchange, input: ExchangeSpanInput): SpanData {
  const { place } = input;
  const attributes = exchangeStartAttributes(ex, input.connAttrs);
  const httpLink = httpHeaderLink(ex, input.headers);
  const links = httpLink ? (input.sessionLink ? [input.sessionLink, httpLink] : [httpLink]) : input.sessionLink ? [input.sessionLink] : NO_LINKS;
  const unfinished = input.unfinishedAtUs !== undefined;
  let status: SpanStatus | undefined;
  if (unfinished) {
    attributes['mcptap.unfinished'] = true;
  } else {
    exchangeEndAttributes(ex, input.facts, attributes);
    let toolText: string | undefined;
    if (input.content) {
      Object.assign(attributes, contentAttributes(ex, input.content));
      if (ex.outcome === 'tool_error') toolText = contentString(ex.errorMessage, input.content);
    }
    const redact = input.redact;
    const errorText = ex.outcome === 'jsonrpc_error' && ex.errorMessage !== undefined && redact ? String(redact(ex.errorMessage)) : undefined;
    status = statusOf(ex, toolText, errorText);
  }
  // One literal, every field present (undefined when absent): one shape for every span.
  return {
    name: place.name,
    kind: SpanKind.CLIENT,
    startTime: usToHrTime(ex.startUs),
    endTime: usToHrTime(Math.max(ex.startUs, unfinished ? input.unfinishedAtUs! : endUsOf(ex))),
    parent: place.parent,
    ids: place.ids,
    attributes,
    links,
    events: unfinished ? NO_EVENTS : exchangeEvents(ex),
    status,
  };
}

/** A header naming the span `_meta` already names is the parent; a link would repeat it. */
function httpHeaderLink(ex: Exchange, headers: TraceHeaders | undefined): Link | undefined {
  if (!headers) return undefined;
  const sc = parseTraceContext(headers);
  if (!sc || sc.spanId === parseTraceContext(metaTraceCarrier(ex.request))?.spanId) return undefined;
  return { context: sc, attributes: HTTP_LINK_ATTRS };
}

function endUsOf(ex: Exchange): number {
  return ex.endUs ?? ex.transport?.streamEndUs ?? ex.cancel?.timeUs ?? ex.startUs;
}

/** A span's context decided up front, and whether the sampler records it. */
export interface Decision {
  context: SpanContext;
  recorded: boolean;
}

/** The SDK tracer's decision for a CLIENT span of these ids (samplers use parent and trace id alone), so a sampled-out span is never built. */
export function decide(sampler: Sampler, name: string, parent: SpanContext | undefined, ids: SpanIds | undefined): Decision | undefined {
  if (ids === undefined) return undefined;
  const validParent = parent && trace.isSpanContextValid(parent) ? parent : undefined;
  const traceId = validParent?.traceId ?? ids.traceId;
  const ctx = validParent ? trace.setSpanContext(ROOT_CONTEXT, validParent) : ROOT_CONTEXT;
  const result = sampler.shouldSample(ctx, traceId, name, SpanKind.CLIENT, NO_ATTRIBUTES, NO_LINKS as Link[]);
  const traceState = result.traceState ?? validParent?.traceState;
  const context: SpanContext = {
    traceId,
    spanId: ids.spanId,
    traceFlags: result.decision === SamplingDecision.RECORD_AND_SAMPLED ? TraceFlags.SAMPLED : TraceFlags.NONE,
    ...(traceState ? { traceState } : {}),
  };
  return { context, recorded: result.decision !== SamplingDecision.NOT_RECORD };
}

const NO_ATTRIBUTES: Attributes = Object.freeze({});

/** Hands a finished span to the SDK (preset ids through the provider's id generator): start, events, status, end. Nothing else makes spans. */
export function emitSpan(tracer: Tracer, data: SpanData, idGenerator?: PresetIdGenerator): void {
  const ctx = data.parent ? trace.setSpanContext(ROOT_CONTEXT, data.parent) : ROOT_CONTEXT;
  const options = { kind: data.kind, startTime: data.startTime, attributes: data.attributes, links: data.links as Link[] };
  const start = () => tracer.startSpan(data.name, options, ctx);
  const span = data.ids && idGenerator ? idGenerator.withIds(data.ids, start) : start();
  if (!span.isRecording()) return;
  for (const e of data.events) span.addEvent(e.name, e.attributes, e.time);
  if (data.status) span.setStatus(data.status);
  span.end(data.endTime);
}
