/**
 * OpenTelemetry metrics: the MCP semconv histograms (`mcp.client.operation.duration`, `mcp.client.session.duration`) and mcptap's own instruments
 * (otel-metric-instruments.ts). The meter comes in through the constructor; nothing here touches the global OTel API.
 */
import type { Attributes, Meter, ObservableCallback } from '@opentelemetry/api';
import { ATTR_ERROR_TYPE, ATTR_NETWORK_TRANSPORT } from '@opentelemetry/semantic-conventions';
import { ATTR_MCP_METHOD_NAME, ATTR_MCP_PROTOCOL_VERSION } from '@opentelemetry/semantic-conventions/incubating';
import type { AnomalySeen, ConnectionClosed, ConnectionOpened, LongStreamKind, TapEvent, Transport } from '../model/events.js';
import type { Exchange } from '../model/exchange.js';
import { MAX_IN_FLIGHT, OtelSink, type OtelSinkCommonOptions } from './otel-sink.js';
import {
  connectionAttributes,
  errorTypeOf,
  lowCardinalityTarget,
  MCPTAP_ATTR,
  networkTransportOf,
  putErrorAttributes,
  putTargetAttributes,
} from './otel-attributes.js';
import { STREAM_FIGURES, exchangeStreamTimes, streamFigures } from '../model/stream-figures.js';
import { FIRED_AT_META } from '../protocol/mcptap-meta.js';
import { createInstruments, SSE_SERIES_ATTR, CANCEL_ATTR, type DropCounts, type HistogramSource } from './otel-metric-instruments.js';
import type { Frame } from '../model/frame.js';
import { KeyedCounts, TupleMap, type KeyedCount } from './keyed-counts.js';

/** Attribute sets whose objects the sink keeps for reuse (method names come off the wire). */
const MAX_CACHED_SETS = 4096;

export interface OtelMetricsSinkOptions extends OtelSinkCommonOptions {
  meter: Meter;
  /** Makes the per-exchange histograms (operation duration, SSE timings), recorded with reused frozen attribute objects. Default: the meter. */
  histograms?: HistogramSource;
  /** Feeds `mcptap.sink.dropped`; read at each collection, so sinks added later are included. */
  dropCounts?: DropCounts;
}

interface ConnectionState {
  transport: Transport;
  openedUs: number;
  protocolVersion?: string;
  /** connectionAttributes() of the connection: transport, HTTP version, server address and port. */
  attrs: Attributes;
  /** Their values as one string: the first part of the key of the per-exchange attribute sets. */
  attrsKey: string;
}

export class OtelMetricsSink extends OtelSink<OtelMetricsSinkOptions> {
  private readonly inst: ReturnType<typeof createInstruments>;
  private readonly connections = new Map<string, ConnectionState>();
  /** Observed at collection (KeyedCounts), saving SDK records per exchange; an in-flight request keeps its entry, so -1 matches its +1. */
  private readonly inFlight = new Map<string, KeyedCount>();
  private readonly inFlightCounts = new KeyedCounts();
  private readonly exchangeCounts = new KeyedCounts();
  private readonly observeCounts: ObservableCallback;
  private readonly observeInFlight: ObservableCallback;
  private readonly observeDrops: ObservableCallback | undefined;
  /** Frozen attribute objects of the per-exchange histograms, by their values (connection attributes, method, tool or prompt, version, error type). */
  private readonly operationSets = new TupleMap<Attributes>(5, MAX_CACHED_SETS);
  private readonly sseSets = new TupleMap<Attributes>(1, MAX_CACHED_SETS);
  /** Notification attribute sets by method (bounded: method names come off the wire). */
  private readonly notificationSets = new TupleMap<Attributes>(1, MAX_CACHED_SETS);
  /** By (method, tool or prompt, figure). */
  private readonly figureSets = new TupleMap<Attributes>(3, MAX_CACHED_SETS);
  /** The KeyedCounts entries by (method, transport[, outcome]), found without building their string keys. */
  private readonly inFlightEntries = new TupleMap<KeyedCount>(2, MAX_CACHED_SETS);
  private readonly exchangeEntries = new TupleMap<KeyedCount>(3, MAX_CACHED_SETS);

