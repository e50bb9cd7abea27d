/**
 * Judges assertions on the exchange stream in bounded memory: value tests per exchange as each one
 * completes, figures (count, percentiles, rates) in a histogram and counters per assertion, order by
 * the earliest prerequisite per session or connection. An assertion whose selector matched nothing
 * fails: a typo in a selector must not turn a gate green.
 */
import type { Exchange } from '../../model/exchange.js';
import type { TapEvent } from '../../model/events.js';
import { newHistogram, recordUs, summarize, type Histogram } from '../../util/histogram.js';
import { formatDurationUs } from '../../data-file/duration.js';
import type { Checker, CheckerFactory, Emit } from '../checker.js';
import type { Finding, RuleInfo } from '../finding.js';
import { passes, selects, valueOf, type Aggregate, type Assertion, type Expectation } from './assertion.js';
import { compare } from '../../util/compare-op.js';

/** Calls held until the end because their prerequisite might still complete (it started earlier). */
const MAX_WAITING = 1000;

interface State {
  a: Assertion;
  matched: number;
  judged: number;
  failures: Record<'jsonrpc' | 'tool' | 'transport' | 'any', number>;
  latency?: Histogram;
  /** Earliest start of a prerequisite, by session or connection. */
  firstPrereqUs: Map<string, number>;
  waiting: Exchange[];
  waitingDropped: number;
}

export function assertionsChecker(assertions: readonly Assertion[]): CheckerFactory {
  return () => {
    const states: State[] = assertions.map((a) => ({
      a,
      matched: 0,
      judged: 0,
      failures: { jsonrpc: 0, tool: 0, transport: 0, any: 0 },
      latency: a.expect.some((e) => e.kind === 'aggregate' && /^p\d+$|^max$/.test(e.metric)) ? newHistogram() : undefined,
      firstPrereqUs: new Map(),
      waiting: [],
      waitingDropped: 0,
    }));
    const rules: RuleInfo[] = assertions.map((a) => ({
      id: a.ruleId,
      family: 'assert',
      severity: a.severity,
      title: a.name,
      help: `Written at ${a.source}: ${[...(a.precededBy ? ['preceded_by'] : []), ...a.expect.map((e) => e.text)].join('; ')}.`,
    }));
    const checker: Checker = {
      rules,
      onEvent(event: TapEvent, emit: Emit) {
        if (event.type !== 'exchange-completed') return;
        for (const s of states) onExchange(s, event.exchange, emit);
      },
      finish(emit: Emit) {
        for (const s of states) finish(s, emit);
      },
    };
    return checker;
  };
}

const scopeOf = (ex: Exchange): string => ex.sessionId ?? ex.connectionId;

function onExchange(s: State, ex: Exchange, emit: Emit): void {
  if (s.a.precededBy && selects(s.a.precededBy, ex)) {
    const scope = scopeOf(ex);
    const before = s.firstPrereqUs.get(scope);
    if (before === undefined || ex.startUs < before) s.firstPrereqUs.set(scope, ex.startUs);
    // A waiting call whose prerequisite started earlier but completed later is in order after all.
    if (s.waiting.length > 0) s.waiting = s.waiting.filter((w) => scopeOf(w) !== scope || w.startUs <= ex.startUs);
  }
  if (!selects(s.a.select, ex)) return;
  s.matched++;
  if (s.a.precededBy && !(s.firstPrereqUs.get(scopeOf(ex))! < ex.startUs)) {
    if (s.waiting.length < MAX_WAITING) s.waiting.push(ex);
    else s.waitingDropped++;
  }
  tally(s, ex);
  for (const e of s.a.expect) judgeOne(s.a, e, ex, emit);
}

function tally(s: State, ex: Exchange): void {
  if (ex.outcome === 'cancelled') return;
  s.judged++;
  if (ex.outcome === 'jsonrpc_error') s.failures.jsonrpc++;
  if (ex.outcome === 'tool_error') s.failures.tool++;
  if (ex.outcome === 'transport_error') s.failures.transport++;
  if (ex.outcome !== 'ok') s.failures.any++;
  if (s.latency && ex.latencyUs !== undefined && ex.outcome !== 'unanswered') recordUs(s.latency, ex.latencyUs);
}

