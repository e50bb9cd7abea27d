/**
 * Explicit-bucket histograms for those recorded per exchange, aggregated here instead of by the metrics SDK, whose `record()` hashes the attribute set
 * per reader on every call; here a reused frozen attributes object is found by identity. The one stand-in for SDK code left: the deployed settings'
 * throughput target needs it (docs/performance.md, "Spans as data"). Exports equal the SDK's for the same records, reader by reader (the tests compare
 * them), with one deliberate difference: over its life a histogram keeps at most the largest reader cardinality limit of attribute sets, later ones
 * going to `otel.metric.overflow`, so endless new tool names cannot grow the tap's memory. Only when every reader uses the default aggregation.
 */
import type { Attributes, Histogram, HrTime, MetricAdvice, MetricOptions } from '@opentelemetry/api';
import { ValueType } from '@opentelemetry/api';
import { millisToHrTime } from '@opentelemetry/core';
import {
  AggregationTemporality,
  AggregationType,
  DataPointType,
  InstrumentType,
  type CollectionResult,
  type HistogramMetricData,
  type IMetricReader,
  type MetricData,
  type MetricDescriptor,
  type ScopeMetrics,
} from '@opentelemetry/sdk-metrics';

/** True when every reader aggregates histograms the default way (what OwnHistograms reproduces). */
export function ownHistogramsSupported(readers: readonly IMetricReader[]): boolean {
  return readers.every((r) => r.selectAggregation(InstrumentType.HISTOGRAM).type === AggregationType.DEFAULT);
}

interface Accumulation {
  startTime: HrTime;
  counts: number[];
  count: number;
  sum: number;
  min: number;
  max: number;
}

interface Series {
  readonly attrs: Attributes;
  readonly key: string;
}

interface ReaderState {
  /** Records since this reader's last collection. */
  active: Map<Series, Accumulation>;
  /** What the last collection reported (absent before the first). */
  last?: { accs: Map<Series, Accumulation>; time: HrTime; temporality: AggregationTemporality };
}

const OVERFLOW_ATTRS: Attributes = Object.freeze({ 'otel.metric.overflow': true });

export class OwnHistogram implements Histogram {
  /** Shaped like the SDK's instrument descriptor (which MetricData carries), `type` and `advice` included. */
  readonly descriptor: MetricDescriptor & { type: InstrumentType; advice: MetricAdvice };
  private readonly boundaries: number[];
  /** In reader order: an array, as iterating a Map allocates an entry per step. */
  private readonly states: Array<ReaderState & { reader: IMetricReader }> = [];
  private readonly byObject = new WeakMap<Attributes, Series>();
  private readonly byKey = new Map<string, Series>();
  private readonly overflow: Series = { attrs: OVERFLOW_ATTRS, key: attributesKey(OVERFLOW_ATTRS) };
  /** Distinct attribute sets this histogram ever keeps: the largest of the readers' cardinality limits, less the overflow set. */
  private readonly maxSeries: number;

  constructor(name: string, options: MetricOptions, readers: readonly IMetricReader[]) {
    const advice: MetricAdvice = options.advice ?? {};
    this.descriptor = {
      name,
      type: InstrumentType.HISTOGRAM,
      description: options.description ?? '',
      unit: options.unit ?? '',
      valueType: options.valueType ?? ValueType.DOUBLE,
      advice,
    };
    // The SDK's default aggregation: the advice's boundaries, sorted, without infinities.
    const sorted = [...(advice.explicitBucketBoundaries ?? [0, 5, 10, 25, 50, 75, 100, 250, 500, 750, 1000, 2500, 5000, 7500, 10000])].sort((a, b) => a - b);
    this.boundaries = sorted.filter((b) => b !== Infinity && b !== -Infinity);
    this.maxSeries = Math.max(1, ...readers.map((r) => r.selectCardinalityLimit(InstrumentType.HISTOGRAM))) - 1;
    for (const reader of readers) this.states.push({ reader, active: new Map<Series, Accumulation>() });
  }

  record(value: number, attributes: Attributes = {}): void {
    if (typeof value !== 'number' || value < 0) return;
    const series = this.seriesOf(attributes);
    let now: HrTime | undefined;
    for (let i = 0; i < this.states.length; i++) {
      const state = this.states[i]!;
      let acc = state.active.get(series);
      if (!acc) {
        now ??= millisToHrTime(Date.now());
        const target = state.active.size >= state.reader.selectCardinalityLimit(InstrumentType.HISTOGRAM) - 1 ? this.overflow : series;
        acc = state.active.get(target);
        if (!acc) state.active.set(target, (acc = this.newAccumulation(now)));
      }
      if (Number.isNaN(value)) continue;
      acc.count++;
      acc.sum += value;
      if (value < acc.min) acc.min = value;
      if (value > acc.max) acc.max = value;
      acc.counts[bucketOf(this.boundaries, value)]!++;
    }
  }

