/**
 * The OTLP/HTTP protobuf span exporter: the SDK's own, assembled from exactly the parts
 * `@opentelemetry/exporter-trace-otlp-proto`'s OTLPTraceExporter is (its HTTP export delegate with
 * OTEL_EXPORTER_OTLP_* merged, transport, retries, compression; the SDK's ProtobufTraceSerializer),
 * plus one thing that class cannot be asked for: the collector's answer.
 *
 * An OTLP partial success (`rejected_spans`) is a 200 that the SDK only logs through its diag
 * channel; here it reaches `onRejected`, so spans a collector refused count as not delivered (and
 * `mcptap export` fails) instead of passing for delivered. test/telemetry/otlp-proto-span-exporter
 * checks the requests against OTLPTraceExporter's, byte for byte.
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
