/**
 * Judging thresholds against a {@link LoadResult} (a single run or a merge of shards). Pure.
 * A threshold whose scope saw no requests fails: a limit on nothing is a broken scenario, not a pass.
 */
import { cancelGroupResult, unknownReason, type CancelGroupResult } from './cancel-stats.js';
import { decodeHistogram, newHistogram, type Histogram } from '../../util/histogram.js';
import { histogramOf, type LoadResult, type ThresholdOutcome } from './load-result.js';
import { httpErrors, sum, type GroupCounters, type GroupStats, type LoadMetrics, type PhaseStats, type SseSeries } from './metrics.js';
import { withDefaultThresholds } from './default-thresholds.js';
import { parseScope, parseThreshold, scopeLabel, type ThresholdSpec } from './thresholds.js';
import { compare } from '../../util/compare-op.js';

export type { ThresholdOutcome } from './load-result.js';

type Series = 'latency' | 'service' | SseSeries;

/** What thresholds are judged on: a result, or the metrics of a run still going (live). */
interface Subject {
  phases: readonly PhaseStats[];
  wallMs: number;
  group(t: ThresholdSpec): { counters: GroupCounters; histogram(series: Series): Histogram } | undefined;
  /** Cancellation verdicts by tool (or step), for `cancel:` thresholds. */
  cancel?: LoadResult['cancel'];
  /** Delivery delays of `listen` streams (run-wide), when there were any. */
  delivery(): Histogram | undefined;
}

export function evaluateThresholds(result: LoadResult, specs: readonly ThresholdSpec[]): ThresholdOutcome[] {
  const subject: Subject = {
    phases: result.phases,
    wallMs: result.wallMs,
    ...(result.cancel ? { cancel: result.cancel } : {}),
    delivery: () => (result.listen ? decodeHistogram(result.listen.delay.hdr) : undefined),
    group: (t) => {
      const g = groupOf(result, t);
      return g && { counters: g.counters, histogram: (series) => histogramOf(g, series) };
    },
  };
  return withDefaultThresholds(specs, result.overall.counters.checks).map((t) => evaluateOne(subject, t));
}

/**
 * The same judgement on a run still going, from its live metrics (no encoding of histograms, so
 * cheap enough for each metrics collection): what ran so far, `wallMs` since the start.
 */
export function evaluateLiveThresholds(m: LoadMetrics, wallMs: number, specs: readonly ThresholdSpec[]): ThresholdOutcome[] {
  const live = (g: GroupStats | undefined) =>
    g && {
      counters: g.counters,
      histogram: (series: Series) => (series === 'latency' || series === 'service' ? g[series] : (g.sse?.[series] ?? newHistogram())),
    };
  const subject: Subject = {
    phases: m.phases,
    wallMs,
    cancel: Object.fromEntries([...m.cancel].map(([k, c]) => [k, cancelGroupResult(c)])),
    delivery: () => (m.listen.used ? m.listen.delayHistogram : undefined),
    group: (t) => {
      const s = t.scope;
      return live(s.kind === 'all' ? m.overall : (s.kind === 'method' ? m.methods : s.kind === 'tool' ? m.tools : m.steps).get(s.name));
    },
  };
  return specs.map((t) => evaluateOne(subject, t));
}

/** Re-parse the expressions stored in a result (after a merge). */
export function specsOfResult(result: LoadResult): ThresholdSpec[] {
  const out: ThresholdSpec[] = [];
  for (const { scope, expression } of result.thresholdSpecs) {
    const s = parseScope(scope);
    const t = typeof s === 'string' ? s : parseThreshold(expression, s);
    if (typeof t !== 'string') out.push(t);
  }
  return out;
}

function groupOf(r: LoadResult, t: ThresholdSpec): LoadResult['overall'] | undefined {
  switch (t.scope.kind) {
    case 'all':
      return r.overall;
    case 'method':
      return r.methods[t.scope.name];
    case 'tool':
      return r.tools[t.scope.name];
    case 'step':
      return r.steps[t.scope.name];
  }
}

function evaluateOne(r: Subject, t: ThresholdSpec): ThresholdOutcome {
  const base = { scope: scopeLabel(t.scope), expression: t.expression, ...(t.note ? { note: t.note } : {}) };
  if (t.metric.kind === 'cancel') return evaluateCancel(r, t, t.metric.expect, base);
  const observed = observe(r, r.group(t), t);
  if (observed === null) return { ...base, ok: false, observed: null, observedText: 'no requests' };
  return { ...base, ok: compare(observed, t.op, t.value), observed, observedText: formatObserved(t, observed) };
}

