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

/** `GROUP BY method, tool, outcome` of a recording's exchanges; `timed`: how many of them have a latency. */
export interface MethodOutcomeCount {
  method: string;
  /** The tool of a tools/call; null for other methods (and a call without a tool name). */
  tool: string | null;
  outcome: ListedOutcome;
  n: number;
  timed: number;
}

/** A recording's latencies, sorted by method, tool, then latency (rows of one method and tool adjacent, ascending). */
export interface MethodLatency {
  method: string;
  tool: string | null;
  latencyUs: number;
}

/** One row of the summary: the method and, for tools/call, the tool. */
const rowKey = (r: { method: string; tool: string | null }): string => JSON.stringify([r.method, r.tool]);

/** A percentile field of {@link MethodSummary} and its rank. */
export type PercentileField = readonly ['p50Us' | 'p90Us' | 'p95Us' | 'p99Us', number];

/** What `ls` shows; `mcptap mcp`'s latency summary asks for p90 too. */
export const LS_PERCENTILES: readonly PercentileField[] = [
  ['p50Us', 50],
  ['p95Us', 95],
  ['p99Us', 99],
];

/**
 * One summary per method (per tool for tools/call), in method then tool order: counts from `counts`,
 * percentiles picked by rank from `sortedLatencies` as it streams by (read once, never held).
 */
export function summariseMethods(
  counts: Iterable<MethodOutcomeCount>,
  sortedLatencies: Iterable<MethodLatency>,
  percentiles: readonly PercentileField[] = LS_PERCENTILES,
): MethodSummary[] {
  const byRow = new Map<string, { summary: MethodSummary; timed: number }>();
  for (const c of counts) {
    let m = byRow.get(rowKey(c));
    if (!m) byRow.set(rowKey(c), (m = { summary: { method: c.method, ...(c.tool !== null ? { tool: c.tool } : {}), count: 0, outcomes: {} }, timed: 0 }));
    m.summary.count += c.n;
    m.timed += c.timed;
    addOutcome(m.summary.outcomes, c.outcome, c.n);
  }
  let row: string | undefined;
  let seen = 0;
  for (const l of sortedLatencies) {
    const key = rowKey(l);
    if (key !== row) ((row = key), (seen = 0));
    const m = byRow.get(key);
    if (!m) continue;
    seen++;
    for (const [field, p] of percentiles) if (seen === nearestRank(m.timed, p)) m.summary[field] = l.latencyUs;
    if (seen === m.timed) m.summary.maxUs = l.latencyUs;
  }
  const order = (a: string | undefined, b: string | undefined) => (a === b ? 0 : a === undefined ? -1 : b === undefined ? 1 : a < b ? -1 : 1);
  return [...byRow.values()].map((m) => m.summary).sort((a, b) => order(a.method, b.method) || order(a.tool, b.tool));
}
