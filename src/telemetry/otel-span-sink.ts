/**
 * OpenTelemetry spans: one CLIENT span per request exchange (either direction, MCP semconv), one `mcp.session` span per connection and one
 * `mcptap.stream` span per standalone GET stream. Each is built once, when what it covers has ended, as data handed to the SDK's tracer by
 * {@link emitSpan}; in flight the sink keeps only what completion needs (bounded by MAX_IN_FLIGHT); what is open at close() ends then, `mcptap.unfinished`.
 * With `spanIds`, ids derive from the run's seed, so `mcptap export` (this sink on recorded events) reproduces the live ids; with `recordedInjection`,
 * a host->server request's `_meta.traceparent` is the span's own context (the caller's parent was overwritten on the wire). The sampler is asked
 * before a span's data is built. Nothing here touches the global OTel API.
 */
import { SpanKind, type Attributes, type Link, type Tracer } from '@opentelemetry/api';
import { RandomIdGenerator, type Sampler } from '@opentelemetry/sdk-trace-base';
import type { ConnectionClosed, ConnectionOpened, FrameSeen, StreamClosed, TapEvent } from '../model/events.js';
import type { Exchange } from '../model/exchange.js';
import { isRecord, type JsonRpcResponse } from '../model/jsonrpc.js';
import { ATTR_MCP_PROTOCOL_VERSION, ATTR_MCP_SESSION_ID, ATTR_PROCESS_EXIT_CODE, ATTR_PROCESS_PID } from '@opentelemetry/semantic-conventions/incubating';
import type { SeededSpanIds } from './seeded-span-ids.js';
import type { MintedTraceContext, TraceContextMinter } from './trace-context-minter.js';
import { decide, metaTraceCarrier, parseTraceContext, type TraceCarrier } from './trace-context.js';
import { systemClock, type Clock } from '../util/clock.js';
import { MAX_IN_FLIGHT, OtelSink, type OtelSinkCommonOptions } from './otel-sink.js';
import { connectionAttributes, MCPTAP_ATTR, usToHrTime } from './otel-attributes.js';
import { contentString, type ContentOptions, type Redact } from './otel-content.js';
import { emitSpan, exchangePlace, exchangeSpan, sessionLinkTo, type PresetIdGenerator, type SpanData } from './span-data.js';

export interface OtelSpanSinkOptions extends OtelSinkCommonOptions {
  /** The provider's tracer: every span goes through it. */
  tracer: Tracer;
  /** The provider's sampler, asked before a span's data is built. */
  sampler: Sampler;
  /** Export resource URIs, arguments, params and results (redacted, truncated). Default false. */
  captureContent?: boolean;
  /** Applied to every captured value before export. */
  redact?: Redact;
  /** Longest captured value in characters. Default 8192. */
  maxContentLength?: number;
  /** Contexts the tap injected (`--inject-trace-context`). */
  minter?: TraceContextMinter;
  /** The provider's id generator, so injected or derived ids become the spans' ids. */
  idGenerator: PresetIdGenerator;
  /** Derive span ids from the run's seed; otherwise they are random. */
  spanIds?: SeededSpanIds;
  /** Replaying a recording made with `--inject-trace-context`: c2s `_meta.traceparent` holds the span's own ids. */
  recordedInjection?: boolean;
  /** Ends spans still open at `close()`. */
  clock?: Clock;
}

/** What an exchange's span needs from before its completion. */
interface OpenExchange {
  ex: Exchange;
  minted?: MintedTraceContext;
  headers?: TraceCarrier;
}

interface ConnectionState {
  /** connectionAttributes(info), computed once: every exchange span carries them. */
  attrs: Attributes;
  /** The `mcp.session` span, built at open and emitted when the connection closes. */
  session: SpanData;
  sessionRecorded: boolean;
  /** The link to the session span every exchange span gets, made once. */
  sessionLink: Link;
  protocolVersion?: string;
  sessionId?: string;
}

