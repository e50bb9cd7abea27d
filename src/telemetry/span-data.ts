/**
 * Spans as data: an exchange's span is built once, when it completed (or unfinished, at close), by the pure {@link exchangeSpan}; {@link emitSpan}
 * alone hands such data to the SDK's tracer, so its sampler, limits, processors and exporters see an ordinary span. Trace context (SEP-414): the parent
 * is `params._meta.traceparent`, else none; with `--inject-trace-context` the span's ids were minted up front and the parent is what the caller sent.
 * An HTTP `traceparent` header is a link, as is the connection's session span. Span events (progress, SSE events and the stream's end, the cancel and
 * a response after it) are named `mcptap.*`: semconv defines no MCP span events and asks applications not to add names under `mcp.*`.
 * Invariant: a {@link PresetIdGenerator} preset is consumed by the very next `startSpan`, because `withIds` sets it, starts the span synchronously
 * and clears it in `finally`.
 */
import { ROOT_CONTEXT, SpanKind, trace, type Attributes, type HrTime, type Link, type SpanContext, type SpanStatus, type Tracer } from '@opentelemetry/api';
import { RandomIdGenerator, type IdGenerator, type TimedEvent } from '@opentelemetry/sdk-trace-base';
import type { Exchange } from '../model/exchange.js';
import { exchangeEndAttributes, exchangeStartAttributes, spanNameOf, statusOf, usToHrTime, type ConnectionFacts } from './otel-attributes.js';
import { contentAttributes, contentString, type ContentOptions, type Redact } from './otel-content.js';
import type { SpanIds } from './seeded-span-ids.js';
import type { MintedTraceContext } from './trace-context-minter.js';
import { metaTraceCarrier, parseTraceContext, type TraceCarrier } from './trace-context.js';

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
  events: readonly TimedEvent[];
  status?: SpanStatus | undefined;
}

/** Where an exchange span sits in its trace: decided from the request alone, before anything else is built. */
export type ExchangePlace = Pick<SpanData, 'name' | 'parent' | 'ids'>;

/** The exchange's span name, parent and own ids. An injected context is the span's own: its parent is what the caller sent. */
export function exchangePlace(ex: Exchange, minted: MintedTraceContext | undefined, seeded: SpanIds | undefined): ExchangePlace {
  const parent = minted ? minted.parent : parseTraceContext(metaTraceCarrier(ex.request));
  return { name: spanNameOf(ex), parent, ids: minted?.spanContext ?? seeded };
}

