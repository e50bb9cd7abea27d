/**
 * The metric readers telemetry.ts builds, extended so each collection also reports the reader's {@link OwnHistograms} in the meter's scope, where the
 * SDK would have put them. `own` is read at collection time: the histograms are made after the readers (they need the list).
 */
import { PrometheusExporter, type ExporterConfig } from '@opentelemetry/exporter-prometheus';
import { PeriodicExportingMetricReader, type CollectionResult, type MetricReader, type PeriodicExportingMetricReaderOptions } from '@opentelemetry/sdk-metrics';

/** What collect() accepts (the SDK does not export the type by name). */
type CollectionOptions = Parameters<MetricReader['collect']>[0];
import type { OwnHistograms } from './own-histograms.js';
import { withUnitSuffixes } from './prometheus-units.js';

export interface OwnHistogramsRef {
  own?: OwnHistograms;
}

export class OwnHistogramPeriodicReader extends PeriodicExportingMetricReader {
  constructor(
    options: PeriodicExportingMetricReaderOptions,
    private readonly ref: OwnHistogramsRef,
  ) {
    super(options);
  }

  override async collect(options?: CollectionOptions): Promise<CollectionResult> {
    const result = await super.collect(options);
    return this.ref.own ? this.ref.own.addTo(this, result) : result;
  }
}

/** Also names each metric with its unit, as Prometheus' conventions ask (prometheus-units.ts). */
export class OwnHistogramPrometheusExporter extends PrometheusExporter {
  constructor(
    config: ExporterConfig,
    private readonly ref: OwnHistogramsRef,
  ) {
    super(config);
  }

  override async collect(options?: CollectionOptions): Promise<CollectionResult> {
    const result = await super.collect(options);
    return withUnitSuffixes(this.ref.own ? this.ref.own.addTo(this, result) : result);
  }
}
