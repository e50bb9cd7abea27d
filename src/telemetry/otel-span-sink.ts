/**
 * OpenTelemetry spans: exactly one CLIENT span per request exchange (either direction), following
 * the MCP semantic conventions, plus one `mcp.session` span per connection (stdio process or HTTP
 * session).
 *
 * Exchange spans are started at ExchangeStarted with `startTime = startUs` (so their ids exist
 * while the request is in flight: {@link OtelSpanSink.spanContextForExchange}) and ended at
 * ExchangeCompleted with `endTime = endUs`. An exchange that completes without a start event (or
 * whose start found the in-flight table full) gets its span created at completion instead.
 *
 * Trace context (SEP-414): the parent is the request's `params._meta.traceparent`; otherwise the
 * span is a new root. With `--inject-trace-context` the tap minted the span's own ids up front
 * ({@link TraceContextMinter}) and the parent is what the caller had sent. An HTTP `traceparent`
 * header becomes a link, and so does the connection's session span: exchanges belong to the
 * caller's trace, never to the session span.
 *
 * Span ids: with `spanIds` every span's ids are derived from the run's seed and the exchange key
 * (or connection id and open time), so replaying a recording (`mcptap export`) reproduces the live
 * ids exactly. With `recordedInjection` (replaying a recording whose tap injected trace context)
 * a host->server request's `_meta.traceparent` is the span's own context, as it was live; the
 * caller's original parent was overwritten on the wire and is not known then.
 *
 * The tracer comes in through the constructor; nothing here touches the global OTel API.
 */
import { ROOT_CONTEXT, SpanKind, trace, type Attributes, type Link, type Span, type SpanContext, type Tracer } from '@opentelemetry/api';
import type { ConnectionClosed, ConnectionInfo, ConnectionOpened, FrameSeen, StreamClosed, TapEvent } from '../model/events.js';
import type { Exchange } from '../model/exchange.js';
import { isRecord, type JsonRpcResponse } from '../model/jsonrpc.js';
import { ATTR_MCP_PROTOCOL_VERSION, ATTR_MCP_SESSION_ID, ATTR_PROCESS_EXIT_CODE, ATTR_PROCESS_PID } from '@opentelemetry/semantic-conventions/incubating';
import { DirectTracer } from './direct-tracer.js';
import type { PresetIdGenerator } from './preset-id-generator.js';
import type { SeededSpanIds, SpanIds } from './seeded-span-ids.js';
import type { MintedTraceContext, TraceContextMinter } from './trace-context-minter.js';
import { metaTraceCarrier, parseTraceContext } from './trace-context.js';
import { systemClock, type Clock } from '../util/clock.js';
import { silentLogger, type Logger } from '../util/logger.js';
import { SayOnce } from '../util/say-once.js';
import { closingFlush, type OtelSinkCommonOptions } from './otel-sink-options.js';
import { connectionAttributes, exchangeEndAttributes, exchangeStartAttributes, MCPTAP_ATTR, spanNameOf, statusOf, usToHrTime } from './otel-attributes.js';
import { contentAttributes, contentString, type ContentOptions, type Redact } from './otel-content.js';
import { addExchangeEvents } from './otel-span-events.js';
import { emptyStats, type Sink, type SinkStats } from '../sinks/sink.js';

/** `name` defaults to `otel-spans`. */
export interface OtelSpanSinkOptions extends OtelSinkCommonOptions {
  tracer: Tracer;
  /** Export resource URIs, arguments, params and results (redacted, truncated). Default false. */
  captureContent?: boolean;
  /** Applied to every captured value before export. */
  redact?: Redact;
  /** Longest captured value in characters. Default 8192. */
  maxContentLength?: number;
  /** Contexts the tap injected (`--inject-trace-context`); requires `idGenerator`. */
  minter?: TraceContextMinter;
  /** The provider's id generator, so injected or derived ids become the spans' ids. */
  idGenerator?: PresetIdGenerator;
  /** Derive span ids from the run's seed (requires `idGenerator`); otherwise they are random. */
  spanIds?: SeededSpanIds;
  /** Replaying a recording made with `--inject-trace-context`: c2s `_meta.traceparent` holds the span's own ids. */
  recordedInjection?: boolean;
  /** Link each exchange span to its connection's `mcp.session` span. Default true. */
  linkToSession?: boolean;
  /** Ends spans still open at `close()`. */
  clock?: Clock;
}