export class OtelSpanSink extends OtelSink<OtelSpanSinkOptions> {
  private readonly tracer: Tracer;
  private readonly sampler: Sampler;
  private readonly clock: Clock;
  private readonly content: ContentOptions | undefined;
  private readonly connections = new Map<string, ConnectionState>();
  private readonly inFlight = new Map<string, OpenExchange>();
  /** Ids for session spans without seeded ones: a session's id must be known at open, for the links. */
  private readonly randomIds = new RandomIdGenerator();

  constructor(opts: OtelSpanSinkOptions) {
    super('otel-spans', 'otel span sink', opts);
    this.tracer = opts.tracer;
    this.sampler = opts.sampler;
    this.clock = opts.clock ?? systemClock;
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
          return this.startExchange(event.exchange);
        case 'exchange-completed':
          return this.completeExchange(event.exchange);
        case 'frame':
          return this.noteTraceHeaders(event);
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

  /** Ends what is still open (exchanges as unfinished, sessions at the current time), then flushes. */
  async close(): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      const nowUs = this.clock.nowUs();
      for (const open of this.inFlight.values()) {
        try {
          this.emitExchange(open.ex, open, nowUs);
        } catch (err) {
          this.error(err);
        }
      }
      this.inFlight.clear();
      for (const conn of this.connections.values()) {
        conn.session.attributes['mcptap.unfinished'] = true;
        this.emitSession(conn, nowUs);
      }
      this.connections.clear();
    }
    await this.closingFlush();
  }

  private openConnection(e: ConnectionOpened): void {
    const info = e.connection;
    const connAttrs = connectionAttributes(info);
    // A connection id opened again: the earlier session ends where the new one starts.
    const earlier = this.connections.get(info.connectionId);
    if (earlier) this.emitSession(earlier, e.timeUs);
    const ids = this.opts.spanIds?.session(info.connectionId, e.timeUs) ?? {
      traceId: this.randomIds.generateTraceId(),
      spanId: this.randomIds.generateSpanId(),
    };
    const decision = decide(this.sampler, 'mcp.session', undefined, ids);
    const recorded = decision.recorded;
    const attrs: Attributes = recorded ? { ...connAttrs, [MCPTAP_ATTR.connectionId]: info.connectionId } : {};
    if (recorded) {
      if (info.sessionId) attrs[ATTR_MCP_SESSION_ID] = info.sessionId;
      if (info.pid !== undefined) attrs[ATTR_PROCESS_PID] = info.pid;
      if (this.content) {
        const target = contentString(info.target, this.content);
        if (target !== undefined) attrs['mcptap.connection.target'] = target;
      }
    }
    const session: SpanData = {
      name: 'mcp.session',
      kind: SpanKind.CLIENT,
      startTime: usToHrTime(e.timeUs),
      endTime: usToHrTime(e.timeUs),
      ids,
      attributes: attrs,
      links: [],
      events: [],
    };
    this.connections.set(info.connectionId, {
      attrs: connAttrs,
      session,
      sessionRecorded: recorded,
      sessionLink: sessionLinkTo(decision.context),
      ...(info.sessionId ? { sessionId: info.sessionId } : {}),
    });
  }

  private closeConnection(e: ConnectionClosed): void {
    const conn = this.connections.get(e.connectionId);
    this.connections.delete(e.connectionId);
    if (!conn) return;
    const attrs = conn.session.attributes;
    attrs['mcptap.close.reason'] = e.reason;
    if (typeof e.exitCode === 'number') attrs[ATTR_PROCESS_EXIT_CODE] = e.exitCode;
    if (e.signal) attrs['mcptap.close.signal'] = e.signal;
    this.emitSession(conn, e.timeUs);
  }

  private emitSession(conn: ConnectionState, endUs: number): void {
    if (!conn.sessionRecorded) return;
    emitSpan(this.tracer, { ...conn.session, endTime: usToHrTime(endUs) }, this.opts.idGenerator);
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
    emitSpan(this.tracer, {
      name: 'mcptap.stream',
      kind: SpanKind.CLIENT,
      startTime: usToHrTime(e.openedUs),
      endTime: usToHrTime(e.timeUs),
      attributes: attrs,
      links: conn?.sessionLink ? [conn.sessionLink] : [],
      events: [],
    });
  }

  /** Remembers what the exchange's span will need (past the bound, or on a repeated start, nothing). */
  private startExchange(ex: Exchange): void {
    if (this.inFlight.size >= MAX_IN_FLIGHT || this.inFlight.has(ex.key)) return;
    const minted = this.opts.minter?.take(ex.connectionId, ex.direction, ex.id);
    this.inFlight.set(ex.key, { ex, ...(minted ? { minted } : {}) });
  }

  /** An HTTP `traceparent` header on the request is the HTTP span: a link, not the parent. */
  private noteTraceHeaders(e: FrameSeen): void {
    if (!e.exchangeKey || e.frame.kind !== 'message' || e.frame.messageKind !== 'request') return;
    const headers = e.frame.context?.headers;
    if (!headers?.traceparent) return;
    const open = this.inFlight.get(e.exchangeKey);
    if (open) open.headers = { traceparent: headers.traceparent, ...(headers.tracestate ? { tracestate: headers.tracestate } : {}) };
  }

  private completeExchange(ex: Exchange): void {
    const open = this.inFlight.get(ex.key);
    this.inFlight.delete(ex.key);
    const conn = this.connections.get(ex.connectionId);
    if (conn) this.learn(conn, ex);
    this.emitExchange(ex, open, undefined);
  }

  /** Builds and emits an exchange's span, unless the sampler drops it (then nothing of it is built). */
  private emitExchange(ex: Exchange, open: OpenExchange | undefined, unfinishedAtUs: number | undefined): void {
    const minted = open ? open.minted : this.opts.minter?.take(ex.connectionId, ex.direction, ex.id);
    const place = exchangePlace(ex, minted ?? this.recordedContext(ex), this.opts.spanIds?.exchange(ex.key));
    if (place.ids && !decide(this.sampler, place.name, place.parent, place.ids).recorded) return;
    const conn = this.connections.get(ex.connectionId);
    const data = exchangeSpan(ex, {
      place,
      connAttrs: conn?.attrs,
      facts: conn,
      sessionLink: conn?.sessionLink,
      headers: open?.headers,
      content: this.content,
      redact: this.opts.redact,
      unfinishedAtUs,
    });
    emitSpan(this.tracer, data, this.opts.idGenerator);
  }

  /** `recordedInjection`: the tap wrote this span's own context into the recorded host->server request. */
  private recordedContext(ex: Exchange): MintedTraceContext | undefined {
    if (!this.opts.recordedInjection || ex.direction !== 'c2s') return undefined;
    const own = parseTraceContext(metaTraceCarrier(ex.request));
    return own ? { spanContext: own, carrier: {} } : undefined;
  }

  /** Remember the protocol version and session id the connection revealed, for later exchanges and the session span. */
  private learn(conn: ConnectionState, ex: Exchange): void {
    const result = (ex.response as JsonRpcResponse | undefined)?.result;
    const version = ex.method === 'initialize' && isRecord(result) && typeof result.protocolVersion === 'string' ? result.protocolVersion : ex.protocolVersion;
    if (version && version !== conn.protocolVersion) {
      conn.protocolVersion = version;
      conn.session.attributes[ATTR_MCP_PROTOCOL_VERSION] = version;
    }
    if (ex.sessionId && !conn.sessionId) {
      conn.sessionId = ex.sessionId;
      conn.session.attributes[ATTR_MCP_SESSION_ID] = ex.sessionId;
    }
  }
}
