/**
 * The OTLP/HTTP protobuf span exporter: the SDK's own exporter parts (configuration merged with
 * OTEL_EXPORTER_OTLP_* exactly as `@opentelemetry/exporter-trace-otlp-proto` does, its HTTP
 * transport, retries, compression and response handling) with {@link OtlpSpanSerializer} in
 * place of the SDK serializer, which cost most of a span's export CPU.
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

/** Our request serializer; responses (partial success) are read by the SDK's. */
function spanSerializer(serializer: OtlpSpanSerializer): ISerializer<ReadableSpan[], IExportTraceServiceResponse> {
  return {
    serializeRequest: (spans) => serializer.serialize(spans),
    deserializeResponse: (data) => ProtobufTraceSerializer.deserializeResponse(data),
  };
}

export function createOtlpProtoSpanExporter(config: OTLPExporterNodeConfigBase): SpanExporter {
  const options = convertLegacyHttpOptions(config, 'TRACES', 'v1/traces', { 'Content-Type': 'application/x-protobuf' });
  return new OTLPExporterBase(createOtlpHttpExportDelegate(options, spanSerializer(new OtlpSpanSerializer()), COMPONENT_TYPE, TraceExporterMetricsHelper, undefined));
}