  constructor(opts: OtelMetricsSinkOptions) {
    super('otel-metrics', 'otel metrics sink', opts);
    this.inst = createInstruments(opts.meter, opts.histograms);
    this.observeInFlight = (result) => this.inFlightCounts.observe(result);
    this.observeCounts = (result) => this.exchangeCounts.observe(result);
    this.inst.inFlight.addCallback(this.observeInFlight);
    this.inst.exchanges.addCallback(this.observeCounts);
    const dropCounts = opts.dropCounts;
    if (dropCounts) {
      this.observeDrops = (result) => {
        try {
          const counts = dropCounts();
          const entries = Symbol.iterator in counts ? (counts as Iterable<readonly [string, number]>) : Object.entries(counts);
          for (const [sink, n] of entries) result.observe(n, { [MCPTAP_ATTR.sinkName]: sink });
        } catch (err) {
          this.error(err);
        }
      };
      this.inst.dropped.addCallback(this.observeDrops);
    }
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
        case 'exchange-orphaned':
          return void this.exchangeCounts.entry(`\u0000${this.transportOf(event.exchange.connectionId)}\u0000orphan_response`, () => ({
            [MCPTAP_ATTR.outcome]: 'orphan_response',
            ...this.transportAttr(event.exchange.connectionId),
          })).n++;
        case 'anomaly':
          return this.countViolation(event);
        case 'frame':
          return this.countNotification(event.frame);
        case 'stream-opened':
          return this.inst.streamsOpen.add(1, streamKindAttrs[event.kind]);
        case 'stream-closed':
          return this.inst.streamsOpen.add(-1, streamKindAttrs[event.kind]);
        default:
          return;
      }
    } catch (err) {
      this.error(err);
    }
  }

  async close(): Promise<void> {
    const first = !this.closed;
    this.closed = true;
    // Final values are collected by the flush; after it the callbacks would observe a closed pipeline.
    await this.closingFlush();
    if (!first) return;
    if (this.observeDrops) this.inst.dropped.removeCallback(this.observeDrops);
    this.inst.inFlight.removeCallback(this.observeInFlight);
    this.inst.exchanges.removeCallback(this.observeCounts);
  }

  private openConnection(e: ConnectionOpened): void {
    const attrs = Object.freeze(connectionAttributes(e.connection));
    this.connections.set(e.connection.connectionId, { transport: e.connection.transport, openedUs: e.timeUs, attrs, attrsKey: JSON.stringify(attrs) });
  }

  private closeConnection(e: ConnectionClosed): void {
    const conn = this.connections.get(e.connectionId);
    this.connections.delete(e.connectionId);
    if (!conn) return;
    const attrs: Attributes = { ...conn.attrs };
    if (conn.protocolVersion) attrs[ATTR_MCP_PROTOCOL_VERSION] = conn.protocolVersion;
    if (typeof e.exitCode === 'number' && e.exitCode !== 0) attrs[ATTR_ERROR_TYPE] = 'child_exit';
    this.inst.sessionDuration.record(Math.max(0, e.timeUs - conn.openedUs) / 1e6, attrs);
  }

  private startExchange(ex: Exchange): void {
    if (this.inFlight.size >= MAX_IN_FLIGHT || this.inFlight.has(ex.key)) return;
    const transport = this.transportOf(ex.connectionId);
    const count =
      this.inFlightEntries.get(ex.method, transport) ??
      this.inFlightEntries.set(
        this.inFlightCounts.entry(`${ex.method}\u0000${transport}`, () => ({ [ATTR_MCP_METHOD_NAME]: ex.method, ...this.transportAttr(ex.connectionId) })),
        ex.method,
        transport,
      );
    count.n++;
    this.inFlight.set(ex.key, count);
  }

  private completeExchange(ex: Exchange): void {
    const started = this.inFlight.get(ex.key);
    if (started) {
      this.inFlight.delete(ex.key);
      started.n--;
    }
    const conn = this.connections.get(ex.connectionId);
    if (conn && ex.protocolVersion) conn.protocolVersion = ex.protocolVersion;
    const transport = conn?.transport ?? '';
    const counted =
      this.exchangeEntries.get(ex.method, transport, ex.outcome) ??
      this.exchangeEntries.set(
        this.exchangeCounts.entry(`${ex.method}\u0000${transport}\u0000${ex.outcome}`, () => ({
          [ATTR_MCP_METHOD_NAME]: ex.method,
          ...this.transportAttr(ex.connectionId),
          [MCPTAP_ATTR.outcome]: ex.outcome,
        })),
        ex.method,
        transport,
        ex.outcome,
      );
    counted.n++;
    if (ex.cancel) {
      const outcome = ex.responseAfterCancel ? 'answered_after_cancel' : 'unanswered';
      this.inst.cancellations.add(1, { [ATTR_MCP_METHOD_NAME]: ex.method, [CANCEL_ATTR.by]: ex.cancel.by, [CANCEL_ATTR.outcome]: outcome });
    }
    if (ex.endUs !== undefined) this.inst.operationDuration.record(Math.max(0, ex.endUs - ex.startUs) / 1e6, this.operationAttrs(ex, conn));
    this.recordSse(ex);
  }

  /** One frozen object per attribute set, so the histogram finds its series without hashing; past MAX_CACHED_SETS, a new object each time. */
  private operationAttrs(ex: Exchange, conn: ConnectionState | undefined): Attributes {
    const target = lowCardinalityTarget(ex);
    const version = ex.protocolVersion ?? conn?.protocolVersion;
    const errorType = errorTypeOf(ex);
    // A JSON-RPC code 500 and an HTTP 500 are both `500`: the key keeps them apart (only the first has rpc.response.status_code).
    const errorKey = ex.outcome === 'transport_error' ? `~${errorType}` : errorType;
    const connKey = conn?.attrsKey;
    const cached = this.operationSets.get(connKey, ex.method, target, version, errorKey);
    if (cached) return cached;
    const attrs: Attributes = { [ATTR_MCP_METHOD_NAME]: ex.method, ...conn?.attrs };
    putTargetAttributes(ex, attrs);
    if (version) attrs[ATTR_MCP_PROTOCOL_VERSION] = version;
    putErrorAttributes(ex, attrs, errorType);
    if (this.operationSets.size >= MAX_CACHED_SETS) return attrs;
    return this.operationSets.set(Object.freeze(attrs), connKey, ex.method, target, version, errorKey);
  }

  private recordSse(ex: Exchange): void {
    const t = ex.transport;
    if (!t || (t.firstEventUs === undefined && t.eventTimesUs === undefined)) return;
    const attrs = this.sseSets.get(ex.method) ?? this.sseSets.set(Object.freeze({ [ATTR_MCP_METHOD_NAME]: ex.method }), ex.method);
    if (t.firstEventUs !== undefined) this.inst.timeToFirstEvent.record(Math.max(0, t.firstEventUs - ex.startUs) / 1e6, attrs);
    if (t.eventTimesUs !== undefined) this.inst.eventsPerStream.record(t.eventTimesUs.length, attrs);
    const figures = streamFigures(exchangeStreamTimes(ex));
    const target = lowCardinalityTarget(ex);
    for (const f of STREAM_FIGURES) {
      const xs = figures[f];
      if (!xs) continue;
      const a = this.figureSets.get(ex.method, target, f) ?? this.figureSets.set(figureAttributes(ex, f), ex.method, target, f);
      for (const us of xs) this.inst.sseDuration.record(Math.max(0, us) / 1e6, a);
    }
  }

  /** A server notification: counted by method; its delivery delay when it says when it was fired. */
  private countNotification(f: Frame): void {
    if (f.kind !== 'message' || f.messageKind !== 'notification' || f.direction !== 's2c') return;
    const method = (f.message as { method: string }).method;
    const attrs = this.notificationSets.get(method) ?? this.notificationSets.set(Object.freeze({ [ATTR_MCP_METHOD_NAME]: method }), method);
    this.inst.notifications.add(1, attrs);
    const fired = ((f.message as { params?: { _meta?: Record<string, unknown> } }).params?._meta ?? undefined)?.[FIRED_AT_META];
    if (typeof fired === 'number' && Number.isFinite(fired)) this.inst.notificationDelay.record(Math.max(0, f.timeUs - fired) / 1e6, attrs);
  }

  private countViolation(e: AnomalySeen): void {
    this.inst.violations.add(1, { [MCPTAP_ATTR.anomalyKind]: e.kind, ...this.transportAttr(e.connectionId) });
  }

  private transportOf(connectionId: string): string {
    return this.connections.get(connectionId)?.transport ?? '';
  }

  private transportAttr(connectionId: string): Attributes {
    const conn = this.connections.get(connectionId);
    return conn ? { [ATTR_NETWORK_TRANSPORT]: networkTransportOf(conn.transport) } : {};
  }
}

const streamKindAttrs: Record<LongStreamKind, Attributes> = {
  get: Object.freeze({ [MCPTAP_ATTR.streamKind]: 'get' }),
  listen: Object.freeze({ [MCPTAP_ATTR.streamKind]: 'listen' }),
};

function figureAttributes(ex: Exchange, figure: string): Attributes {
  const attrs: Attributes = { [ATTR_MCP_METHOD_NAME]: ex.method, [SSE_SERIES_ATTR]: figure };
  putTargetAttributes(ex, attrs);
  return Object.freeze(attrs);
}
