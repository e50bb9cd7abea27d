/**
 * The numbers behind the report's charts, from a result: percentiles and counts per interval (from
 * the per-second series, coarsened for long runs), the target rate of the open and replay phases
 * at each interval, and the latency distribution in log-spaced bins. Pure.
 */
import { decodeHistogram, newHistogram, recordedValues, type Histogram } from '../../util/histogram.js';
import type { LoadResult } from '../results/load-result.js';
import type { PhaseStats } from '../results/result-parts.js';
import type { SeriesPoint } from '../results/series.js';

/** More intervals than this are merged in runs of equal length (a chart has no more pixels). */
export const MAX_CHART_POINTS = 600;

/** The percentiles charted over time (100: the maximum). */
export const CHART_PERCENTILES = [50, 90, 95, 99, 100] as const;
export type ChartPercentile = (typeof CHART_PERCENTILES)[number];

export interface Interval {
  /** Start, epoch ms. */
  t: number;
  ms: number;
  counts: Omit<SeriesPoint, 't' | 'latency'>;
  /** Requests completed in the interval with a latency. */
  latencyCount: number;
  /** Latency percentiles in ms; null where nothing completed (a gap, not a zero). */
  latencyMs: Record<ChartPercentile, number | null>;
}

/**
 * The result's intervals, gaps filled with empty ones, merged `k` at a time to at most
 * {@link MAX_CHART_POINTS}. One histogram is decoded at a time (a long run's are many).
 */
export function intervals(r: LoadResult, maxPoints = MAX_CHART_POINTS): Interval[] {
  const s = r.series;
  if (!s || s.points.length === 0) return [];
  const points = [...s.points].sort((a, b) => a.t - b.t);
  const first = points[0]!.t;
  const n = Math.round((points[points.length - 1]!.t - first) / s.intervalMs) + 1;
  const k = Math.max(1, Math.ceil(n / maxPoints));
  const out: Interval[] = [];
  for (let i = 0; i < Math.ceil(n / k); i++) {
    out.push({ t: first + i * k * s.intervalMs, ms: k * s.intervalMs, counts: zero(), latencyCount: 0, latencyMs: percentiles(undefined) });
  }
  let hist: Histogram | undefined;
  let at = -1;
  const close = () => {
    if (at >= 0 && hist) {
      out[at]!.latencyCount = hist.totalCount;
      out[at]!.latencyMs = percentiles(hist);
    }
    hist = undefined;
  };
  for (const p of points) {
    const idx = Math.floor(Math.round((p.t - first) / s.intervalMs) / k);
    if (idx !== at) close();
    at = idx;
    const iv = out[idx]!;
    const { t: _t, latency, ...counts } = p;
    for (const key of Object.keys(counts) as (keyof Interval['counts'])[]) {
      iv.counts[key] = key === 'inFlight' ? Math.max(iv.counts[key], counts[key]) : iv.counts[key] + counts[key];
    }
    (hist ??= newHistogram()).add(decodeHistogram(latency));
  }
  close();
  return out;
}

function percentiles(h: Histogram | undefined): Interval['latencyMs'] {
  const at = (p: number) => (h && h.totalCount > 0 ? h.getValueAtPercentile(p) / 1000 : null);
  return { 50: at(50), 90: at(90), 95: at(95), 99: at(99), 100: at(100) };
}

function zero(): Interval['counts'] {
  return {
    requests: 0,
    errors: 0,
    transport: 0,
    http: 0,
    jsonrpc: 0,
    tool: 0,
    unanswered: 0,
    violations: 0,
    checkFailures: 0,
    started: 0,
    dropped: 0,
    inFlight: 0,
  };
}

/**
 * The rate the schedule asked for at epoch ms `t` (open: the ramp; replay: its average), summed
 * over shards; null outside open and replay phases.
 */
export function targetRateAt(phases: readonly PhaseStats[], t: number): number | null {
  const us = t * 1000;
  for (const p of phases) {
    if (p.kind === 'closed' || p.targetFromRate === undefined) continue;
    const durUs = (p.plannedDurationMs ?? (p.endUs - p.startUs) / 1000) * 1000;
    if (us < p.startUs || us >= p.startUs + durUs) continue;
    const f = durUs > 0 ? (us - p.startUs) / durUs : 0;
    const to = p.targetToRate ?? p.targetFromRate;
    return p.targetFromRate + (to - p.targetFromRate) * f;
  }
  return null;
}

export interface Bins {
  /** Upper edge of each bin, µs. */
  edgesUs: number[];
  counts: number[];
}

/** Latency in log-spaced bins (`perDecade` per factor of 10) from the lowest to the highest value. */
export function logBins(h: Histogram, perDecade = 12): Bins {
  const edgesUs = logEdges(h, perDecade);
  return { edgesUs, counts: binCounts(h, edgesUs) };
}

/** Upper edges of log-spaced bins covering every value of `h`. */
export function logEdges(h: Histogram, perDecade = 12): number[] {
  const values = recordedValues(h);
  if (values.length === 0) return [];
  const lo = Math.max(1, values[0]!.valueUs);
  const hi = values[values.length - 1]!.valueUs;
  const step = Math.pow(10, 1 / perDecade);
  const edgesUs: number[] = [];
  for (let e = Math.pow(10, Math.floor(Math.log10(lo) * perDecade) / perDecade) * step; ; e *= step) {
    edgesUs.push(Math.round(e));
    if (e >= hi) break;
  }
  return edgesUs;
}

/** Counts of `h` per bin (a value goes to the first edge at or above it; past the last, to the last). */
export function binCounts(h: Histogram, edgesUs: readonly number[]): number[] {
  const counts = edgesUs.map(() => 0);
  if (counts.length === 0) return counts;
  let i = 0;
  for (const v of recordedValues(h)) {
    while (i < edgesUs.length - 1 && v.valueUs > edgesUs[i]!) i++;
    counts[i]! += v.count;
  }
  return counts;
}
