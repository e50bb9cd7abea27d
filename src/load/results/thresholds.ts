/**
 * Threshold expressions: `METRIC OP VALUE`, scoped to the whole run, one method, one tool or one
 * step. Parsed once at validation (a bad expression is a scenario error, reported with its
 * position); evaluated on a {@link LoadResult}, so a merged result is judged exactly like a single
 * run.
 *
 *   latency (from the intended start):  p(99) < 300ms   p95 < 1s   avg < 50ms   med, min, max
 *   other latencies:                    service.p(99)   first_event.p(95)   gap.max   final.p(99)
 *   SSE, from the send:                 headers.p(99) (response headers), first_event, final
 *   SSE, between events:                gap (any two events), progress (two progress notifications)
 *   SSE, after the response:            tail.max (response to the end of the stream)
 *   listen streams (run scope):         delivery.p(99) (a notification's firing to its arrival)
 *   counters:  errors, transport_errors, http_errors, jsonrpc_errors, tool_errors,
 *              protocol_violations, check_failures, requests, dropped, http(429), jsonrpc(-32020)
 *              `< 5%` compares the share of requests (dropped: of scheduled iterations);
 *              a bare number compares the count.
 *   rate:      iterations started per second of planned phase time, e.g. `rate >= 1900` (run scope only)
 *   cancel:    `cancel: honoured` (or `ignored`): the cancellation verdict of a tool (tool:NAME), of a
 *              step that is not a tool call (step:NAME), or of every cancelling step (all)
 */
import type { SseSeries } from './group-stats.js';
import type { CompareOp } from '../../util/compare-op.js';

export type ThresholdScope = { kind: 'all' } | { kind: 'method'; name: string } | { kind: 'tool'; name: string } | { kind: 'step'; name: string };

/** A threshold writes equality as `==`. */
export type Op = Exclude<CompareOp, '='>;

export type ThresholdMetric =
  | { kind: 'latency'; series: LatencySeries; stat: 'p' | 'avg' | 'min' | 'max'; percentile?: number }
  | { kind: 'counter'; counter: CounterName; code?: number }
  | { kind: 'rate' }
  | { kind: 'cancel'; expect: 'honoured' | 'ignored' };

export type LatencySeries = 'latency' | 'service' | SseSeries | 'delivery';

export const COUNTER_NAMES = [
  'errors',
  'transport_errors',
  'http_errors',
  'jsonrpc_errors',
  'tool_errors',
  'protocol_violations',
  'check_failures',
  'requests',
  'dropped',
  'http',
  'jsonrpc',
] as const;
export type CounterName = (typeof COUNTER_NAMES)[number];

export interface ThresholdSpec {
  scope: ThresholdScope;
  expression: string;
  metric: ThresholdMetric;
  op: Op;
  /** Latency: µs. Counter: a count, or a fraction when `percent`. Rate: per second. */
  value: number;
  percent: boolean;
  /** Stop the run once this fails (k6's abortOnFail; see run/threshold-abort.ts)... */
  abortOnFail?: boolean;
  /** ...but not before this long from the start. */
  delayAbortEvalMs?: number;
  /** Why a threshold nobody wrote is there (see default-thresholds.ts). */
  note?: string;
}

export function scopeLabel(s: ThresholdScope): string {
  return s.kind === 'all' ? 'all' : `${s.kind}:${s.name}`;
}

/** Scope keys of the map form: `all`, `method:M` (or a bare `tools/call`), `tool:T`, `step:S`. */
export function parseScope(key: string): ThresholdScope | string {
  if (key === 'all' || key === 'overall') return { kind: 'all' };
  const m = /^(method|tool|step):(.+)$/.exec(key);
  if (m) return { kind: m[1] as 'method' | 'tool' | 'step', name: m[2]! };
  if (key.includes('/')) return { kind: 'method', name: key };
  return `unknown threshold scope "${key}" (use all, method:NAME, tool:NAME or step:NAME)`;
}

const TIME_US: Record<string, number> = { us: 1, µs: 1, ms: 1000, s: 1_000_000 };

