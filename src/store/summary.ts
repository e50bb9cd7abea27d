/**
 * Pure aggregation for `summary()`: outcome counts and nearest-rank latency percentiles, computed
 * from SQL aggregates and one latency-sorted stream, so memory does not grow with the recording.
 */
import type { ListedOutcome, MethodSummary, OutcomeCounts } from './types.js';

/** Nearest-rank percentile of an ascending array; undefined for an empty one. */
export function percentile(sortedAsc: readonly number[], p: number): number | undefined {
  if (sortedAsc.length === 0) return undefined;
  return sortedAsc[nearestRank(sortedAsc.length, p) - 1];
}

/** 1-based nearest rank of percentile `p` among `n` values (n > 0). */
export function nearestRank(n: number, p: number): number {
  return Math.min(n, Math.max(1, Math.ceil((p / 100) * n)));
}

export function addOutcome(counts: OutcomeCounts, outcome: ListedOutcome, by = 1): void {
  counts[outcome] = (counts[outcome] ?? 0) + by;
}

/** `GROUP BY method, outcome` of a recording's exchanges; `timed`: how many of them have a latency. */
export interface MethodOutcomeCount {
  method: string;
  outcome: ListedOutcome;
  n: number;
  timed: number;
}

/** A recording's latencies, sorted by method then latency (rows of one method adjacent, ascending). */
export interface MethodLatency {
  method: string;
  latencyUs: number;
}

const PERCENTILES = [
  ['p50Us', 50],
  ['p95Us', 95],
  ['p99Us', 99],
] as const;

/**
 * One summary per method, methods in name order: counts from `counts`, percentiles picked by rank
 * from `sortedLatencies` as it streams by (read once, never held).
 */
export function summariseMethods(counts: Iterable<MethodOutcomeCount>, sortedLatencies: Iterable<MethodLatency>): MethodSummary[] {
  const byMethod = new Map<string, { summary: MethodSummary; timed: number }>();
  for (const c of counts) {
    let m = byMethod.get(c.method);
    if (!m) byMethod.set(c.method, (m = { summary: { method: c.method, count: 0, outcomes: {} }, timed: 0 }));
    m.summary.count += c.n;
    m.timed += c.timed;
    addOutcome(m.summary.outcomes, c.outcome, c.n);
  }
  let method: string | undefined;
  let seen = 0;
  for (const l of sortedLatencies) {
    if (l.method !== method) ((method = l.method), (seen = 0));
    const m = byMethod.get(l.method);
    if (!m) continue;
    seen++;
    for (const [field, p] of PERCENTILES) if (seen === nearestRank(m.timed, p)) m.summary[field] = l.latencyUs;
    if (seen === m.timed) m.summary.maxUs = l.latencyUs;
  }
  return [...byMethod.values()].map((m) => m.summary).sort((a, b) => (a.method < b.method ? -1 : a.method > b.method ? 1 : 0));
}
