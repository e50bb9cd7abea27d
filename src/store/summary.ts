/** Pure aggregation for `summary()`: outcome counts and nearest-rank latency percentiles. */
import type { ListedOutcome, MethodSummary, OutcomeCounts } from './types.js';

/** Nearest-rank percentile of an ascending array; undefined for an empty one. */
export function percentile(sortedAsc: readonly number[], p: number): number | undefined {
  if (sortedAsc.length === 0) return undefined;
  const rank = Math.ceil((p / 100) * sortedAsc.length);
  return sortedAsc[Math.min(sortedAsc.length, Math.max(1, rank)) - 1];
}

export interface ExchangeFact {
  method: string;
  outcome: ListedOutcome;
  latencyUs: number | null;
}

export function addOutcome(counts: OutcomeCounts, outcome: ListedOutcome, by = 1): void {
  counts[outcome] = (counts[outcome] ?? 0) + by;
}

/** One summary per method, methods in name order. `facts` may come in any order. */
export function summariseMethods(facts: Iterable<ExchangeFact>): MethodSummary[] {
  const byMethod = new Map<string, { count: number; outcomes: OutcomeCounts; latencies: number[] }>();
  for (const f of facts) {
    let m = byMethod.get(f.method);
    if (!m) byMethod.set(f.method, (m = { count: 0, outcomes: {}, latencies: [] }));
    m.count++;
    addOutcome(m.outcomes, f.outcome);
    if (f.latencyUs !== null) m.latencies.push(f.latencyUs);
  }
  return [...byMethod.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([method, m]) => {
      const lat = m.latencies.sort((a, b) => a - b);
      const s: MethodSummary = { method, count: m.count, outcomes: m.outcomes };
      if (lat.length > 0) {
        s.p50Us = percentile(lat, 50);
        s.p95Us = percentile(lat, 95);
        s.p99Us = percentile(lat, 99);
        s.maxUs = lat[lat.length - 1];
      }
      return s;
    });
}
