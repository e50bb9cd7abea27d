/**
 * Open model: iterations arrive on a schedule that does not care how the server is doing. The
 * rate ramps linearly from `fromRate` to `toRate` over the phase; arrival j (0-based) is due at
 * the time t_j where the expected count of arrivals N(t) = from·t + (to−from)·t²/(2D) equals j.
 *
 * Invariants:
 * - The schedule is a pure function of the phase: shard i of n takes exactly the arrivals with
 *   j ≡ i−1 (mod n), so the shards of a run partition one big run's arrivals.
 * - Every due arrival is either started (with `intendedUs` = its due time, however late the start)
 *   or counted as dropped because `maxInFlight` iterations were running: scheduled = started + dropped
 *   (a run stopped early schedules only the arrivals that came due before the stop).
 * - The loop wakes at most once per tick; all arrivals that came due meanwhile start together.
 */
import type { OpenPhase } from '../scenario/scenario.js';
import type { LoadMetrics } from '../results/metrics.js';
import type { PhaseStats } from '../results/result-parts.js';
import type { Scheduler } from './scheduler.js';
import type { IterationRunner, ShardSpec } from './iteration.js';

export interface OpenExecutorOptions {
  scheduler: Scheduler;
  metrics: LoadMetrics;
  phaseIndex: number;
  shard: ShardSpec;
  run: IterationRunner;
  /** Wake-up granularity in µs (default 1000). */
  tickUs?: number;
  /** Stop scheduling new arrivals when aborted (in-flight ones still finish). */
  signal?: AbortSignal;
}

/** Seconds from the phase start at which arrival j is due. */
export function arrivalOffsetSec(j: number, p: Pick<OpenPhase, 'fromRate' | 'toRate' | 'durationMs'>): number {
  const d = p.durationMs / 1000;
  const a = (p.toRate - p.fromRate) / (2 * d);
  if (Math.abs(a) < 1e-12) return j / p.fromRate;
  return (-p.fromRate + Math.sqrt(p.fromRate * p.fromRate + 4 * a * j)) / (2 * a);
}

/** Arrivals due within the phase, over all shards: ⌈N(D)⌉. */
export function totalArrivals(p: Pick<OpenPhase, 'fromRate' | 'toRate' | 'durationMs'>): number {
  const n = ((p.fromRate + p.toRate) / 2) * (p.durationMs / 1000);
  return Math.max(0, Math.ceil(n - 1e-9));
}

/** How many of `total` indices fall to shard `index` (1-based) of `count`. */
export function shardShare(total: number, shard: ShardSpec): number {
  return total <= shard.index - 1 ? 0 : Math.floor((total - shard.index) / shard.count) + 1;
}

/**
 * Runs a phase's arrivals on schedule. Resolves at the phase's planned end, so the next phase
 * starts on time: waiting here for the stragglers (a stalled server's) would pause the
 * arrivals and hide the stall (coordinated omission across phases). `settled` resolves when every
 * iteration of the phase has ended (its `endUs` is set then); the run awaits it before reporting.
 */
export async function runOpenPhase(phase: OpenPhase, o: OpenExecutorOptions): Promise<{ stats: PhaseStats; settled: Promise<void> }> {
  const startUs = o.scheduler.nowUs();
  const stats = o.metrics.beginPhase({
    name: phase.name,
    kind: 'open',
    plannedDurationMs: phase.durationMs,
    targetFromRate: phase.fromRate / o.shard.count,
    targetToRate: phase.toRate / o.shard.count,
    startUs,
  });
  const plan: ArrivalPlan = {
    total: totalArrivals(phase),
    dueOffsetUs: (j) => Math.round(arrivalOffsetSec(j, phase) * 1e6),
    durationUs: phase.durationMs * 1000,
    maxInFlight: phase.maxInFlight,
  };
  return { stats, ...(await runArrivals(plan, stats, o)) };
}

/** An open-model schedule: arrival j (0 <= j < total, over all shards) is due `dueOffsetUs(j)` after the phase start. */
export interface ArrivalPlan {
  total: number;
  /** Non-decreasing in j. */
  dueOffsetUs(j: number): number;
  /** The phase's planned length: the call returns no earlier (unless stopped). */
  durationUs: number;
  /** Over all shards; each shard gets its share. */
  maxInFlight: number;
}

/**
 * The open-model arrival loop shared by open and replay phases: starts this shard's arrivals of
 * `plan` on schedule from `stats.startUs`, or counts them dropped at the in-flight cap; resolves at
 * the planned end with `settled`, which resolves when every started iteration has ended.
 */
export async function runArrivals(plan: ArrivalPlan, stats: PhaseStats, o: OpenExecutorOptions): Promise<{ settled: Promise<void> }> {
  const tickUs = o.tickUs ?? 1000;
  const { total } = plan;
  const startUs = stats.startUs;
  stats.scheduled = shardShare(total, o.shard);
  const cap = Math.max(1, Math.ceil(plan.maxInFlight / o.shard.count));
  // Iterations running: a count, not a set of promises (one promise per iteration, no more).
  let running = 0;
  let allEnded: (() => void) | undefined;
  const ended = (): void => {
    running--;
    o.metrics.iterationEnded(stats);
    if (running === 0) allEnded?.();
  };
  const phaseEndUs = startUs + plan.durationUs;
  let j = o.shard.index - 1;
  while (j < total && !o.signal?.aborted) {
    const dueUs = startUs + plan.dueOffsetUs(j);
    const now = o.scheduler.nowUs();
    if (dueUs > now) {
      await o.scheduler.sleepUntil(Math.max(dueUs, now + tickUs));
      continue;
    }
    // The cap counts every iteration in flight, the previous phases' stragglers too (else a phase
    // boundary runs both phases' caps at once).
    if (o.metrics.inFlight >= cap) o.metrics.iterationDropped(stats, dueUs);
    else {
      o.metrics.iterationStarted(stats, dueUs, now);
      running++;
      o.run({ phaseIndex: o.phaseIndex, phase: stats.name, index: j, vu: -1, intendedUs: dueUs, phaseEndUs }).then(ended, ended);
    }
    j += o.shard.count;
  }
  // Stopped early: only the arrivals that came due were scheduled (the rest are not drops: nothing
  // ran short of capacity for them), so the books still balance.
  if (j < total) stats.scheduled = stats.started + stats.dropped;
  // The phase lasts its duration: the next one starts on its schedule, on every shard alike.
  else if (!o.signal?.aborted) await o.scheduler.sleepUntil(startUs + plan.durationUs);
  // Wrapped: an async function returning the bare promise would wait for it.
  const settled = (running === 0 ? Promise.resolve() : new Promise<void>((resolve) => (allEnded = resolve))).then(() => {
    stats.endUs = o.scheduler.nowUs();
  });
  return { settled };
}
