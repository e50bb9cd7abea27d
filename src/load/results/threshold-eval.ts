/**
 * Judging thresholds against a result's decoded parts: a run as it goes, a run's end, a result
 * file, a merge of shards. Pure.
 * A threshold whose scope saw no requests fails: a limit on nothing is a broken scenario, not a pass.
 */
import type { Histogram } from '../../util/histogram.js';
import { unknownReason, type CancelStats } from './cancel-stats.js';
import { httpErrors, sum, type GroupCounters, type GroupStats } from './group-stats.js';
import type { LoadResult, ThresholdOutcome } from './load-result.js';
import { ResultParts } from './result-parts.js';
import { withDefaultThresholds } from './default-thresholds.js';
import { parseScope, parseThreshold, scopeLabel, type ThresholdSpec } from './thresholds.js';
import { compare } from '../../util/compare-op.js';

export type { ThresholdOutcome } from './load-result.js';

/** What thresholds are judged on: a run's parts as it goes (LoadMetrics), or a result's, decoded. */
export type Judged = Pick<ResultParts, 'phases' | 'overall' | 'methods' | 'tools' | 'steps' | 'cancel' | 'listen'>;

/**
 * The one evaluator: final verdicts, merged results, live ones (progress, abortOnFail) all judge
 * decoded parts, `wallMs` being the run's length (so far). Judges exactly `specs`.
 */
export function judgeThresholds(parts: Judged, wallMs: number, specs: readonly ThresholdSpec[]): ThresholdOutcome[] {
  return specs.map((t) => evaluateOne(parts, wallMs, t));
}

/** {@link judgeThresholds} with the thresholds a run has without writing them (default-thresholds.ts). */
export function judgeWithDefaults(parts: Judged, wallMs: number, specs: readonly ThresholdSpec[]): ThresholdOutcome[] {
  return judgeThresholds(parts, wallMs, withDefaultThresholds(specs, parts.overall.counters.checks));
}

/** A result file's thresholds judged again (its parts decoded once). */
export function evaluateThresholds(result: LoadResult, specs: readonly ThresholdSpec[]): ThresholdOutcome[] {
  return judgeWithDefaults(ResultParts.fromJSON(result), result.wallMs, specs);
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

function groupOf(r: Judged, t: ThresholdSpec): GroupStats | undefined {
  const s = t.scope;
  return s.kind === 'all' ? r.overall : (s.kind === 'method' ? r.methods : s.kind === 'tool' ? r.tools : r.steps).get(s.name);
}

function evaluateOne(r: Judged, wallMs: number, t: ThresholdSpec): ThresholdOutcome {
  const base = { scope: scopeLabel(t.scope), expression: t.expression, ...(t.note ? { note: t.note } : {}) };
  if (t.metric.kind === 'cancel') return evaluateCancel(r, t, t.metric.expect, base);
  const observed = observe(r, wallMs, groupOf(r, t), t);
  if (observed === null) return { ...base, ok: false, observed: null, observedText: 'no requests' };
  return { ...base, ok: compare(observed, t.op, t.value), observed, observedText: formatObserved(t, observed) };
}

/** `cancel: honoured`: every verdict in scope must be the expected one; none at all fails. */
function evaluateCancel(r: Judged, t: ThresholdSpec, expect: string, base: { scope: string; expression: string; note?: string }): ThresholdOutcome {
  const all = [...r.cancel].filter(([, g]) => g.cancelled > 0);
  const inScope = t.scope.kind === 'all' ? all : all.filter(([k]) => k === (t.scope as { name: string }).name);
  if (inScope.length === 0) return { ...base, ok: false, observed: null, observedText: 'no cancelled calls' };
  const ok = inScope.every(([, g]) => g.verdict === expect);
  const why = (g: CancelStats) => (g.verdict === 'unknown' ? `: ${unknownReason(g)}` : '');
  const text = inScope.map(([k, g]) => `${inScope.length > 1 ? `${k} ` : ''}${g.verdict} (${g[g.verdict]} of ${g.cancelled} cancelled${why(g)})`).join(', ');
  return { ...base, ok, observed: ok ? 1 : 0, observedText: text };
}

function observe(r: Judged, wallMs: number, g: GroupStats | undefined, t: ThresholdSpec): number | null {
  const m = t.metric;
  if (m.kind === 'rate') {
    // Each phase's planned length (stragglers past it do not lower the rate); a phase without one
    // (a closed phase of iterations only) counts the time it ran, or its iterations would count
    // against no time at all.
    const ms = r.phases.reduce((a, p) => a + (p.plannedDurationMs ?? Math.max(0, (p.endUs - p.startUs) / 1000)), 0);
    const secs = (ms > 0 ? ms : wallMs) / 1000;
    const started = r.phases.reduce((a, p) => a + p.started, 0);
    return secs > 0 ? started / secs : null;
  }
  if (m.kind === 'counter' && m.counter === 'dropped') {
    const dropped = r.phases.reduce((a, p) => a + p.dropped, 0);
    const scheduled = r.phases.reduce((a, p) => a + p.scheduled, 0);
    if (!t.percent) return dropped;
    return scheduled > 0 ? dropped / scheduled : null;
  }
  if (m.kind === 'latency' && m.series === 'delivery') return r.listen.used ? latencyStat(r.listen.delayHistogram, m) : null;
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
