/**
 * HDR histograms of microseconds. One fixed layout everywhere (1 µs … 1 h, 3 significant digits)
 * so that histograms from any run, shard or machine add up exactly: merging is bucket-wise
 * addition, and the compressed base64 encoding round-trips every count.
 */
import { build, decodeFromCompressedBase64, encodeIntoCompressedBase64, JsHistogram, type Histogram } from 'hdr-histogram-js';

export type { Histogram };

export const HIGHEST_US = 3_600_000_000;
export const SIGNIFICANT_DIGITS = 3;

export function newHistogram(): Histogram {
  return build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: HIGHEST_US,
    numberOfSignificantValueDigits: SIGNIFICANT_DIGITS,
    bitBucketSize: 32,
    autoResize: false,
  });
}

/** The layout's sub-bucket half count is 2^SUB_MAGNITUDE (3 digits: 1,024); values below 2^32. */
const SUB_MAGNITUDE = 10;
const SUB_MASK = (1 << (SUB_MAGNITUDE + 1)) - 1;
const LEADING_ZERO_BASE = 32 - SUB_MAGNITUDE - 1;

/**
 * Where `v` (an integer, 0 <= v < 2^32) is counted in {@link newHistogram}'s layout: the index
 * hdr-histogram-js's `countsArrayIndex` gives, by HdrHistogram's integer formula (leading zeros)
 * instead of the library's float `log2` and two `Math.pow` per value.
 */
export function countsIndex(v: number): number {
  const bucket = LEADING_ZERO_BASE - Math.clz32(v | SUB_MASK);
  return (bucket << SUB_MAGNITUDE) + (v >>> bucket);
}

/**
 * Record a duration, clamped into the trackable range (a negative clock step counts as 0 µs).
 * Hot path (about ten per request): the index comes from {@link countsIndex}, the rest is the
 * library's own `recordValue` steps (count, min and max, total); a histogram of another layout
 * takes `recordValue`. test/load/histogram.test.ts checks both against the library.
 */
export function recordUs(h: Histogram, us: number): void {
  const v = us < 0 ? 0 : us > HIGHEST_US ? HIGHEST_US : Math.round(us);
  const j = h as JsHistogram;
  if (j.subBucketHalfCountMagnitude !== SUB_MAGNITUDE || j.unitMagnitude !== 0) return h.recordValue(v);
  j.incrementCountAtIndex(countsIndex(v));
  j.updateMinAndMax(v);
  j.incrementTotalCount();
}

export function encodeHistogram(h: Histogram): string {
  return encodeIntoCompressedBase64(h);
}

/** Decode into the standard layout (so the result can be added to any other histogram of ours). */
export function decodeHistogram(encoded: string): Histogram {
  const decoded = decodeFromCompressedBase64(encoded, 32);
  const h = newHistogram();
  h.add(decoded);
  return h;
}

export interface LatencySummary {
  count: number;
  min: number;
  mean: number;
  p50: number;
  p90: number;
  p95: number;
  p99: number;
  p999: number;
  max: number;
}

export function summarize(h: Histogram): LatencySummary {
  if (h.totalCount === 0) return { count: 0, min: 0, mean: 0, p50: 0, p90: 0, p95: 0, p99: 0, p999: 0, max: 0 };
  return {
    count: h.totalCount,
    min: h.minNonZeroValue === Number.MAX_SAFE_INTEGER ? 0 : h.minNonZeroValue,
    mean: Math.round(h.mean),
    p50: h.getValueAtPercentile(50),
    p90: h.getValueAtPercentile(90),
    p95: h.getValueAtPercentile(95),
    p99: h.getValueAtPercentile(99),
    p999: h.getValueAtPercentile(99.9),
    max: h.maxValue,
  };
}

/** Whether two histograms hold the same count in every bucket (the encoding has no timestamps). */
export function sameCounts(a: Histogram, b: Histogram): boolean {
  const ca = newHistogram();
  const cb = newHistogram();
  ca.add(a);
  cb.add(b);
  return ca.totalCount === cb.totalCount && encodeHistogram(ca) === encodeHistogram(cb);
}

/** Every recorded value (the bucket's highest equivalent value, µs) with its count, ascending. */
export function recordedValues(h: Histogram): { valueUs: number; count: number }[] {
  if (!(h instanceof JsHistogram)) throw new Error('recordedValues: not a JS histogram');
  const it = h.recordedValuesIterator;
  it.reset();
  const out: { valueUs: number; count: number }[] = [];
  while (it.hasNext()) {
    const v = it.next();
    out.push({ valueUs: v.valueIteratedTo, count: v.countAtValueIteratedTo });
  }
  return out;
}

export interface EncodedHistogram {
  /** HDR histogram of µs, compressed base64 (hdr-histogram-js / HdrHistogram V2 encoding). */
  hdr: string;
  summary: LatencySummary;
}

/** Encoded histogram plus its summary, computed from the decoded form so a merge reports identically. */
export function encodeHist(h: Histogram): EncodedHistogram {
  const hdr = encodeHistogram(h);
  return { hdr, summary: summarize(decodeHistogram(hdr)) };
}