/** `cancel: honoured`: every verdict in scope must be the expected one; none at all fails. */
function evaluateCancel(r: Subject, t: ThresholdSpec, expect: string, base: { scope: string; expression: string; note?: string }): ThresholdOutcome {
  const all = Object.entries(r.cancel ?? {}).filter(([, g]) => g.cancelled > 0);
  const inScope = t.scope.kind === 'all' ? all : all.filter(([k]) => k === (t.scope as { name: string }).name);
  if (inScope.length === 0) return { ...base, ok: false, observed: null, observedText: 'no cancelled calls' };
  const ok = inScope.every(([, g]) => g.verdict === expect);
  const why = (g: CancelGroupResult) => (g.verdict === 'unknown' ? `: ${unknownReason(g)}` : '');
  const text = inScope.map(([k, g]) => `${inScope.length > 1 ? `${k} ` : ''}${g.verdict} (${g[g.verdict]} of ${g.cancelled} cancelled${why(g)})`).join(', ');
  return { ...base, ok, observed: ok ? 1 : 0, observedText: text };
}

function observe(r: Subject, g: ReturnType<Subject['group']>, t: ThresholdSpec): number | null {
  const m = t.metric;
  if (m.kind === 'rate') {
    // Each phase's planned length (stragglers past it do not lower the rate); a phase without one
    // (a closed phase of iterations only) counts the time it ran, or its iterations would count
    // against no time at all.
    const ms = r.phases.reduce((a, p) => a + (p.plannedDurationMs ?? Math.max(0, (p.endUs - p.startUs) / 1000)), 0);
    const secs = (ms > 0 ? ms : r.wallMs) / 1000;
    const started = r.phases.reduce((a, p) => a + p.started, 0);
    return secs > 0 ? started / secs : null;
  }
  if (m.kind === 'counter' && m.counter === 'dropped') {
    const dropped = r.phases.reduce((a, p) => a + p.dropped, 0);
    const scheduled = r.phases.reduce((a, p) => a + p.scheduled, 0);
    if (!t.percent) return dropped;
    return scheduled > 0 ? dropped / scheduled : null;
  }
  if (m.kind === 'latency' && m.series === 'delivery') {
    const h = r.delivery();
    return h ? latencyStat(h, m) : null;
  }
  if (!g || g.counters.requests === 0) return null;
  if (m.kind === 'latency') return m.series === 'delivery' ? null : latencyStat(g.histogram(m.series), m);
  if (m.kind !== 'counter') return null;
  const count = counterValue(g, m.counter, m.code);
  return t.percent ? count / g.counters.requests : count;
}

function latencyStat(h: Histogram, m: Extract<ThresholdSpec['metric'], { kind: 'latency' }>): number | null {
  if (h.totalCount === 0) return null;
  if (m.stat === 'p') return h.getValueAtPercentile(m.percentile!);
  if (m.stat === 'avg') return h.mean;
  return m.stat === 'min' ? h.minNonZeroValue : h.maxValue;
}

function counterValue(g: { counters: GroupCounters }, name: string, code?: number): number {
  const c = g.counters;
  switch (name) {
    case 'errors':
      return c.errors;
    case 'transport_errors':
      return sum(c.transport);
    case 'http_errors':
      return httpErrors(c);
    case 'jsonrpc_errors':
      return sum(c.jsonrpc);
    case 'tool_errors':
      return c.toolErrors;
    case 'protocol_violations':
      return sum(c.violations);
    case 'check_failures':
      return c.checkFailures;
    case 'requests':
      return c.requests;
    case 'http':
      return c.http[String(code)] ?? 0;
    case 'jsonrpc':
      return c.jsonrpc[String(code)] ?? 0;
    default:
      return 0;
  }
}

function formatObserved(t: ThresholdSpec, v: number): string {
  if (t.metric.kind === 'latency') return v >= 1000 ? `${+(v / 1000).toFixed(2)}ms` : `${Math.round(v)}us`;
  if (t.metric.kind === 'rate') return `${v.toFixed(1)}/s`;
  return t.percent ? `${(v * 100).toFixed(2)}%` : String(v);
}

export function thresholdsPassed(outcomes: readonly ThresholdOutcome[]): boolean {
  return outcomes.every((o) => o.ok);
}
