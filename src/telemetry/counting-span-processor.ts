/**
 * What the exporters failed to deliver, counted, not just logged on the OTel diag channel; the first failure of each kind is reported once on the
 * logger. {@link CountingSpanProcessor}: a BatchSpanProcessor counting spans refused with the queue full and spans in batches the exporter failed to
 * deliver. The count is exact: it refuses a span itself when its tally reaches `maxQueueSize` (the inner processor's capacity, so that one never drops
 * silently), and the tally falls when a batch goes to the exporter. {@link CountingMetricExporter}: failed metric exports (a collection's data each).
 */
import { TraceFlags, type Context } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import {
  AggregationTemporality,
  AggregationType,
  type AggregationOption,
  type InstrumentType,
  type PushMetricExporter,
  type ResourceMetrics,
} from '@opentelemetry/sdk-metrics';
import { BatchSpanProcessor, type ReadableSpan, type Span, type SpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Logger } from '../util/logger.js';
import type { TelemetryConfig } from './telemetry-config.js';

export interface SpanExportCounts {
  exported: number;
  droppedQueueFull: number;
  droppedExportFailed: number;
  queued: number;
  /** Handed to the exporter, its result not in yet (an endpoint that is down: retrying). */
  sending: number;
  /** Delivered, then refused by the collector (an OTLP partial success). */
  rejectedByCollector: number;
}

export const NO_SPAN_COUNTS: Readonly<SpanExportCounts> = Object.freeze({
  exported: 0,
  droppedQueueFull: 0,
  droppedExportFailed: 0,
  queued: 0,
  sending: 0,
  rejectedByCollector: 0,
});

/** Spans that did not reach the endpoint (yet): refused, failed, or still queued or being sent, or refused by the collector. */
export function notDelivered(c: SpanExportCounts): number {
  return c.droppedQueueFull + c.droppedExportFailed + c.queued + c.sending + c.rejectedByCollector;
}

export class CountingSpanProcessor implements SpanProcessor {
  private readonly inner: BatchSpanProcessor;
  private readonly maxQueueSize: number;
  private readonly logger: Logger;
  private readonly c: SpanExportCounts = { ...NO_SPAN_COUNTS };
  private shutDown = false;

  constructor(exporter: SpanExporter, opts: TelemetryConfig['spanQueue'] & { logger: Logger }) {
    this.maxQueueSize = opts.maxQueueSize;
    this.logger = opts.logger;
    // Explicit values for every setting: the SDK would otherwise read OTEL_BSP_* from process.env.
    this.inner = new BatchSpanProcessor(new CountingExporter(exporter, this), {
      maxQueueSize: this.maxQueueSize,
      maxExportBatchSize: Math.min(opts.maxExportBatchSize, this.maxQueueSize),
      scheduledDelayMillis: opts.scheduledDelayMillis,
      exportTimeoutMillis: opts.exportTimeoutMillis,
    });
  }

  onStart(span: Span, parentContext: Context): void {
    this.inner.onStart(span, parentContext);
  }

  onEnd(span: ReadableSpan): void {
    if (this.shutDown || (span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
    if (this.c.queued >= this.maxQueueSize) {
      if (this.c.droppedQueueFull++ === 0) this.logger.warn(`otel: span queue full (${this.maxQueueSize}); dropping spans (counted in stats)`);
      return;
    }
    this.c.queued++;
    this.inner.onEnd(span);
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush();
  }

  shutdown(): Promise<void> {
    this.shutDown = true;
    return this.inner.shutdown();
  }

  counts(): SpanExportCounts {
    return { ...this.c };
  }

  get dropped(): number {
    return this.c.droppedQueueFull + this.c.droppedExportFailed + this.c.rejectedByCollector;
  }

  /** The collector answered an export with a partial success: `n` of its spans were refused. */
  collectorRejected(n: number, message: string): void {
    if (this.c.rejectedByCollector === 0)
      this.logger.warn(`otel: the collector refused ${n} spans of an export${message ? ` (${message})` : ''}; further refusals counted, not logged`);
    this.c.rejectedByCollector += n;
    // batchDone() counts the whole batch as exported.
    this.c.exported -= n;
  }

  /** Called by the exporter wrapper. */
  batchTaken(n: number): void {
    this.c.queued = Math.max(0, this.c.queued - n);
    this.c.sending += n;
  }

  batchDone(n: number, result: ExportResult): void {
    this.c.sending -= n;
    if (result.code === ExportResultCode.SUCCESS) {
      this.c.exported += n;
      return;
    }
    if (this.c.droppedExportFailed === 0)
      this.logger.warn(`otel: span export failed (${result.error?.message ?? 'unknown error'}); further failures counted, not logged`);
    this.c.droppedExportFailed += n;
  }
}

class CountingExporter implements SpanExporter {
  constructor(
    private readonly inner: SpanExporter,
    private readonly owner: CountingSpanProcessor,
  ) {}

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    this.owner.batchTaken(spans.length);
    let reported = false;
    const done = (result: ExportResult) => {
      if (reported) return;
      reported = true;
      this.owner.batchDone(spans.length, result);
      resultCallback(result);
    };
    try {
      this.inner.export(spans, done);
    } catch (err) {
      done(failed(err));
    }
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

export class CountingMetricExporter implements PushMetricExporter {
  /** Exports that failed. */
  failed = 0;

  constructor(
    private readonly inner: PushMetricExporter,
    private readonly logger: Logger,
  ) {}

  export(metrics: ResourceMetrics, resultCallback: (result: ExportResult) => void): void {
    const done = (result: ExportResult) => {
      if (result.code !== ExportResultCode.SUCCESS && this.failed++ === 0) {
        this.logger.warn(`otel: metric export failed (${result.error?.message ?? 'unknown error'}); further failures counted, not logged`);
      }
      resultCallback(result);
    };
    try {
      this.inner.export(metrics, done);
    } catch (err) {
      done(failed(err));
    }
  }

  selectAggregationTemporality(instrumentType: InstrumentType): AggregationTemporality {
    return this.inner.selectAggregationTemporality?.(instrumentType) ?? AggregationTemporality.CUMULATIVE;
  }

  selectAggregation(instrumentType: InstrumentType): AggregationOption {
    return this.inner.selectAggregation?.(instrumentType) ?? { type: AggregationType.DEFAULT };
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
}

/** An export that threw, as the failed result it stands for. */
export function failed(err: unknown): ExportResult {
  return { code: ExportResultCode.FAILED, error: err instanceof Error ? err : new Error(String(err)) };
}
