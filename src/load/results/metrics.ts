/**
 * Pure aggregation of {@link Sample}s into counters and HDR histograms: for the whole run, per
 * method, per tool and per step. No IO and no clock: the same samples always give the same
 * numbers, which is what makes shard results add up to a single run's.
 *
 * Counters are kept per failure layer and never folded: `transport` by class (refused, reset,
 * timeout, …), `http` by status (every status, 2xx included), `jsonrpc` by error code, `toolErrors`
 * (`isError: true`), `violations` by kind, `checkFailures`.
 */
import { newHistogram, recordUs, type Histogram } from '../../util/histogram.js';
import { CancelStats, type CallVerdict, type CancelObservation } from './cancel-stats.js';
import { CheckStats } from './check-stats.js';
import type { Sample } from './sample.js';
import { SeriesRecorder } from './series.js';
import { ListenStats } from './listen-stats.js';

export interface GroupCounters {
  requests: number;
  ok: number;
  /** Samples whose outcome is not ok (any layer). */
  errors: number;
  transport: Record<string, number>;
  http: Record<string, number>;
  jsonrpc: Record<string, number>;
  toolErrors: number;
  unanswered: number;
  violations: Record<string, number>;
  checks: number;
  checkFailures: number;
  /** Errors a step declared (`expect:`) and got; not in `errors` (absent in older results). */
  expectedErrors?: number;
}

export function emptyCounters(): GroupCounters {
  return { requests: 0, ok: 0, errors: 0, transport: {}, http: {}, jsonrpc: {}, toolErrors: 0, unanswered: 0, violations: {}, checks: 0, checkFailures: 0 };
}

export const sum = (r: Record<string, number>): number => Object.values(r).reduce((a, b) => a + b, 0);
export const httpErrors = (c: GroupCounters): number => Object.entries(c.http).reduce((a, [k, v]) => (Number(k) >= 400 ? a + v : a), 0);

function bump(r: Record<string, number>, key: string | number, n = 1): void {
  r[key] = (r[key] ?? 0) + n;
}

export function addCounters(into: GroupCounters, from: GroupCounters): void {
  for (const k of ['requests', 'ok', 'errors', 'toolErrors', 'unanswered', 'checks', 'checkFailures'] as const) into[k] += from[k];
  for (const k of ['transport', 'http', 'jsonrpc', 'violations'] as const) for (const [key, n] of Object.entries(from[k])) bump(into[k], key, n);
  if (from.expectedErrors) into.expectedErrors = (into.expectedErrors ?? 0) + from.expectedErrors;
}

/**
 * SSE answers, each from the request's send unless said otherwise: `headers` (response headers),
 * `first_event`, `gap` (between consecutive events), `progress` (between consecutive
 * `notifications/progress`: the cadence), `final` (the JSON-RPC response), `tail` (from the
 * response to the end of the stream).
 */
export const SSE_SERIES = ['headers', 'first_event', 'gap', 'progress', 'final', 'tail'] as const;
export type SseSeries = (typeof SSE_SERIES)[number];

export function newSseHistograms(): Record<SseSeries, Histogram> {
  return { headers: newHistogram(), first_event: newHistogram(), gap: newHistogram(), progress: newHistogram(), final: newHistogram(), tail: newHistogram() };
}

export class GroupStats {
  readonly counters = emptyCounters();
  /** From the intended start to the response. */
  readonly latency: Histogram = newHistogram();
  /** From the moment the request was sent to the response. */
  readonly service: Histogram = newHistogram();
  /** SSE answers only (see {@link SSE_SERIES}). */
  sse: Record<SseSeries, Histogram> | undefined;

  record(s: Sample): void {
    const c = this.counters;
    c.requests++;
    if (s.outcome === 'ok') c.ok++;
    else c.errors++;
    if (s.transportError) bump(c.transport, s.transportError);
    if (s.httpStatus !== undefined) bump(c.http, s.httpStatus);
    if (s.rpcCode !== undefined) bump(c.jsonrpc, s.rpcCode);
    if (s.isError) c.toolErrors++;
    if (s.outcome === 'unanswered') c.unanswered++;
    for (const v of s.violations) bump(c.violations, v);
    c.checks += s.checks;
    c.checkFailures += s.checkFailures;
    if (s.expected) c.expectedErrors = (c.expectedErrors ?? 0) + 1;
    recordUs(this.latency, s.endUs - s.intendedUs);
    recordUs(this.service, s.endUs - s.sentUs);
    if (s.sse && s.eventTimesUs && s.eventTimesUs.length > 0) this.recordSse(s, s.eventTimesUs);
  }

  private recordSse(s: Sample, times: readonly number[]): void {
    const h = (this.sse ??= newSseHistograms());
    if (s.headersUs !== undefined) recordUs(h.headers, s.headersUs - s.sentUs);
    recordUs(h.first_event, times[0]! - s.sentUs);
    for (let i = 1; i < times.length; i++) recordUs(h.gap, times[i]! - times[i - 1]!);
    const p = s.progressTimesUs;
    if (p) for (let i = 1; i < p.length; i++) recordUs(h.progress, p[i]! - p[i - 1]!);
    recordUs(h.final, s.endUs - s.sentUs);
    if (s.streamEndUs !== undefined && s.outcome !== 'unanswered') recordUs(h.tail, s.streamEndUs - s.endUs);
  }
}

