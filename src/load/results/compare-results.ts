/**
 * Two load results side by side (`mcptap compare BASELINE CANDIDATE`): per scope (the whole run,
 * each method, each tool) the latency percentiles, the error rate of every layer and the request
 * rate, each with a verdict against the user's tolerances. Pure: results in, a comparison out.
 * A scope with too few samples on either side gets no verdict rather than a guess.
 */
import { McptapError } from '../../errors.js';
import type { Histogram } from '../../util/histogram.js';
import { GroupStats } from './group-stats.js';
import type { LoadResult } from './load-result.js';

export type CompareMetric = 'p50' | 'p95' | 'p99' | 'errors' | 'rate';

/**
 * How much worse a metric may get. Latency: `relative` (0.2 = 20% slower) and/or `absolute` (µs);
 * errors: `absolute` percentage points of the request count (0.01 = one point); rate: `relative`
 * drop (0.1 = 10% fewer requests per second).
 */
export interface Tolerance {
  relative?: number;
  absolute?: number;
}

export type Tolerances = Partial<Record<CompareMetric, Tolerance>>;

export const DEFAULT_TOLERANCE_SPEC = 'p95=+20%,p99=+50%,errors=+1%,rate=-10%';

/** Fewer samples than this on either side: no verdict for the scope. */
export const DEFAULT_MIN_SAMPLES = 30;

/** A latency change smaller than this is noise, whatever the ratio (timer and scheduling jitter). */
export const LATENCY_FLOOR_US = 1000;

const METRICS: readonly CompareMetric[] = ['p50', 'p95', 'p99', 'errors', 'rate'];

/**
 * `p95=+20%,p99=+5ms,errors=+1%,rate=-10%`. Latency takes `+N%` or `+Nms`/`+Ns`; errors `+N%`
 * (percentage points); rate `-N%`. Throws MCPTAP_COMPARE_BAD_TOLERANCE naming the bad part.
 */
export function parseTolerances(spec: string): Tolerances {
  const out: Tolerances = {};
  for (const part of spec
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const m = /^([a-z0-9]+)\s*=\s*([+-]?)(\d+(?:\.\d+)?)\s*(%|ms|s|us)?$/.exec(part);
    const bad = (why: string) => new McptapError('MCPTAP_COMPARE_BAD_TOLERANCE', `--max-regression: "${part}": ${why} (e.g. ${DEFAULT_TOLERANCE_SPEC})`);
    if (!m) throw bad('write METRIC=+N% (or +Nms for latency)');
    const [, name, sign, num, unit] = m;
    if (!(METRICS as readonly string[]).includes(name!)) throw bad(`unknown metric; one of ${METRICS.join(', ')}`);
    const metric = name as CompareMetric;
    const n = Number(num);
    if (metric === 'rate') {
      if (sign === '+' || unit !== '%') throw bad('rate takes a drop in percent, e.g. rate=-10%');
      out.rate = { relative: n / 100 };
    } else if (metric === 'errors') {
      if (sign === '-' || unit !== '%') throw bad('errors takes an increase in percentage points, e.g. errors=+1%');
      out.errors = { absolute: n / 100 };
    } else {
      if (sign === '-') throw bad('latency takes an increase, e.g. p95=+20% or p95=+5ms');
      if (unit === '%') out[metric] = { ...out[metric], relative: n / 100 };
      else if (unit === 'ms' || unit === 's' || unit === 'us') out[metric] = { ...out[metric], absolute: n * (unit === 's' ? 1e6 : unit === 'ms' ? 1e3 : 1) };
      else throw bad('give a unit: % or ms');
    }
  }
  return out;
}

export type Verdict = 'ok' | 'regressed' | 'improved' | 'no_verdict';

export interface MetricCell {
  metric: CompareMetric;
  /** Latency in µs, errors as a fraction of requests, rate in requests per second. */
  baseline: number;
  candidate: number;
  verdict: Verdict;
  /** A percentile past its tolerance whose confidence bounds still overlap it: sampling noise, so ok. */
  withinNoise?: true;
}

/** Error rate of one layer (fraction of requests) on both sides. */
export interface LayerRates {
  layer: 'transport' | 'http' | 'jsonrpc' | 'tool' | 'unanswered';
  baseline: number;
  candidate: number;
}

export interface CompareRow {
  /** `all`, `method tools/call`, `tool echo`. */
  scope: string;
  baselineCount: number;
  candidateCount: number;
  cells: MetricCell[];
  layers: LayerRates[];
  verdict: Verdict;
}