interface ConnectionState {
  info: ConnectionInfo;
  /** connectionAttributes(info), computed once: every exchange span carries them. */
  attrs: Attributes;
  span?: Span;
  /** The link to `span` every exchange span gets, made once (spans copy what they are given). */
  sessionLinks?: Link[];
  protocolVersion?: string;
  sessionId?: string;
}

const SESSION_LINK_ATTRS: Attributes = Object.freeze({ 'mcptap.link': 'session' });
const NO_LINKS = Object.freeze([]) as unknown as Link[];

export class OtelSpanSink implements Sink {
  readonly name: string;
  private readonly tracer: Tracer;
  private readonly opts: OtelSpanSinkOptions;
  private readonly logger: Logger;
  /** Errors of this sink: the first is said, the rest counted. */
  private readonly errorsSaid: SayOnce;
  private readonly clock: Clock;
  private readonly content: ContentOptions | undefined;
  private readonly maxInFlight: number;
  private readonly connections = new Map<string, ConnectionState>();
  private readonly inFlight = new Map<string, Span>();
  private readonly counts = emptyStats();
  private closed = false;
  private warnedInjection = false;

  constructor(opts: OtelSpanSinkOptions) {
    this.opts = opts;
    this.tracer = opts.tracer;
    this.name = opts.name ?? 'otel-spans';
    this.logger = opts.logger ?? silentLogger;
    this.errorsSaid = new SayOnce((m) => this.logger.warn(m));
    this.clock = opts.clock ?? systemClock;
    this.maxInFlight = opts.maxInFlight ?? 10_000;
    this.content = opts.captureContent
      ? { maxLength: opts.maxContentLength ?? 8192, onError: (e) => this.error(e), ...(opts.redact ? { redact: opts.redact } : {}) }
      : undefined;
  }

  onEvent(event: TapEvent): void {
    this.counts.events++;
    if (this.closed) return;
    try {
      switch (event.type) {
        case 'connection-opened':
          return this.openConnection(event);
        case 'connection-closed':
          return this.closeConnection(event);
        case 'exchange-started':
          // Past the bound (or on a repeated start) the span is made at completion instead.
          if (this.inFlight.size < this.maxInFlight && !this.inFlight.has(event.exchange.key))
            this.inFlight.set(event.exchange.key, this.startExchange(event.exchange));
          return;
        case 'exchange-completed':
          return this.completeExchange(event.exchange);
        case 'frame':
          return this.linkHttpParent(event);
        case 'stream-closed':
          // A listen stream is an exchange, with its span; a standalone GET stream answers none.
          return event.kind === 'get' ? this.getStreamSpan(event) : undefined;
        default:
          // Progress is read from the completed exchange; orphans have no request to span; anomalies are metrics.
          return;
      }
    } catch (err) {
      this.error(err);
    }
  }

  /** The span context of an exchange in flight (its span exists from ExchangeStarted on). */
  spanContextForExchange(exchangeKey: string): SpanContext | undefined {
    return this.inFlight.get(exchangeKey)?.spanContext();
  }

  /** The `mcp.session` span context of an open connection. */
  spanContextForConnection(connectionId: string): SpanContext | undefined {
    return this.connections.get(connectionId)?.span?.spanContext();
  }

  async flush(): Promise<void> {
    await this.opts.forceFlush?.().catch((e) => this.error(e));
  }

