/** The OTel metrics sink's instruments (the MCP semconv histograms and mcptap's own): names, buckets, descriptions, created in one place. */
import type { Histogram, Meter, MetricOptions } from '@opentelemetry/api';
import { METRIC_MCP_CLIENT_OPERATION_DURATION, METRIC_MCP_CLIENT_SESSION_DURATION } from '@opentelemetry/semantic-conventions/incubating';
import { FIRED_AT_META } from '../protocol/mcptap-meta.js';

/** Bucket boundaries (seconds) the MCP semantic conventions recommend for duration histograms. */
export const DURATION_BUCKETS_S = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];
export const EVENTS_PER_STREAM_BUCKETS = [1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000, 5000];

/** In creation order (see METRIC_ORDER). */
export const MCPTAP_METRIC = {
  exchanges: 'mcptap.exchanges',
  sseTimeToFirstEvent: 'mcptap.sse.time_to_first_event',
  sseEventsPerStream: 'mcptap.sse.events_per_stream',
  sseDuration: 'mcptap.sse.duration',
  requestsInFlight: 'mcptap.requests.in_flight',
  protocolViolations: 'mcptap.protocol.violations',
  sinkDropped: 'mcptap.sink.dropped',
  cancellations: 'mcptap.cancellations',
  notifications: 'mcptap.notifications',
  notificationDelay: 'mcptap.notification.delivery_delay',
  streamsOpen: 'mcptap.streams.open',
} as const;

/** Attributes of `mcptap.cancellations`: who cancelled, and whether a response came anyway. */
export const CANCEL_ATTR = { by: 'mcptap.cancel.by', outcome: 'mcptap.cancel.outcome' } as const;

/** Attribute of `mcptap.sse.duration`: which figure of a streamed answer (see model/stream-figures.ts). */
export const SSE_SERIES_ATTR = 'mcptap.sse.series';

/** Drop counts per sink name (a Map, entries, or a plain record). */
export type DropCounts = () => Iterable<readonly [string, number]> | Record<string, number>;

/** Makes the per-exchange histograms in place of `meter.createHistogram` (see telemetry/own-histograms.ts). */
export interface HistogramSource {
  create(name: string, options: MetricOptions): Histogram;
}

/** Instrument names in creation order (the order the SDK reports them in): MCPTAP_METRIC lists mcptap's in that order. */
export const METRIC_ORDER: readonly string[] = [METRIC_MCP_CLIENT_OPERATION_DURATION, METRIC_MCP_CLIENT_SESSION_DURATION, ...Object.values(MCPTAP_METRIC)];

export function createInstruments(meter: Meter, histograms: HistogramSource = { create: (name, options) => meter.createHistogram(name, options) }) {
  const seconds = { unit: 's', advice: { explicitBucketBoundaries: DURATION_BUCKETS_S } };
  return {
    operationDuration: histograms.create(METRIC_MCP_CLIENT_OPERATION_DURATION, {
      ...seconds,
      description: 'Duration of an MCP request as seen by the tap (request to response).',
    }),
    sessionDuration: meter.createHistogram(METRIC_MCP_CLIENT_SESSION_DURATION, {
      ...seconds,
      description: 'Duration of an MCP connection (stdio process or HTTP session).',
    }),
    exchanges: meter.createObservableCounter(MCPTAP_METRIC.exchanges, { unit: '{exchange}', description: 'Exchanges completed, by outcome class.' }),
    timeToFirstEvent: histograms.create(MCPTAP_METRIC.sseTimeToFirstEvent, {
      ...seconds,
      description: 'Time from request to the first SSE event of its response stream.',
    }),
    eventsPerStream: histograms.create(MCPTAP_METRIC.sseEventsPerStream, {
      unit: '{event}',
      description: 'SSE events per response stream.',
      advice: { explicitBucketBoundaries: EVENTS_PER_STREAM_BUCKETS },
    }),
    sseDuration: histograms.create(MCPTAP_METRIC.sseDuration, {
      ...seconds,
      description:
        'Streamed answers by figure (mcptap.sse.series): headers, first_event, final from the request; gap between events; progress between progress notifications; tail from the response to the end of the stream.',
    }),
    inFlight: meter.createObservableUpDownCounter(MCPTAP_METRIC.requestsInFlight, { unit: '{request}', description: 'Requests seen and not yet completed.' }),
    violations: meter.createCounter(MCPTAP_METRIC.protocolViolations, { unit: '{violation}', description: 'Protocol anomalies observed, by kind.' }),
    dropped: meter.createObservableCounter(MCPTAP_METRIC.sinkDropped, {
      unit: '{item}',
      description: 'Work items sinks dropped (full queues, failed exports).',
    }),
    cancellations: meter.createCounter(MCPTAP_METRIC.cancellations, {
      unit: '{request}',
      description: 'Requests cancelled, by who cancelled and whether a response came anyway (answered_after_cancel) or not (unanswered).',
    }),
    notifications: meter.createCounter(MCPTAP_METRIC.notifications, {
      unit: '{notification}',
      description: 'Server-to-client notifications seen, by method (listen streams, GET streams, request streams, stdout).',
    }),
    notificationDelay: histograms.create(MCPTAP_METRIC.notificationDelay, {
      ...seconds,
      description: `Delivery delay of notifications that carry the time their server fired them (_meta "${FIRED_AT_META}", epoch µs; mcptap's reference server stamps its trigger's): seen by the tap minus fired.`,
    }),
    streamsOpen: meter.createUpDownCounter(MCPTAP_METRIC.streamsOpen, {
      unit: '{stream}',
      description:
        'Long-lived streams open, by mcptap.stream.kind: get (a standalone GET stream, legacy eras) or listen (a 2026-07-28 subscriptions/listen stream).',
    }),
  };
}
