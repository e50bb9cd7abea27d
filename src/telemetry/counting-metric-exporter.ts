/** Wraps a push metric exporter: counts failed exports (a collection's data lost each), reports the first once on the logger; never throws. */
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import {
  AggregationTemporality,
  AggregationType,
  type AggregationOption,
  type InstrumentType,
  type PushMetricExporter,
  type ResourceMetrics,
} from '@opentelemetry/sdk-metrics';
import { silentLogger, type Logger } from '../util/logger.js';

export class CountingMetricExporter implements PushMetricExporter {
  private failedCount = 0;

  constructor(
    private readonly inner: PushMetricExporter,
    private readonly logger: Logger = silentLogger,
  ) {}

  get failed(): number {
    return this.failedCount;
  }

  export(metrics: ResourceMetrics, resultCallback: (result: ExportResult) => void): void {
    const done = (result: ExportResult) => {
      if (result.code !== ExportResultCode.SUCCESS && this.failedCount++ === 0) {
        this.logger.warn(`otel: metric export failed (${result.error?.message ?? 'unknown error'}); further failures counted, not logged`);
      }
      resultCallback(result);
    };
    try {
      this.inner.export(metrics, done);
    } catch (err) {
      done({ code: ExportResultCode.FAILED, error: err instanceof Error ? err : new Error(String(err)) });
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
