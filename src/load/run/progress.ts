/**
 * Live numbers for the progress display: iterations started per second over the last interval,
 * in flight, and errors by layer. Reads the metrics; never changes them.
 */
import type { Scheduler } from '../executors/scheduler.js';
import { httpErrors, sum } from '../results/group-stats.js';
import type { LoadMetrics } from '../results/metrics.js';
import type { Phase } from '../scenario/scenario.js';

export interface ProgressSnapshot {
  elapsedMs: number;
  phase: string;
  phaseIndex: number;
  /** The rate the schedule asks for right now (open phases), for this process. */
  targetRate?: number;
  /** Iterations started per second since the previous snapshot. */
  rate: number;
  inFlight: number;
  started: number;
  dropped: number;
  requests: number;
  errors: { transport: number; http: number; jsonrpc: number; tool: number; violations: number; checks: number };
}

export class ProgressTracker {
  private readonly startUs: number;
  private lastUs: number;
  private lastStarted = 0;
  private phase: Phase | undefined;
  private phaseIndex = -1;
  private phaseStartUs = 0;

  constructor(
    private readonly metrics: LoadMetrics,
    private readonly scheduler: Scheduler,
    private readonly shardCount = 1,
  ) {
    this.startUs = this.lastUs = scheduler.nowUs();
  }

  enterPhase(index: number, phase: Phase): void {
    this.phase = phase;
    this.phaseIndex = index;
    this.phaseStartUs = this.scheduler.nowUs();
  }

  snapshot(): ProgressSnapshot {
    const now = this.scheduler.nowUs();
    const m = this.metrics;
    const started = m.phases.reduce((a, p) => a + p.started, 0);
    const dt = (now - this.lastUs) / 1e6;
    const rate = dt > 0 ? (started - this.lastStarted) / dt : 0;
    this.lastUs = now;
    this.lastStarted = started;
    const c = m.overall.counters;
    const snap: ProgressSnapshot = {
      elapsedMs: (now - this.startUs) / 1000,
      phase: this.phase?.name ?? '',
      phaseIndex: this.phaseIndex,
      rate,
      inFlight: m.inFlight,
      started,
      dropped: m.phases.reduce((a, p) => a + p.dropped, 0),
      requests: c.requests,
      errors: {
        transport: sum(c.transport),
        http: httpErrors(c),
        jsonrpc: sum(c.jsonrpc),
        tool: c.toolErrors,
        violations: sum(c.violations),
        checks: c.checkFailures,
      },
    };
    const target = this.targetRate(now);
    if (target !== undefined) snap.targetRate = target;
    return snap;
  }

  /** The rate an open phase's schedule asks of this process at `nowUs`; undefined in other phases. */
  targetRate(nowUs = this.scheduler.nowUs()): number | undefined {
    if (this.phase?.kind !== 'open') return undefined;
    const f = Math.min(1, (nowUs - this.phaseStartUs) / 1000 / this.phase.durationMs);
    return (this.phase.fromRate + (this.phase.toRate - this.phase.fromRate) * f) / this.shardCount;
  }
}