/** Parse one expression; returns an error message string when it is not valid. */
export function parseThreshold(expression: string, scope: ThresholdScope = { kind: 'all' }): ThresholdSpec | string {
  const cancel = /^\s*cancel\s*(?::|==)\s*(\w+)\s*$/.exec(expression);
  if (cancel) {
    const word = cancel[1]!.replace('honored', 'honoured');
    if (word !== 'honoured' && word !== 'ignored') return `threshold "${expression}": the cancel verdict is honoured or ignored`;
    if (scope.kind === 'method') return `threshold "${expression}": cancel verdicts are per tool (tool:NAME), per step or for all`;
    return { scope, expression, metric: { kind: 'cancel', expect: word }, op: '==', value: 0, percent: false };
  }
  const m = /^\s*(.+?)\s*(<=|>=|==|!=|<|>)\s*(-?\d+(?:\.\d+)?)\s*(us|µs|ms|s|%)?\s*$/.exec(expression);
  if (!m) return `cannot parse threshold "${expression}": expected METRIC OP VALUE, e.g. "p(99) < 300ms" or "tool_errors < 5%"`;
  const [, metricText, op, num, unit] = m as unknown as [string, string, Op, string, string | undefined];
  const metric = parseMetric(metricText);
  if (typeof metric === 'string') return `threshold "${expression}": ${metric}`;
  const n = Number(num);
  if (metric.kind === 'latency') {
    if (metric.series === 'delivery' && scope.kind !== 'all') return `threshold "${expression}": delivery is measured for the whole run only`;
    if (unit === '%') return `threshold "${expression}": a latency takes a time unit (us, ms, s), not %`;
    return { scope, expression, metric, op, value: n * TIME_US[unit ?? 'ms']!, percent: false };
  }
  if (unit !== undefined && unit !== '%') return `threshold "${expression}": ${metricText} is not a time; use a count or a percentage`;
  if (metric.kind === 'rate' && unit === '%') return `threshold "${expression}": rate is in requests per second, not %`;
  if (metric.kind === 'rate' && scope.kind !== 'all') return `threshold "${expression}": rate applies to the whole run only`;
  if (metric.kind === 'counter' && metric.counter === 'dropped' && scope.kind !== 'all') {
    return `threshold "${expression}": dropped iterations are counted for the whole run only`;
  }
  return { scope, expression, metric, op, value: unit === '%' ? n / 100 : n, percent: unit === '%' };
}

function parseMetric(t: string): ThresholdMetric | string {
  const series = /^(service|headers|first_event|gap|progress|final|tail|delivery)\.(.+)$/.exec(t);
  const name: LatencySeries = series ? (series[1] as LatencySeries) : 'latency';
  const stat = series ? series[2]! : t;
  const p = /^p\(?\s*(\d+(?:\.\d+)?)\s*\)?$/.exec(stat);
  if (p) {
    const percentile = Number(p[1]);
    if (percentile <= 0 || percentile > 100) return `percentile ${p[1]} is not in (0, 100]`;
    return { kind: 'latency', series: name, stat: 'p', percentile };
  }
  if (stat === 'med') return { kind: 'latency', series: name, stat: 'p', percentile: 50 };
  if (stat === 'avg' || stat === 'min' || stat === 'max') return { kind: 'latency', series: name, stat };
  if (series) return `unknown statistic "${stat}" (use p(N), avg, med, min or max)`;
  if (t === 'rate') return { kind: 'rate' };
  const coded = /^(http|jsonrpc)\(\s*(-?\d+)\s*\)$/.exec(t);
  if (coded) return { kind: 'counter', counter: coded[1] as 'http' | 'jsonrpc', code: Number(coded[2]) };
  if ((COUNTER_NAMES as readonly string[]).includes(t) && t !== 'http' && t !== 'jsonrpc') return { kind: 'counter', counter: t as CounterName };
  return `unknown metric "${t}" (use p(N), avg, med, min, max, rate, ${COUNTER_NAMES.filter((c) => c !== 'http' && c !== 'jsonrpc').join(', ')}, http(CODE) or jsonrpc(CODE))`;
}
