/**
 * Per method and tool latency rows (milliseconds) and the comparison of two recordings' rows:
 * counts, percentiles and errors side by side with their deltas, and the outcomes that changed.
 */
import type { MethodSummary, OutcomeCounts } from '../store/types.js';

export interface SummaryRow {
  method: string;
  tool?: string;
  count: number;
  errors: number;
  outcomes: OutcomeCounts;
  p50Ms?: number;
  p90Ms?: number;
  p99Ms?: number;
  maxMs?: number;
}

const ms = (us: number | undefined): number | undefined => (us === undefined ? undefined : Math.round(us) / 1000);

export function summaryRow(m: MethodSummary): SummaryRow {
  const errors = Object.entries(m.outcomes).reduce((n, [o, c]) => (o === 'ok' || o === 'pending' ? n : n + (c ?? 0)), 0);
  const row: SummaryRow = { method: m.method, ...(m.tool !== undefined ? { tool: m.tool } : {}), count: m.count, errors, outcomes: m.outcomes };
  for (const [k, v] of [
    ['p50Ms', ms(m.p50Us)],
    ['p90Ms', ms(m.p90Us)],
    ['p99Ms', ms(m.p99Us)],
    ['maxMs', ms(m.maxUs)],
  ] as const)
    if (v !== undefined) row[k] = v;
  return row;
}

const keyOf = (r: SummaryRow): string => JSON.stringify([r.method, r.tool ?? null]);

/** One row per method/tool in either recording: both sides, deltas (candidate - baseline), outcome changes. */
export function compareSummaries(baseline: readonly SummaryRow[], candidate: readonly SummaryRow[]): Record<string, unknown>[] {
  const base = new Map(baseline.map((r) => [keyOf(r), r]));
  const cand = new Map(candidate.map((r) => [keyOf(r), r]));
  const keys = [...new Set([...base.keys(), ...cand.keys()])].sort();
  return keys.map((k) => {
    const b = base.get(k);
    const c = cand.get(k);
    const [method, tool] = JSON.parse(k) as [string, string | null];
    const delta = (f: 'p50Ms' | 'p90Ms' | 'p99Ms') => (b?.[f] !== undefined && c?.[f] !== undefined ? round(c[f] - b[f]) : undefined);
    return {
      method,
      ...(tool !== null ? { tool } : {}),
      count: [b?.count ?? 0, c?.count ?? 0],
      errors: [b?.errors ?? 0, c?.errors ?? 0],
      p50Ms: [b?.p50Ms ?? null, c?.p50Ms ?? null],
      p90Ms: [b?.p90Ms ?? null, c?.p90Ms ?? null],
      p99Ms: [b?.p99Ms ?? null, c?.p99Ms ?? null],
      delta: { p50Ms: delta('p50Ms') ?? null, p90Ms: delta('p90Ms') ?? null, p99Ms: delta('p99Ms') ?? null },
      ...outcomeChanges(b?.outcomes ?? {}, c?.outcomes ?? {}),
      ...(b === undefined ? { only: 'candidate' } : c === undefined ? { only: 'baseline' } : {}),
    };
  });
}

function outcomeChanges(b: OutcomeCounts, c: OutcomeCounts): Record<string, unknown> {
  const changed: Record<string, [number, number]> = {};
  for (const o of new Set([...Object.keys(b), ...Object.keys(c)]) as Set<keyof OutcomeCounts>) {
    if ((b[o] ?? 0) !== (c[o] ?? 0)) changed[o] = [b[o] ?? 0, c[o] ?? 0];
  }
  return Object.keys(changed).length ? { outcomeChanges: changed } : {};
}

const round = (n: number): number => Math.round(n * 1000) / 1000;
