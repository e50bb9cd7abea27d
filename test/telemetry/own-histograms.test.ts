/**
 * OwnHistograms against the metrics SDK: the same records, collected by the same kinds of readers
 * at the same (fake) times, must give the same ScopeMetrics, field for field: cumulative and
 * delta temporality, two readers at once, the cardinality limit's overflow set, NaN / negative /
 * boundary values, one attribute set reached through different objects, instruments in creation
 * order around an SDK instrument, collections with nothing new.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Attributes, Histogram, Meter } from '@opentelemetry/api';
import { AggregationTemporality, InstrumentType, MeterProvider, MetricReader, type CollectionResult } from '@opentelemetry/sdk-metrics';
import { OwnHistograms, ownHistogramsSupported } from '../../src/telemetry/own-histograms.js';

type CollectOptions = Parameters<MetricReader['collect']>[0];

/** A reader collected by hand (the SDK has none exported); with `ref`, it adds own histograms like telemetry.ts's readers. */
class ManualReader extends MetricReader {
  constructor(
    temporality: AggregationTemporality,
    limit: number,
    private readonly ref?: { own?: OwnHistograms },
  ) {
    super({ aggregationTemporalitySelector: () => temporality, cardinalitySelector: () => limit });
  }
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
  override async collect(options?: CollectOptions): Promise<CollectionResult> {
    const result = await super.collect(options);
    return this.ref?.own ? this.ref.own.addTo(this, result) : result;
  }
}

const BOUNDS = [0.01, 0.1, 1, 10];
const ORDER = ['first.histogram', 'sdk.counter', 'second.histogram'];

interface Side {
  readers: ManualReader[];
  h1: Histogram;
  counterAdd: (n: number, a: Attributes) => void;
  h2: Histogram;
}

function side(own: boolean, temporality: AggregationTemporality, limit: number): Side {
  const ref: { own?: OwnHistograms } = {};
  const readers = [
    new ManualReader(temporality, limit, own ? ref : undefined),
    new ManualReader(AggregationTemporality.CUMULATIVE, 1000, own ? ref : undefined),
  ];
  const provider = new MeterProvider({ readers });
  const meter: Meter = provider.getMeter('mcptap', '1.0.0');
  if (own) {
    expect(ownHistogramsSupported(readers)).toBe(true);
    ref.own = new OwnHistograms(readers, { name: 'mcptap', version: '1.0.0', schemaUrl: undefined }, ORDER);
  }
  const make = (name: string, opts: object) => (own ? ref.own!.create(name, opts) : meter.createHistogram(name, opts));
  const h1 = make('first.histogram', { unit: 's', description: 'first', advice: { explicitBucketBoundaries: BOUNDS } });
  const counter = meter.createCounter('sdk.counter');
  const h2 = make('second.histogram', { description: 'no advice: default boundaries' });
  return { readers, h1, counterAdd: (n, a) => counter.add(n, a), h2 };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('OwnHistograms', () => {
  for (const temporality of [AggregationTemporality.CUMULATIVE, AggregationTemporality.DELTA]) {
    it(`reports what the SDK reports (${AggregationTemporality[temporality]}, two readers, overflow)`, async () => {
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(1_767_225_600_123);
      const sdk = side(false, temporality, 4);
      const own = side(true, temporality, 4);
      const frozen = Object.freeze({ 'mcp.method.name': 'tools/call', 'network.transport': 'tcp' });
      const steps: Array<(s: Side) => void> = [
        (s) => {
          s.h1.record(0.005, frozen);
          s.h1.record(0.01, frozen); // on a boundary: that bucket
          s.h1.record(0.5, { 'network.transport': 'tcp', 'mcp.method.name': 'tools/call' }); // same set, other object and order
          s.h1.record(NaN, { a: 'nan only' });
          s.h1.record(-1, { a: 'negative' }); // ignored, no series
          s.h2.record(7, { a: 1 });
          s.h2.record(7, { a: '1' }); // another set: 1 and '1' differ
          s.counterAdd(2, { k: 'v' });
        },
        (s) => {
          s.h1.record(Infinity, frozen);
          s.h1.record(20, { b: 'new set' });
          s.h1.record(3, { c: 'beyond the limit' });
          s.h1.record(4, { d: 'also beyond' });
        },
        () => {},
        (s) => {
          s.h1.record(0, { c: 'beyond the limit' });
          s.h2.record(1e9, {});
          s.h2.record(2, undefined);
        },
      ];
      for (const step of steps) {
        step(sdk);
        step(own);
        vi.setSystemTime(Date.now() + 1500);
        for (let r = 0; r < 2; r++) {
          const a = await sdk.readers[r]!.collect();
          const b = await own.readers[r]!.collect();
          expect(b.errors).toEqual(a.errors);
          expect(b.resourceMetrics.scopeMetrics).toEqual(a.resourceMetrics.scopeMetrics);
        }
        vi.setSystemTime(Date.now() + 250);
      }
    });
  }

  it('keeps at most limit - 1 attribute sets over its life, the rest in the overflow set (the SDK grows its cumulative history)', async () => {
    const own = side(true, AggregationTemporality.CUMULATIVE, 10);
    const points = async () => {
      const r = await own.readers[0]!.collect();
      return r.resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === 'first.histogram')!.dataPoints;
    };
    // The second reader's limit is 1000: the histogram keeps 999 sets; three rounds of 600 new tool names each.
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 600; i++) own.h1.record(0.5, { 'gen_ai.tool.name': `tool-${round}-${i}` });
      await points();
    }
    const last = await own.readers[1]!.collect();
    const dp = last.resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === 'first.histogram')!.dataPoints;
    expect(dp).toHaveLength(1000);
    const overflow = dp.find((p) => p.attributes['otel.metric.overflow'] === true)!;
    expect(overflow.value).toMatchObject({ count: 1800 - 999 });
    // The 10-set reader caps each collection's new sets as the SDK does; its history is bounded by the histogram's 999.
    expect((await points()).length).toBeLessThanOrEqual(1000);
  });

  it('is not used when a reader asks for another histogram aggregation', () => {
    class Exponential extends ManualReader {
      override selectAggregation(type: InstrumentType) {
        return type === InstrumentType.HISTOGRAM ? { type: 5 as const } : super.selectAggregation(type);
      }
    }
    expect(ownHistogramsSupported([new ManualReader(AggregationTemporality.CUMULATIVE, 2000), new Exponential(AggregationTemporality.CUMULATIVE, 2000)])).toBe(
      false,
    );
  });
});