  /** Ends what is still open (exchanges as unfinished, sessions at the current time), then flushes. */
  async close(): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      const end = usToHrTime(this.clock.nowUs());
      for (const span of this.inFlight.values()) {
        span.setAttribute('mcptap.unfinished', true);
        span.end(end);
      }
      this.inFlight.clear();
      for (const conn of this.connections.values()) {
        conn.span?.setAttribute('mcptap.unfinished', true);
        conn.span?.end(end);
      }
      this.connections.clear();
    }
    await closingFlush(this.opts, this.flush());
  }

  stats(): SinkStats {
    return { ...this.counts, dropped: this.counts.dropped + (this.opts.exportDropped?.() ?? 0) };
  }

  private openConnection(e: ConnectionOpened): void {
    const info = e.connection;
    const connAttrs = connectionAttributes(info);
    const attrs: Attributes = { ...connAttrs, [MCPTAP_ATTR.connectionId]: info.connectionId };
    if (info.sessionId) attrs[ATTR_MCP_SESSION_ID] = info.sessionId;
    if (info.pid !== undefined) attrs[ATTR_PROCESS_PID] = info.pid;
    if (this.content) {
      const target = contentString(info.target, this.content);
      if (target !== undefined) attrs['mcptap.connection.target'] = target;
    }
    const start = () => this.tracer.startSpan('mcp.session', { kind: SpanKind.CLIENT, startTime: usToHrTime(e.timeUs), attributes: attrs }, ROOT_CONTEXT);
    const span = this.withIds(this.opts.spanIds?.session(info.connectionId, e.timeUs), start);
    this.connections.get(info.connectionId)?.span?.end(usToHrTime(e.timeUs));
    // Frozen: a tracer that copies links (the SDK's) copies it, DirectTracer may keep it as it is.
    const sessionLinks = this.opts.linkToSession !== false ? [Object.freeze({ context: span.spanContext(), attributes: SESSION_LINK_ATTRS })] : undefined;
    this.connections.set(info.connectionId, {
      info,
      attrs: connAttrs,
      span,
      ...(sessionLinks ? { sessionLinks } : {}),
      ...(info.sessionId ? { sessionId: info.sessionId } : {}),
    });
  }

  private closeConnection(e: ConnectionClosed): void {
    const conn = this.connections.get(e.connectionId);
    this.connections.delete(e.connectionId);
    const span = conn?.span;
    if (!span) return;
    span.setAttribute('mcptap.close.reason', e.reason);
    if (typeof e.exitCode === 'number') span.setAttribute(ATTR_PROCESS_EXIT_CODE, e.exitCode);
    if (e.signal) span.setAttribute('mcptap.close.signal', e.signal);
    span.end(usToHrTime(e.timeUs));
  }

  /** One `mcptap.stream` span per standalone GET stream, made when it ended: how long it was open, what it carried. */
  private getStreamSpan(e: StreamClosed): void {
    const conn = this.connections.get(e.connectionId);
    const attrs: Attributes = {
      ...conn?.attrs,
      [MCPTAP_ATTR.connectionId]: e.connectionId,
      [MCPTAP_ATTR.streamKind]: e.kind,
      [MCPTAP_ATTR.streamNotifications]: e.notifications,
    };
    if (conn?.sessionId) attrs[ATTR_MCP_SESSION_ID] = conn.sessionId;
    const links = conn?.sessionLinks ?? NO_LINKS;
    const span = this.tracer.startSpan('mcptap.stream', { kind: SpanKind.CLIENT, startTime: usToHrTime(e.openedUs), attributes: attrs, links }, ROOT_CONTEXT);
    span.end(usToHrTime(e.timeUs));
  }

  private startExchange(ex: Exchange): Span {
    const conn = this.connections.get(ex.connectionId);
    const minted = this.opts.minter?.take(ex.connectionId, ex.direction, ex.id) ?? this.recordedContext(ex);
    // An injected traceparent is the tap's own span, not its parent: the parent is what the caller sent.
    const parent = minted ? minted.parent : parseTraceContext(metaTraceCarrier(ex.request));
    const ctx = parent ? trace.setSpanContext(ROOT_CONTEXT, parent) : ROOT_CONTEXT;
    const links = conn?.sessionLinks ?? NO_LINKS;
    const name = spanNameOf(ex);
    const options = () => ({ kind: SpanKind.CLIENT, startTime: usToHrTime(ex.startUs), attributes: exchangeStartAttributes(ex, conn?.attrs), links });
    // DirectTracer asks the sampler first and builds the options only for a span it records (it
    // then keeps the new attributes object instead of copying it).
    const tracer = this.tracer;
    const start =
      tracer instanceof DirectTracer ? () => tracer.startSpanDeferred(name, SpanKind.CLIENT, ctx, options) : () => tracer.startSpan(name, options(), ctx);
    return this.withIds(minted?.spanContext ?? this.opts.spanIds?.exchange(ex.key), start);
  }

  /** Start one span with preset ids (when there are any and the provider's generator is ours). */
  private withIds(ids: SpanIds | undefined, start: () => Span): Span {
    if (!ids) return start();
    if (!this.opts.idGenerator) {
      if (!this.warnedInjection) this.logger.warn('otel: span ids were decided up front but the span sink has no PresetIdGenerator; spans get random ids');
      this.warnedInjection = true;
      return start();
    }
    return this.opts.idGenerator.withIds(ids, start);
  }

  /** `recordedInjection`: the tap wrote this span's own context into the recorded host->server request. */
  private recordedContext(ex: Exchange): MintedTraceContext | undefined {
    if (!this.opts.recordedInjection || ex.direction !== 'c2s') return undefined;
    const own = parseTraceContext(metaTraceCarrier(ex.request));
    return own ? { spanContext: own, carrier: {} } : undefined;
  }

  private completeExchange(ex: Exchange): void {
    const span = this.inFlight.get(ex.key) ?? this.startExchange(ex);
    this.inFlight.delete(ex.key);
    const conn = this.connections.get(ex.connectionId);
    if (conn) this.learn(conn, ex);
    // Sampled out: nothing of the exchange is built for a span that keeps nothing.
    if (!span.isRecording()) return;
    span.setAttributes(exchangeEndAttributes(ex, conn ?? {}));
    let toolText: string | undefined;
    if (this.content) {
      span.setAttributes(contentAttributes(ex, this.content));
      if (ex.outcome === 'tool_error') toolText = contentString(ex.errorMessage, this.content);
    }
    addExchangeEvents(span, ex);
    // An error's message is free text a server may fill with anything (a connection string, a key).
    const redact = this.opts.redact;
    const errorText = ex.outcome === 'jsonrpc_error' && ex.errorMessage !== undefined && redact ? String(redact(ex.errorMessage)) : undefined;
    span.setStatus(statusOf(ex, toolText, errorText));
    span.end(usToHrTime(Math.max(ex.startUs, endUsOf(ex))));
  }

  /** Remember the protocol version and session id the connection revealed, for later exchanges and the session span. */
  private learn(conn: ConnectionState, ex: Exchange): void {
    const result = (ex.response as JsonRpcResponse | undefined)?.result;
    const version = ex.method === 'initialize' && isRecord(result) && typeof result.protocolVersion === 'string' ? result.protocolVersion : ex.protocolVersion;
    if (version && version !== conn.protocolVersion) {
      conn.protocolVersion = version;
      conn.span?.setAttribute(ATTR_MCP_PROTOCOL_VERSION, version);
    }
    if (ex.sessionId && !conn.sessionId) {
      conn.sessionId = ex.sessionId;
      conn.span?.setAttribute(ATTR_MCP_SESSION_ID, ex.sessionId);
    }
  }

  /** An HTTP `traceparent` header on the request is the HTTP span: a link, not the parent. */
  private linkHttpParent(e: FrameSeen): void {
    if (!e.exchangeKey || e.frame.kind !== 'message' || e.frame.messageKind !== 'request') return;
    const header = e.frame.context?.headers?.traceparent;
    if (!header) return;
    const span = this.inFlight.get(e.exchangeKey);
    if (!span?.isRecording()) return;
    const sc = parseTraceContext({ traceparent: header, ...(e.frame.context?.headers?.tracestate ? { tracestate: e.frame.context.headers.tracestate } : {}) });
    if (!sc) return;
    // When the header and `_meta` name the same span, it already is the parent; a link would repeat it.
    if (sc.spanId === parseTraceContext(metaTraceCarrier(e.frame.message))?.spanId) return;
    span.addLink({ context: sc, attributes: { 'mcptap.link': 'http' } });
  }

  private error(err: unknown): void {
    this.counts.errors = this.errorsSaid.count('error', () => `otel span sink error (further errors counted, not logged): ${String(err)}`);
  }
}

function endUsOf(ex: Exchange): number {
  return ex.endUs ?? ex.transport?.streamEndUs ?? ex.cancel?.timeUs ?? ex.startUs;
}