export interface ExchangeSpanInput {
  place: ExchangePlace;
  /** connectionAttributes of the exchange's connection. */
  connAttrs?: Attributes;
  /** What the connection revealed earlier (protocol version, session id). */
  facts?: ConnectionFacts;
  sessionLink?: Link;
  /** The HTTP request's `traceparent` header (as the tap saw it: redacted frames keep it): the HTTP span, a link. */
  headers?: TraceCarrier;
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
const NO_EVENTS: readonly TimedEvent[] = Object.freeze([]);

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
function httpHeaderLink(ex: Exchange, headers: TraceCarrier | undefined): Link | undefined {
  if (!headers) return undefined;
  const sc = parseTraceContext(headers);
  if (!sc || sc.spanId === parseTraceContext(metaTraceCarrier(ex.request))?.spanId) return undefined;
  return { context: sc, attributes: HTTP_LINK_ATTRS };
}

function endUsOf(ex: Exchange): number {
  return ex.endUs ?? ex.transport?.streamEndUs ?? ex.cancel?.timeUs ?? ex.startUs;
}

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

export const MCPTAP_EVENT = {
  progress: 'mcptap.progress',
  progressValue: 'mcptap.progress.progress',
  progressTotal: 'mcptap.progress.total',
  progressMessage: 'mcptap.progress.message',
  sseEvent: 'mcptap.sse.event',
  sseEventIndex: 'mcptap.sse.event.index',
  sseStreamEnd: 'mcptap.sse.stream_end',
  cancelled: 'mcptap.cancelled',
  cancelBy: 'mcptap.cancel.by',
  cancelReason: 'mcptap.cancel.reason',
  cancelMechanism: 'mcptap.cancel.mechanism',
  cancelProgressAfter: 'mcptap.cancel.progress_after',
  cancelWorkAfter: 'mcptap.cancel.work_after_ms',
  cancelStreamEndAfter: 'mcptap.cancel.stream_end_after_ms',
  responseAfterCancel: 'mcptap.response_after_cancel',
} as const;

/** SSE events recorded per span; the total is always in `mcptap.sse.events`. */
export const MAX_SSE_SPAN_EVENTS = 256;

/** The exchange's span events, in the order they are added to its span. */
export function exchangeEvents(ex: Exchange): TimedEvent[] {
  const events: TimedEvent[] = [];
  const add = (name: string, attributes: Attributes, us: number) => events.push({ name, attributes, time: usToHrTime(us) });
  for (const p of ex.progress) {
    const attrs: Attributes = { [MCPTAP_EVENT.progressValue]: p.progress };
    if (p.total !== undefined) attrs[MCPTAP_EVENT.progressTotal] = p.total;
    if (p.message !== undefined) attrs[MCPTAP_EVENT.progressMessage] = p.message;
    add(MCPTAP_EVENT.progress, attrs, p.timeUs);
  }
  const sse = ex.transport?.eventTimesUs;
  const n = sse ? Math.min(sse.length, MAX_SSE_SPAN_EVENTS) : 0;
  for (let i = 0; i < n; i++) add(MCPTAP_EVENT.sseEvent, { [MCPTAP_EVENT.sseEventIndex]: i }, sse![i]!);
  // An SSE stream's end, or a stream that ended unanswered; a JSON body's end is its response, which the span's end time says.
  const t = ex.transport;
  if (t?.streamEndUs !== undefined && (t.eventTimesUs !== undefined || ex.response === undefined)) add(MCPTAP_EVENT.sseStreamEnd, {}, t.streamEndUs);
  if (ex.cancel) {
    const attrs: Attributes = { [MCPTAP_EVENT.cancelBy]: ex.cancel.by };
    if (ex.cancel.reason !== undefined) attrs[MCPTAP_EVENT.cancelReason] = ex.cancel.reason;
    const a = ex.transport?.afterCancel;
    if (a) {
      attrs[MCPTAP_EVENT.cancelMechanism] = a.mechanism;
      attrs[MCPTAP_EVENT.cancelProgressAfter] = a.progressAfter;
      attrs[MCPTAP_EVENT.cancelWorkAfter] = a.workAfterUs / 1000;
      if (a.streamEndAfterUs !== undefined) attrs[MCPTAP_EVENT.cancelStreamEndAfter] = a.streamEndAfterUs / 1000;
    }
    add(MCPTAP_EVENT.cancelled, attrs, ex.cancel.timeUs);
  }
  if (ex.responseAfterCancel) add(MCPTAP_EVENT.responseAfterCancel, {}, ex.endUs ?? ex.cancel?.timeUs ?? ex.startUs);
  return events;
}

/** An IdGenerator of one TracerProvider (not global): ids decided up front for exactly one span, random otherwise. */
export class PresetIdGenerator implements IdGenerator {
  private readonly random = new RandomIdGenerator();
  private traceId: string | undefined;
  private spanId: string | undefined;

  generateTraceId(): string {
    const id = this.traceId;
    this.traceId = undefined;
    return id ?? this.random.generateTraceId();
  }

  generateSpanId(): string {
    const id = this.spanId;
    this.spanId = undefined;
    return id ?? this.random.generateSpanId();
  }

  /** Run `start` (which must start exactly one span synchronously) with these ids preset. */
  withIds<T>(ids: { traceId: string; spanId: string }, start: () => T): T {
    this.traceId = ids.traceId;
    this.spanId = ids.spanId;
    try {
      return start();
    } finally {
      this.traceId = undefined;
      this.spanId = undefined;
    }
  }
}
