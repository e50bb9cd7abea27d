/**
 * The JSON result of a load run, built so that results from several processes or machines merge
 * exactly: counters are sums and histograms are HDR histograms in their compressed base64 form
 * (same layout everywhere, see util/histogram.ts). Summaries next to them are for humans and are
 * recomputed after every merge; the encoded histograms are the truth.
 */
import type { Histogram } from '../../util/histogram.js';
import { GroupStats, type GroupResult, type SseSeries } from './group-stats.js';
import type { LoadMetrics } from './metrics.js';
import type { ResultPartsJSON } from './result-parts.js';
import type { ScenarioPlan } from '../scenario/scenario-plan.js';
import type { ResultSeries } from './series.js';

export const RESULT_FORMAT = 'mcptap-load-result/1';

export type { EncodedHistogram } from '../../util/histogram.js';
export type { GroupResult } from './group-stats.js';

export interface ShardId {
  index: number;
  count: number;
}

/** A result file: the run's parts (result-parts.ts) with what ran, when, and the verdicts. */
export interface LoadResult extends ResultPartsJSON {
  format: typeof RESULT_FORMAT;
  scenario: string;
  era: 'legacy' | 'modern';
  target: string;
  driver: 'http' | 'stdio' | 'raw';
  /** The shards this result covers (one entry for a single process; `count` 1 when unsharded). */
  shards: ShardId[];
  startedAt: string;
  endedAt: string;
  /** Wall time of the run (merged: the longest shard). */
  wallMs: number;
  /** Threshold expressions as written, by scope label, so a merge can judge them again. */
  thresholdSpecs: { scope: string; expression: string }[];
  thresholds: ThresholdOutcome[];
  /** The bundled reference server's start (its stall schedule's anchor), when it was the target. */
  targetStartedAtEpochMs?: number;
  /**
   * The run was stopped before its schedule ended (by what: `SIGINT`, `SIGTERM`, or the abort
   * reason a library caller gave): its figures and thresholds cover only what ran.
   */
  stopped?: string;
  /** Per-second series for charts over time (results of older versions have none). */
  series?: ResultSeries;
  /** The scenario as it ran (older results have none). */
  plan?: ScenarioPlan;
}

export interface ResultMeta {
  scenario: string;
  era: 'legacy' | 'modern';
  target: string;
  driver: LoadResult['driver'];
  shard: ShardId;
  startedAtMs: number;
  endedAtMs: number;
  thresholdSpecs: { scope: string; expression: string }[];
}

/** The file of a run: its parts encoded (scripted errors, the plan and the verdicts are the caller's). */
export function buildResult(m: LoadMetrics, meta: ResultMeta): LoadResult {
  // Listen comes last in a run's file, scripted errors after the plan (run-load.ts).
  const { listen, scriptErrors: _, ...p } = m.toJSON();
  return {
    format: RESULT_FORMAT,
    scenario: meta.scenario,
    era: meta.era,
    target: meta.target,
    driver: meta.driver,
    shards: [meta.shard],
    startedAt: new Date(meta.startedAtMs).toISOString(),
    endedAt: new Date(meta.endedAtMs).toISOString(),
    wallMs: Math.max(0, meta.endedAtMs - meta.startedAtMs),
    ...p,
    thresholdSpecs: meta.thresholdSpecs,
    thresholds: [],
    series: m.series.snapshot(),
    ...(listen ? { listen } : {}),
  };
}

/** Decoded histogram of a group's series (`latency`, `service` or an SSE series), read through its part. */
export function histogramOf(g: GroupResult, series: 'latency' | 'service' | SseSeries): Histogram {
  return GroupStats.fromJSON(g).histogram(series);
}

/** One threshold judged against a result. */
export interface ThresholdOutcome {
  scope: string;
  expression: string;
  ok: boolean;
  /** Observed value in the expression's unit: µs for latencies, a fraction for %, a count, or req/s. */
  observed: number | null;
  /** Human-readable observed value (e.g. `312.4ms`, `4.2%`). */
  observedText: string;
  /** A threshold the scenario did not write, and why it is there. */
  note?: string;
}