  /** This reader's MetricData at `time` (cumulative: the first start time stays; delta: it moves to the last collection); undefined when empty. */
  collect(reader: IMetricReader, time: HrTime): MetricData | undefined {
    const state = this.states.find((s) => s.reader === reader);
    if (!state) return undefined;
    const delta = state.active;
    state.active = new Map();
    let result = delta;
    let temporality: AggregationTemporality;
    if (state.last) {
      temporality = state.last.temporality;
      if (temporality === AggregationTemporality.CUMULATIVE) {
        result = state.last.accs;
        for (const [series, acc] of delta) {
          const prev = result.get(series);
          result.set(series, prev ? merged(prev, acc) : acc);
        }
      } else {
        for (const series of state.last.accs.keys()) {
          const acc = delta.get(series);
          if (acc) acc.startTime = state.last.time;
        }
      }
    } else {
      temporality = reader.selectAggregationTemporality(InstrumentType.HISTOGRAM);
    }
    state.last = { accs: result, time, temporality };
    if (result.size === 0) return undefined;
    const dataPoints: HistogramMetricData['dataPoints'] = [];
    for (const [series, acc] of result) {
      const hasMinMax = acc.count > 0 || acc.min !== Infinity;
      dataPoints.push({
        attributes: series.attrs,
        startTime: acc.startTime,
        endTime: time,
        value: {
          min: hasMinMax ? acc.min : undefined,
          max: hasMinMax ? acc.max : undefined,
          sum: acc.sum,
          buckets: { boundaries: this.boundaries, counts: acc.counts },
          count: acc.count,
        },
      });
    }
    return { descriptor: this.descriptor, aggregationTemporality: temporality, dataPointType: DataPointType.HISTOGRAM, dataPoints };
  }

  private seriesOf(attributes: Attributes): Series {
    let series = this.byObject.get(attributes);
    if (series) return series;
    // Same set, same series, whatever object carries it (equality as the SDK decides it).
    const key = attributesKey(attributes);
    series = this.byKey.get(key);
    if (!series) {
      // Past the limit, new sets go to overflow for good: the SDK caps sets only per collection, so cumulative history grew with every name sent.
      if (this.byKey.size >= this.maxSeries) return this.overflow;
      this.byKey.set(key, (series = { attrs: attributes, key }));
    }
    // Only frozen objects are remembered by identity: a mutable one may carry another set next time.
    if (Object.isFrozen(attributes)) this.byObject.set(attributes, series);
    return series;
  }

  private newAccumulation(startTime: HrTime): Accumulation {
    return { startTime, counts: new Array<number>(this.boundaries.length + 1).fill(0), count: 0, sum: 0, min: Infinity, max: -Infinity };
  }
}

/** One meter's histograms (in creation order) and their readers; a reader's collect() passes its SDK result through {@link OwnHistograms.addTo}. */
export class OwnHistograms {
  private readonly list: OwnHistogram[] = [];

  constructor(
    private readonly readers: readonly IMetricReader[],
    /** The meter's scope, as the SDK reports it. */
    private readonly scope: ScopeMetrics['scope'],
    /** Instrument names in creation order, SDK ones included: the order metrics are reported in. */
    private readonly order: readonly string[],
  ) {}

  create(name: string, options: MetricOptions): OwnHistogram {
    const h = new OwnHistogram(name, options, this.readers);
    this.list.push(h);
    return h;
  }

  /** `result` (the reader's SDK collection) with this reader's own histograms in the meter's scope. */
  addTo(reader: IMetricReader, result: CollectionResult): CollectionResult {
    const scopes = result.resourceMetrics.scopeMetrics;
    const time = collectionTimeOf(scopes) ?? millisToHrTime(Date.now());
    const own = this.list.map((h) => h.collect(reader, time)).filter((m): m is MetricData => m !== undefined);
    if (own.length === 0) return result;
    let scope = scopes.find((s) => s.scope.name === this.scope.name && s.scope.version === this.scope.version && s.scope.schemaUrl === this.scope.schemaUrl);
    if (!scope) scopes.push((scope = { scope: this.scope, metrics: [] }));
    scope.metrics.push(...own);
    const rank = (m: MetricData) => {
      const i = this.order.indexOf(m.descriptor.name);
      return i < 0 ? this.order.length : i;
    };
    scope.metrics.sort((a, b) => rank(a) - rank(b));
    return result;
  }
}

/** The end time the SDK gave this collection's data points (one time per collection). */
function collectionTimeOf(scopes: ScopeMetrics[]): HrTime | undefined {
  for (const s of scopes) for (const m of s.metrics) if (m.dataPoints.length > 0) return m.dataPoints[0]!.endTime;
  return undefined;
}

/** Index of the first boundary >= value (the bucket whose upper bound includes it), or the overflow bucket. */
function bucketOf(boundaries: number[], value: number): number {
  let lo = 0;
  let hi = boundaries.length - 1;
  let found = boundaries.length;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (boundaries[mid]! < value) lo = mid + 1;
    else {
      found = mid;
      hi = mid - 1;
    }
  }
  return found;
}

function merged(prev: Accumulation, next: Accumulation): Accumulation {
  return {
    startTime: prev.startTime,
    counts: prev.counts.map((c, i) => c + next.counts[i]!),
    count: prev.count + next.count,
    sum: prev.sum + next.sum,
    min: Math.min(prev.min, next.min),
    max: Math.max(prev.max, next.max),
  };
}

/** A string equal for equal attribute sets whatever their key order (how the SDK tells sets apart). */
function attributesKey(attrs: Attributes): string {
  const keys = Object.keys(attrs);
  if (keys.length === 0) return '';
  keys.sort();
  return JSON.stringify(keys.map((k) => [k, attrs[k]]));
}
