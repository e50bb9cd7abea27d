/**
 * Per-interval series of a load run, for the charts of the HTML report: per wall-clock second,
 * requests and errors by layer (by completion time), iterations started and dropped (by intended
 * time), the most iterations in flight, and an HDR histogram of the latencies that completed in it.
 * Intervals sit on epoch-second boundaries so shards line up and merge point by point; only the
 * open intervals hold a live histogram (a closed one is kept encoded). A long run keeps at most
 * {@link MAX_SERIES_POINTS}: past that the interval doubles (2 s, 4 s, … on epoch multiples), so a
 * day-long soak stays a few MB.
 */
import { decodeHistogram, encodeHistogram, newHistogram, recordUs, type Histogram } from '../../util/histogram.js';
import type { Sample } from './sample.js';

export const SERIES_INTERVAL_MS = 1000;
export const MAX_SERIES_POINTS = 3600;

/** One interval's counts. Error layers as in {@link GroupCounters}; `http` counts statuses ≥ 400. */
export interface SeriesPoint {
  /** Start of the interval, epoch ms. */
  t: number;
  requests: number;
  errors: number;
  transport: number;
  http: number;
  jsonrpc: number;
  tool: number;
  unanswered: number;
  violations: number;
  checkFailures: number;
  started: number;
  dropped: number;
  /** Most iterations in flight at once (merged: the shards' sum, an upper bound). */
  inFlight: number;
  /** Latency (intended start to response) of the requests that completed, µs, compressed base64. */
  latency: string;
}

export interface ResultSeries {
  intervalMs: number;
  points: SeriesPoint[];
}

type LivePoint = Omit<SeriesPoint, 'latency'> & { hist: Histogram | undefined };

const COUNTS = ['requests', 'errors', 'transport', 'http', 'jsonrpc', 'tool', 'unanswered', 'violations', 'checkFailures', 'started', 'dropped'] as const;

/** Intervals further back than this behind the newest one are closed (encoded, histogram freed). */
const OPEN_INTERVALS = 3;

export class SeriesRecorder {
  private readonly live = new Map<number, LivePoint>();
  private closed: SeriesPoint[] = [];
  private newest = -Infinity;
  private intervalMs = SERIES_INTERVAL_MS;

  constructor(private readonly maxPoints = MAX_SERIES_POINTS) {}

  record(s: Sample): void {
    const p = this.at(s.endUs);
    p.requests++;
    if (s.outcome !== 'ok') p.errors++;
    if (s.transportError) p.transport++;
    if (s.httpStatus !== undefined && s.httpStatus >= 400) p.http++;
    if (s.rpcCode !== undefined) p.jsonrpc++;
    if (s.isError) p.tool++;
    if (s.outcome === 'unanswered') p.unanswered++;
    p.violations += s.violations.length;
    p.checkFailures += s.checkFailures;
    recordUs((p.hist ??= newHistogram()), s.endUs - s.intendedUs);
  }

  started(nowUs: number, inFlight: number): void {
    const p = this.at(nowUs);
    p.started++;
    if (inFlight > p.inFlight) p.inFlight = inFlight;
  }

  dropped(dueUs: number): void {
    this.at(dueUs).dropped++;
  }

  violation(nowUs: number): void {
    this.at(nowUs).violations++;
  }

  /** Every interval so far, in time order (the recorder keeps working afterwards). */
  snapshot(): ResultSeries {
    const open = [...this.live.values()].map(encodePoint);
    return { intervalMs: this.intervalMs, points: [...this.closed, ...open].sort((a, b) => a.t - b.t) };
  }

  private at(us: number): LivePoint {
    const t = Math.floor(us / 1000 / this.intervalMs) * this.intervalMs;
    let p = this.live.get(t) ?? this.reopen(t);
    if (!p) {
      p = { t, ...zeroCounts(), inFlight: 0, hist: undefined };
      this.live.set(t, p);
    }
    if (t > this.newest) {
      this.newest = t;
      for (const [k, old] of this.live) {
        if (k >= t - OPEN_INTERVALS * this.intervalMs) continue;
        this.closed.push(encodePoint(old));
        this.live.delete(k);
      }
      if (this.closed.length + this.live.size > this.maxPoints) return this.coarsen(us);
    }
    return p;
  }

  /** Twice the interval: every point so far merged into its new one; then `us`'s point, live. */
  private coarsen(us: number): LivePoint {
    const all = this.snapshot();
    this.live.clear();
    this.newest = -Infinity;
    this.intervalMs *= 2;
    this.closed = rebucket(all, this.intervalMs).points;
    return this.at(us);
  }

  /** A late event for an interval already closed (a very slow response): decode it again. */
  private reopen(t: number): LivePoint | undefined {
    const i = this.closed.findIndex((p) => p.t === t);
    if (i < 0) return undefined;
    const [p] = this.closed.splice(i, 1);
    const { latency, ...rest } = p!;
    const live: LivePoint = { ...rest, hist: decodeHistogram(latency) };
    this.live.set(t, live);
    return live;
  }
}

function zeroCounts(): Record<(typeof COUNTS)[number], number> {
  return Object.fromEntries(COUNTS.map((k) => [k, 0])) as Record<(typeof COUNTS)[number], number>;
}

function encodePoint(p: LivePoint): SeriesPoint {
  const { hist, ...rest } = p;
  return { ...rest, latency: encodeHistogram(hist ?? newHistogram()) };
}

/**
 * Points regrouped on intervals of `intervalMs` (a multiple of the series' own, epoch-aligned):
 * counts and histograms add, in flight is the highest (one process's figure).
 */
export function rebucket(s: ResultSeries, intervalMs: number): ResultSeries {
  if (intervalMs === s.intervalMs) return s;
  return { intervalMs, points: combine(s.points, (p) => Math.floor(p.t / intervalMs) * intervalMs, Math.max) };
}

/**
 * Two runs' (or shards') series, interval by interval: counts add, histograms add, in flight adds
 * (an upper bound). Series of different intervals meet on the longer one; undefined when neither
 * interval is a multiple of the other.
 */
export function mergeSeries(a: ResultSeries, b: ResultSeries): ResultSeries | undefined {
  const ms = Math.max(a.intervalMs, b.intervalMs);
  if (ms % a.intervalMs !== 0 || ms % b.intervalMs !== 0) return undefined;
  return {
    intervalMs: ms,
    points: combine(
      [...rebucket(a, ms).points, ...rebucket(b, ms).points],
      (p) => p.t,
      (x, y) => x + y,
    ),
  };
}

/** Points of equal slot folded into one, in time order; one histogram decoded at a time. */
function combine(points: readonly SeriesPoint[], slot: (p: SeriesPoint) => number, inFlight: (a: number, b: number) => number): SeriesPoint[] {
  const out: SeriesPoint[] = [];
  let cur: SeriesPoint | undefined;
  let hist: Histogram | undefined;
  const flush = () => {
    if (cur && hist) cur.latency = encodeHistogram(hist);
    hist = undefined;
  };
  for (const p of [...points].sort((x, y) => x.t - y.t)) {
    const t = slot(p);
    if (cur?.t !== t) {
      flush();
      out.push((cur = { ...p, t }));
      continue;
    }
    for (const k of COUNTS) cur[k] += p[k];
    cur.inFlight = inFlight(cur.inFlight, p.inFlight);
    (hist ??= decodeHistogram(cur.latency)).add(decodeHistogram(p.latency));
  }
  flush();
  return out;
}
