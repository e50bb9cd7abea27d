/**
 * Pure aggregation of {@link Sample}s as a run records them: into the request groups (the whole
 * run, per method, per tool and per step; see group-stats.ts), the series, checks and the
 * iteration figures. No IO and no clock: the same samples always give the same numbers, which is
 * what makes shard results add up to a single run's.
 */
import { recordUs } from '../../util/histogram.js';
import { CancelStats, type CallVerdict, type CancelObservation } from './cancel-stats.js';
import { bump, GroupStats } from './group-stats.js';
import { ResultParts, type PhaseStats } from './result-parts.js';
import type { Sample } from './sample.js';
import { SeriesRecorder } from './series.js';

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

/** The result parts of a run as it goes: what it records, and the live state of recording it. */
export class LoadMetrics extends ResultParts {
  /** Per-second counts and latencies, for charts over time. */
  readonly series = new SeriesRecorder();
  inFlight = 0;
  firstScriptError: string | undefined;

  constructor(private readonly observer?: LoadObserver) {
    super();
  }

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