export interface PhaseStats {
  name: string;
  kind: 'open' | 'closed' | 'replay';
  plannedDurationMs?: number;
  /**
   * Open model: the rate this process was asked for (its shard's share), start and end of the ramp.
   * Replay: the average rate of the sped-up recording (both the same).
   */
  targetFromRate?: number;
  targetToRate?: number;
  /** Replay: the factor on the recorded rate. */
  speed?: number;
  /** Iterations due by the schedule (open) or planned (closed with a count). */
  scheduled: number;
  started: number;
  /** Due but not started: the in-flight cap was reached (open model, replay). */
  dropped: number;
  completed: number;
  startUs: number;
  endUs: number;
}

/**
 * Told of what {@link LoadMetrics} counts, as it counts it, with the phase running then (live
 * metrics: src/load/report/live-metrics.ts). Must not throw; called on the hot path.
 */
export interface LoadObserver {
  sample(s: Sample, phase: PhaseStats | undefined): void;
  check(step: string, ok: boolean, phase: PhaseStats | undefined): void;
  /** A violation that belongs to no request. */
  violation(kind: string, phase: PhaseStats | undefined): void;
}

export class LoadMetrics {
  readonly overall = new GroupStats();
  readonly methods = new Map<string, GroupStats>();
  readonly tools = new Map<string, GroupStats>();
  readonly steps = new Map<string, GroupStats>();
  /** Cancellation experiments, by tool (or step): see cancel-stats.ts. */
  readonly cancel = new Map<string, CancelStats>();
  readonly phases: PhaseStats[] = [];
  /** Streams of `listen` steps. */
  readonly listen = new ListenStats();
  /** Each check's passes and failures, by step. */
  readonly checks = new CheckStats();
  /** How late iterations started against their intended start (generator saturation shows here). */
  readonly scheduleLag: Histogram = newHistogram();
  /** Per-second counts and latencies, for charts over time. */
  readonly series = new SeriesRecorder();
  inFlight = 0;
  maxInFlight = 0;
  /** Scripted iterations that threw (a bug in the scenario script, not in the server). */
  scriptErrors = 0;
  firstScriptError: string | undefined;

  constructor(private readonly observer?: LoadObserver) {}

  record(s: Sample): void {
    this.overall.record(s);
    group(this.methods, s.method).record(s);
    if (s.tool !== undefined) group(this.tools, s.tool).record(s);
    group(this.steps, s.step).record(s);
    this.series.record(s);
    if (s.checkVerdicts) for (const v of s.checkVerdicts) this.checks.record(s.step, v);
    this.observer?.sample(s, this.phases[this.phases.length - 1]);
  }

  recordCancel(o: CancelObservation, v: CallVerdict | undefined): void {
    let c = this.cancel.get(o.key);
    if (!c) this.cancel.set(o.key, (c = new CancelStats()));
    c.record(o, v);
  }

  /** A check made by a scripted iteration, attributed to the step of its last call. */
  recordCheck(step: string, ok: boolean, name = 'check'): void {
    this.checks.record(step, ok ? { name, ok } : { name, ok, expected: 'true', got: 'false' });
    for (const g of [this.overall, group(this.steps, step)]) {
      g.counters.checks++;
      if (!ok) g.counters.checkFailures++;
    }
    this.observer?.check(step, ok, this.phases[this.phases.length - 1]);
  }

  /** A violation that belongs to no request (stdout pollution, a response nobody asked for). */
  recordViolation(kind: string, nowUs?: number): void {
    bump(this.overall.counters.violations, kind);
    if (nowUs !== undefined) this.series.violation(nowUs);
    this.observer?.violation(kind, this.phases[this.phases.length - 1]);
  }

  scriptError(err: unknown): void {
    this.scriptErrors++;
    this.firstScriptError ??= (err as Error)?.stack ?? String(err);
  }

  beginPhase(p: Omit<PhaseStats, 'scheduled' | 'started' | 'dropped' | 'completed' | 'endUs'>): PhaseStats {
    const stats: PhaseStats = { ...p, scheduled: 0, started: 0, dropped: 0, completed: 0, endUs: p.startUs };
    this.phases.push(stats);
    return stats;
  }

  iterationStarted(phase: PhaseStats, intendedUs: number, nowUs: number): void {
    phase.started++;
    recordUs(this.scheduleLag, nowUs - intendedUs);
    this.inFlight++;
    if (this.inFlight > this.maxInFlight) this.maxInFlight = this.inFlight;
    this.series.started(nowUs, this.inFlight);
  }

  /** Due but not started: the in-flight cap was reached. */
  iterationDropped(phase: PhaseStats, dueUs: number): void {
    phase.dropped++;
    this.series.dropped(dueUs);
  }

  iterationEnded(phase: PhaseStats): void {
    phase.completed++;
    this.inFlight--;
  }
}

function group(m: Map<string, GroupStats>, key: string): GroupStats {
  let g = m.get(key);
  if (!g) m.set(key, (g = new GroupStats()));
  return g;
}
