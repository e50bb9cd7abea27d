/**
 * The JSON result of a load run, built so that results from several processes or machines merge
 * exactly: counters are sums and histograms are HDR histograms in their compressed base64 form
 * (same layout everywhere, see util/histogram.ts). Summaries next to them are for humans and are
 * recomputed after every merge; the encoded histograms are the truth.
 */
import { cancelGroupResult, type CancelGroupResult } from './cancel-stats.js';
import type { CheckResult } from './check-stats.js';
import { decodeHistogram, encodeHist, newHistogram, type EncodedHistogram, type Histogram } from '../../util/histogram.js';
import type { ListenResult } from './listen-stats.js';
import { addCounters, emptyCounters, SSE_SERIES, type GroupCounters, type GroupStats, type LoadMetrics, type PhaseStats, type SseSeries } from './metrics.js';
import type { ScenarioPlan } from '../scenario/scenario-plan.js';
import type { ResultSeries } from './series.js';

export const RESULT_FORMAT = 'mcptap-load-result/1';

export type { EncodedHistogram } from '../../util/histogram.js';
export { encodeHist } from '../../util/histogram.js';

export interface GroupResult {
  counters: GroupCounters;
  latency: EncodedHistogram;
  service: EncodedHistogram;
  /** SSE answers (see SSE_SERIES); results written before `headers`, `progress` and `tail` lack them. */
  sse?: Partial<Record<SseSeries, EncodedHistogram>> & { first_event: EncodedHistogram; gap: EncodedHistogram; final: EncodedHistogram };
}

export interface ShardId {
  index: number;
  count: number;
}

export interface LoadResult {
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
  phases: PhaseStats[];
  /** Highest number of iterations in flight at once (merged: sum of the shards' maxima, an upper bound). */
  maxInFlight: number;
  scheduleLag: EncodedHistogram;
  overall: GroupResult;
  methods: Record<string, GroupResult>;
  tools: Record<string, GroupResult>;
  steps: Record<string, GroupResult>;
  /** Cancellation experiments (steps with `cancel:`), by tool (or step): verdict, figures, evidence. */
  cancel?: Record<string, CancelGroupResult>;
  /** Each check by step and name: passes, failures and the first failure's values (when any check ran). */
  checks?: CheckResult[];
  /** Threshold expressions as written, by scope label, so a merge can judge them again. */
  thresholdSpecs: { scope: string; expression: string }[];
  thresholds: ThresholdOutcome[];
  /** The bundled reference server's start (its stall schedule's anchor), when it was the target. */
  targetStartedAtEpochMs?: number;
  /** Scripted iterations that threw. */
  scriptErrors?: number;
  /** Streams of `listen` steps (subscriptions/listen, legacy GET streams), when the scenario has one. */
  listen?: ListenResult;
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

export function groupResult(g: GroupStats): GroupResult {
  const r: GroupResult = { counters: structuredClone(g.counters), latency: encodeHist(g.latency), service: encodeHist(g.service) };
  const sse = g.sse;
  if (sse) r.sse = Object.fromEntries(SSE_SERIES.map((k) => [k, encodeHist(sse[k])])) as NonNullable<GroupResult['sse']>;
  return r;
}

function groups(m: Map<string, GroupStats>): Record<string, GroupResult> {
  return Object.fromEntries([...m.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([k, g]) => [k, groupResult(g)]));
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

export function buildResult(m: LoadMetrics, meta: ResultMeta): LoadResult {
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
    phases: m.phases.map((p) => ({ ...p })),
    maxInFlight: m.maxInFlight,
    scheduleLag: encodeHist(m.scheduleLag),
    overall: groupResult(m.overall),
    methods: groups(m.methods),
    tools: groups(m.tools),
    steps: groups(m.steps),
    ...(m.cancel.size > 0
      ? { cancel: Object.fromEntries([...m.cancel.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([k, c]) => [k, cancelGroupResult(c)])) }
      : {}),
    ...(m.checks.size > 0 ? { checks: m.checks.result() } : {}),
    thresholdSpecs: meta.thresholdSpecs,
    thresholds: [],
    series: m.series.snapshot(),
    ...(m.listen.used ? { listen: m.listen.result() } : {}),
  };
}

/** Decoded histogram of a group's series (`latency`, `service` or an SSE series). */
export function histogramOf(g: GroupResult, series: 'latency' | 'service' | SseSeries): Histogram {
  if (series === 'latency' || series === 'service') return decodeHistogram(g[series].hdr);
  const h = g.sse?.[series];
  return h ? decodeHistogram(h.hdr) : newHistogram();
}

function addEncoded(a: EncodedHistogram | undefined, b: EncodedHistogram | undefined): EncodedHistogram {
  const h = newHistogram();
  if (a) h.add(decodeHistogram(a.hdr));
  if (b) h.add(decodeHistogram(b.hdr));
  return encodeHist(h);
}

export function mergeGroups(a: GroupResult | undefined, b: GroupResult | undefined): GroupResult {
  const counters = emptyCounters();
  if (a) addCounters(counters, a.counters);
  if (b) addCounters(counters, b.counters);
  const r: GroupResult = { counters, latency: addEncoded(a?.latency, b?.latency), service: addEncoded(a?.service, b?.service) };
  if (a?.sse || b?.sse) {
    r.sse = Object.fromEntries(SSE_SERIES.map((k) => [k, addEncoded(a?.sse?.[k], b?.sse?.[k])])) as NonNullable<GroupResult['sse']>;
  }
  return r;
}

export function mergeGroupMaps(a: Record<string, GroupResult>, b: Record<string, GroupResult>): Record<string, GroupResult> {
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort((x, y) => x.localeCompare(y));
  return Object.fromEntries(keys.map((k) => [k, mergeGroups(a[k], b[k])]));
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
