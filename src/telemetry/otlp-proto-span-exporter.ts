/**
 * The OTLP/HTTP protobuf span exporter: the SDK's own exporter parts (configuration merged with
 * OTEL_EXPORTER_OTLP_* exactly as `@opentelemetry/exporter-trace-otlp-proto` does, its HTTP
 * transport, retries, compression and response handling) with {@link OtlpSpanSerializer} in
 * place of the SDK serializer, which cost most of a span's export CPU.
 *
 * It reads the collector's answer: an OTLP partial success (`rejected_spans`) is a 200 that the
 * SDK only logs through its diag channel; here it reaches `onRejected`, so spans a collector
 * refused count as not delivered (and `mcptap export` fails) instead of passing for delivered.
 * (http/json uses the SDK's own exporter-trace-otlp-http, which keeps that to its diag channel.)
 *
 * The two packages imported here are the ones exporter-trace-otlp-proto is built from (same
 * release line, 0.223).
 */
import { OTLPExporterBase, type OTLPExporterNodeConfigBase } from '@opentelemetry/otlp-exporter-base';
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from '@opentelemetry/otlp-exporter-base/node-http';
import { ProtobufTraceSerializer, TraceExporterMetricsHelper, type ISerializer, type IExportTraceServiceResponse } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { OtlpSpanSerializer } from './otlp-span-serializer.js';

/** The component type the SDK's protobuf span exporter reports itself as (self-observability). */
const COMPONENT_TYPE = 'otlp_http_span_exporter';

/** Told how many spans of an export the collector refused (OTLP partial success), and why. */
export type OnRejected = (spans: number, message: string) => void;

/** Our request serializer; the response is the SDK's, read here for a partial success (the SDK reads it just before it reports the export's result). */
function spanSerializer(serializer: OtlpSpanSerializer, onRejected: OnRejected | undefined): ISerializer<ReadableSpan[], IExportTraceServiceResponse> {
  return {
    serializeRequest: (spans) => serializer.serialize(spans),
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
  return new OTLPExporterBase(
    createOtlpHttpExportDelegate(options, spanSerializer(new OtlpSpanSerializer(), onRejected), COMPONENT_TYPE, TraceExporterMetricsHelper, undefined),
  );
}