export interface Comparison {
  baseline: RunInfo;
  candidate: RunInfo;
  tolerances: Tolerances;
  minSamples: number;
  rows: CompareRow[];
  /** Scopes whose verdict is `regressed`, in row order. */
  regressions: string[];
}

export interface RunInfo {
  label: string;
  scenario: string;
  target: string;
  startedAt: string;
  wallMs: number;
}

export interface CompareOptions {
  tolerances?: Tolerances;
  minSamples?: number;
  labels?: [string, string];
}

export function compareResults(baseline: LoadResult, candidate: LoadResult, opts: CompareOptions = {}): Comparison {
  const tolerances = opts.tolerances ?? parseTolerances(DEFAULT_TOLERANCE_SPEC);
  const minSamples = opts.minSamples ?? DEFAULT_MIN_SAMPLES;
  // Each group decoded once (its result part), whichever side lacks it compared as absent.
  const group = (g: LoadResult['overall'] | undefined) => (g ? GroupStats.fromJSON(g) : undefined);
  const scopes: [string, GroupStats | undefined, GroupStats | undefined][] = [['all', group(baseline.overall), group(candidate.overall)]];
  for (const [prefix, a, b] of [
    ['method', baseline.methods, candidate.methods],
    ['tool', baseline.tools, candidate.tools],
  ] as const) {
    for (const name of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) scopes.push([`${prefix} ${name}`, group(a[name]), group(b[name])]);
  }
  const rows = scopes.map(([scope, a, b]) => compareGroup(scope, a, b, baseline.wallMs, candidate.wallMs, tolerances, minSamples));
  return {
    baseline: info(baseline, opts.labels?.[0] ?? 'baseline'),
    candidate: info(candidate, opts.labels?.[1] ?? 'candidate'),
    tolerances,
    minSamples,
    rows,
    regressions: rows.filter((r) => r.verdict === 'regressed').map((r) => r.scope),
  };
}

function info(r: LoadResult, label: string): RunInfo {
  return { label, scenario: r.scenario, target: r.target, startedAt: r.startedAt, wallMs: r.wallMs };
}

function compareGroup(
  scope: string,
  a: GroupStats | undefined,
  b: GroupStats | undefined,
  wallA: number,
  wallB: number,
  tol: Tolerances,
  minSamples: number,
): CompareRow {
  const na = a?.counters.requests ?? 0;
  const nb = b?.counters.requests ?? 0;
  const enough = na >= minSamples && nb >= minSamples;
  const la = layerRates(a);
  const lb = layerRates(b);
  const layers = (Object.keys(la) as LayerRates['layer'][]).map((layer) => ({ layer, baseline: la[layer], candidate: lb[layer] }));
  const pa = a?.latency;
  const pb = b?.latency;
  const errA = na ? a!.counters.errors / na : 0;
  const errB = nb ? b!.counters.errors / nb : 0;
  const cells: MetricCell[] = [
    latencyCell('p50', 50, pa, pb, tol.p50, enough),
    latencyCell('p95', 95, pa, pb, tol.p95, enough),
    latencyCell('p99', 99, pa, pb, tol.p99, enough),
    errorsCell(na, nb, errA, errB, layers, tol.errors, enough),
    // A method's or tool's share of the mix varies by chance in a weighted mix: only the run's rate is judged.
    rateCell(wallA > 0 ? na / (wallA / 1000) : 0, wallB > 0 ? nb / (wallB / 1000) : 0, scope === 'all' ? tol.rate : undefined, enough),
  ];
  const verdict: Verdict = !enough
    ? 'no_verdict'
    : cells.some((c) => c.verdict === 'regressed')
      ? 'regressed'
      : cells.some((c) => c.verdict === 'improved')
        ? 'improved'
        : 'ok';
  return { scope, baselineCount: na, candidateCount: nb, cells, layers, verdict };
}

function layerRates(g: GroupStats | undefined): Record<LayerRates['layer'], number> {
  const c = g?.counters;
  const n = c?.requests ?? 0;
  const sum = (r: Record<string, number> | undefined, keep: (k: string) => boolean = () => true) =>
    Object.entries(r ?? {}).reduce((s, [k, v]) => (keep(k) ? s + v : s), 0);
  const rate = (x: number) => (n ? x / n : 0);
  return {
    transport: rate(sum(c?.transport)),
    http: rate(sum(c?.http, (status) => !/^2\d\d$/.test(status))),
    jsonrpc: rate(sum(c?.jsonrpc)),
    tool: rate(c?.toolErrors ?? 0),
    unanswered: rate(c?.unanswered ?? 0),
  };
}

