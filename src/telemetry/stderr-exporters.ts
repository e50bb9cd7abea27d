/**
 * `OTEL_{TRACES,METRICS}_EXPORTER=console` on stderr: the SDK's console exporters write to stdout, the protocol's when mcptap wraps a stdio server.
 * One JSON line per span / per collection.
 */
import { ExportResultCode, hrTimeToMicroseconds, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { AggregationTemporality, type PushMetricExporter, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { failed } from './counting-span-processor.js';

export type WriteLine = (line: string) => void;

const stderrLine: WriteLine = (line) => {
  process.stderr.write(`${line}\n`);
};

export class StderrSpanExporter implements SpanExporter {
  constructor(private readonly write: WriteLine = stderrLine) {}

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    try {
      for (const s of spans) this.write(JSON.stringify(spanRecord(s)));
      resultCallback({ code: ExportResultCode.SUCCESS });
    } catch (err) {
      resultCallback(failed(err));
    }
  }

  async shutdown(): Promise<void> {}

  async forceFlush(): Promise<void> {}
}

function spanRecord(s: ReadableSpan): Record<string, unknown> {
  const sc = s.spanContext();
  return {
    otel: 'span',
    traceId: sc.traceId,
    spanId: sc.spanId,
    parentSpanId: s.parentSpanContext?.spanId,
    name: s.name,
    kind: s.kind,
    startUs: hrTimeToMicroseconds(s.startTime),
    durationUs: hrTimeToMicroseconds(s.duration),
    status: s.status,
    attributes: s.attributes,
    events: s.events.map((e) => ({ name: e.name, timeUs: hrTimeToMicroseconds(e.time), attributes: e.attributes })),
    links: s.links.map((l) => ({ traceId: l.context.traceId, spanId: l.context.spanId, attributes: l.attributes })),
  };
}

export class StderrMetricExporter implements PushMetricExporter {
  constructor(private readonly write: WriteLine = stderrLine) {}

  export(metrics: ResourceMetrics, resultCallback: (result: ExportResult) => void): void {
    try {
      for (const scope of metrics.scopeMetrics) {
        for (const m of scope.metrics) {
          this.write(
            JSON.stringify({
              otel: 'metric',
              name: m.descriptor.name,
              unit: m.descriptor.unit,
              dataPoints: m.dataPoints.map((p) => ({ attributes: p.attributes, value: p.value })),
            }),
          );
        }
      }
      resultCallback({ code: ExportResultCode.SUCCESS });
    } catch (err) {
      resultCallback(failed(err));
    }
  }

  selectAggregationTemporality(): AggregationTemporality {
    return AggregationTemporality.CUMULATIVE;
  }

  async forceFlush(): Promise<void> {}

  async shutdown(): Promise<void> {}
}