function judgeOne(a: Assertion, e: Expectation, ex: Exchange, emit: Emit): void {
  if (e.kind === 'value') {
    const found = valueOf(ex, e.test.segments);
    if (passes(e.test, found)) return;
    const side = e.test.segments[0] === 'params' ? 'client' : 'server';
    emit(finding(a, ex, `${e.text}: found ${show(found)}`, { pointer: e.test.pointer, expected: e.text, found: show(found), side }));
  } else if (e.kind === 'progress-increases') {
    const i = ex.progress.findIndex((p, k) => k > 0 && !(p.progress > ex.progress[k - 1]!.progress));
    if (i > 0)
      emit(
        finding(a, ex, `progress went from ${ex.progress[i - 1]!.progress} to ${ex.progress[i]!.progress}`, {
          expected: e.text,
          found: `${ex.progress[i]!.progress} after ${ex.progress[i - 1]!.progress}`,
        }),
      );
  } else if (e.kind === 'no-progress-after-cancel' && ex.cancel) {
    const after = ex.progress.filter((p) => p.timeUs > ex.cancel!.timeUs).length;
    if (after > 0) emit(finding(a, ex, `${after} progress notification(s) after the cancel`, { expected: e.text, found: `${after} after the cancel` }));
  }
}

function finish(s: State, emit: Emit): void {
  const { a } = s;
  const counted = a.expect.some((e) => e.kind === 'aggregate' && e.metric === 'count');
  if (s.matched === 0 && !counted) {
    emit({
      ruleId: a.ruleId,
      severity: a.severity,
      message: `${a.name}: no exchange matched its selector, so nothing was checked`,
      where: {},
      expected: 'at least one exchange',
      found: 'none',
    });
    return;
  }
  for (const w of s.waiting)
    emit(
      finding(a, w, `${w.method} with no earlier prerequisite on its ${w.sessionId ? 'session' : 'connection'}`, {
        expected: 'preceded_by',
        found: 'none before it',
      }),
    );
  if (s.waitingDropped > 0)
    emit({ ruleId: a.ruleId, severity: a.severity, message: `${a.name}: ${s.waitingDropped} more exchange(s) out of order (not listed)`, where: {} });
  for (const e of a.expect) {
    if (e.kind !== 'aggregate') continue;
    const found = figure(s, e.metric);
    if (found === undefined) {
      emit({
        ruleId: a.ruleId,
        severity: a.severity,
        message: `${a.name}: ${e.metric} has no sample (every selected exchange was cancelled or unanswered)`,
        where: {},
        expected: e.text,
        found: 'no sample',
      });
    } else if (!compare(found, e.op, e.bound)) {
      const text = showFigure(e.metric, found);
      emit({
        ruleId: a.ruleId,
        severity: a.severity,
        message: `${a.name}: ${e.metric} was ${text}, expected ${e.text}`,
        where: {},
        expected: e.text,
        found: text,
      });
    }
  }
}

/** The figure of one metric, undefined when it has no sample. */
function figure(s: State, metric: Aggregate): number | undefined {
  if (metric === 'count') return s.matched;
  if (metric.endsWith('_rate')) {
    if (s.judged === 0) return undefined;
    const layer = metric === 'error_rate' ? 'any' : (metric.slice(0, -'_error_rate'.length) as 'jsonrpc' | 'tool' | 'transport');
    return s.failures[layer] / s.judged;
  }
  const sum = summarize(s.latency!);
  return sum.count === 0 ? undefined : sum[metric as 'p50' | 'p90' | 'p95' | 'p99' | 'max'];
}

function showFigure(metric: Aggregate, v: number): string {
  if (metric === 'count') return String(v);
  if (metric.endsWith('_rate')) return `${+(v * 100).toFixed(2)}%`;
  return formatDurationUs(v);
}

function finding(a: Assertion, ex: Exchange, what: string, extra: Partial<Finding> & { side?: 'client' | 'server' }): Finding {
  const { side, ...rest } = extra;
  return {
    ruleId: a.ruleId,
    severity: a.severity,
    message: `${a.name}: ${what}`,
    where: {
      connectionId: ex.connectionId,
      sessionId: ex.sessionId,
      exchangeKey: ex.key,
      jsonRpcId: ex.id,
      method: ex.method,
      tool: ex.target,
      side,
      timeUs: ex.startUs,
    },
    ...rest,
  };
}

function show(v: unknown): string {
  return v === undefined ? '(absent)' : JSON.stringify(v);
}
