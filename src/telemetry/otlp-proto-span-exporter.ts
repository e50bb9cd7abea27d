/**
 * The OTLP/HTTP protobuf span exporter: the parts the SDK's OTLPTraceExporter is made of (export delegate with OTEL_EXPORTER_OTLP_*, retries,
 * compression, ProtobufTraceSerializer), plus the collector's answer: a partial success (`rejected_spans`), which the SDK only logs, reaches
 * `onRejected`, so refused spans count as not delivered. test/telemetry checks its requests against OTLPTraceExporter's, byte for byte.
 */
import { OTLPExporterBase, type OTLPExporterNodeConfigBase } from '@opentelemetry/otlp-exporter-base';
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from '@opentelemetry/otlp-exporter-base/node-http';
import { ProtobufTraceSerializer, TraceExporterMetricsHelper, type ISerializer, type IExportTraceServiceResponse } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';

/** The component type the SDK's protobuf span exporter reports itself as (self-observability). */
const COMPONENT_TYPE = 'otlp_http_span_exporter';

/** Told how many spans of an export the collector refused (OTLP partial success), and why. */
export type OnRejected = (spans: number, message: string) => void;

/** The SDK's serializer, its response read for a partial success (the SDK reads it just before it reports the export's result). */
function spanSerializer(onRejected: OnRejected | undefined): ISerializer<ReadableSpan[], IExportTraceServiceResponse> {
  return {
    serializeRequest: (spans) => ProtobufTraceSerializer.serializeRequest(spans),
    deserializeResponse: (data) => {
      const response = ProtobufTraceSerializer.deserializeResponse(data);
      const rejected = Number(response.partialSuccess?.rejectedSpans ?? 0);
      if (rejected > 0) onRejected?.(rejected, response.partialSuccess?.errorMessage ?? '');
      return response;
    },
  };
}

export function createOtlpProtoSpanExporter(config: OTLPExporterNodeConfigBase, onRejected?: OnRejected): SpanExporter {
  const options = convertLegacyHttpOptions(config, 'TRACES', 'v1/traces', { 'Content-Type': 'application/x-protobuf' });
  return new OTLPExporterBase(createOtlpHttpExportDelegate(options, spanSerializer(onRejected), COMPONENT_TYPE, TraceExporterMetricsHelper, undefined));
}