/**
 * A percentile regresses when the candidate is past the tolerance even comparing the candidate's
 * lower confidence bound with the baseline's upper one: with n samples the p-quantile's rank is
 * uncertain by about z·sqrt(n·p·(1−p)) (order statistics), so small runs do not flag noise.
 */
function latencyCell(
  metric: CompareMetric,
  p: number,
  a: Histogram | undefined,
  b: Histogram | undefined,
  tol: Tolerance | undefined,
  enough: boolean,
): MetricCell {
  const at = (h: Histogram | undefined, q: number) => (h && h.totalCount > 0 ? h.getValueAtPercentile(Math.min(100, Math.max(0, q))) : 0);
  const cell = { metric, baseline: at(a, p), candidate: at(b, p) };
  if (!enough || !a || !b) return { ...cell, verdict: 'no_verdict' };
  const [aLo, aHi] = quantileBounds(a.totalCount, p);
  const [bLo, bHi] = quantileBounds(b.totalCount, p);
  const past = (base: number, cand: number) =>
    cand - base > LATENCY_FLOOR_US &&
    (tol?.relative === undefined || cand > base * (1 + tol.relative)) &&
    (tol?.absolute === undefined || cand - base > tol.absolute);
  if (tol && past(at(a, aHi), at(b, bLo))) return { ...cell, verdict: 'regressed' };
  if (tol && past(at(b, bHi), at(a, aLo))) return { ...cell, verdict: 'improved' };
  if (tol && past(cell.baseline, cell.candidate)) return { ...cell, verdict: 'ok', withinNoise: true };
  return { ...cell, verdict: 'ok' };
}

/** z of the percentile confidence bounds (99%, two-sided). */
const QUANTILE_Z = 2.58;

/** Percentiles bracketing the p-th percentile of n samples at {@link QUANTILE_Z}. */
export function quantileBounds(n: number, p: number): [number, number] {
  const q = p / 100;
  const spread = (QUANTILE_Z * Math.sqrt(n * q * (1 - q)) + 1) / n;
  return [(q - spread) * 100, (q + spread) * 100];
}

/**
 * The total error rate is shown; a rise beyond the tolerance, in the total or in any one layer,
 * regresses when it is also beyond chance: a two-proportion z-test above {@link ERROR_RATE_Z}
 * (a weighted mix gives each run a slightly different share of failing calls).
 */
function errorsCell(na: number, nb: number, a: number, b: number, layers: LayerRates[], tol: Tolerance | undefined, enough: boolean): MetricCell {
  const cell = { metric: 'errors' as const, baseline: a, candidate: b };
  if (!enough) return { ...cell, verdict: 'no_verdict' };
  const limit = tol?.absolute;
  if (limit === undefined) return { ...cell, verdict: 'ok' };
  const beyond = (x: number, y: number) => y - x > limit && significant(x, y, na, nb);
  if (beyond(a, b) || layers.some((l) => beyond(l.baseline, l.candidate))) return { ...cell, verdict: 'regressed' };
  if (beyond(b, a)) return { ...cell, verdict: 'improved' };
  return { ...cell, verdict: 'ok' };
}

/** z above which a change of error rate is not put down to chance (about 1 in 700 one-sided). */
export const ERROR_RATE_Z = 3;

function significant(p1: number, p2: number, n1: number, n2: number): boolean {
  const pooled = (p1 * n1 + p2 * n2) / (n1 + n2);
  const se = Math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2));
  return se === 0 ? p1 !== p2 : Math.abs(p2 - p1) / se > ERROR_RATE_Z;
}

function rateCell(a: number, b: number, tol: Tolerance | undefined, enough: boolean): MetricCell {
  const cell = { metric: 'rate' as const, baseline: a, candidate: b };
  if (!enough) return { ...cell, verdict: 'no_verdict' };
  if (tol?.relative !== undefined && b < a * (1 - tol.relative)) return { ...cell, verdict: 'regressed' };
  if (tol?.relative !== undefined && b > a * (1 + tol.relative)) return { ...cell, verdict: 'improved' };
  return { ...cell, verdict: 'ok' };
}
