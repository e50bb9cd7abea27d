/**
 * Replay: the recorded requests of `from:` arrive as they did when recorded, `speed` times faster.
 * Arrival j is due at offset_j / speed after the phase start (offsets from the recording, first
 * request at 0); it runs recorded request j. The arrival loop is the open model's
 * ({@link runArrivals}): latency counts from the due time, and arrivals that find `maxInFlight`
 * iterations running are dropped and counted, so a generator that cannot keep up shows it.
 */
import type { PhaseStats } from '../results/result-parts.js';
import type { ReplayPhase } from '../scenario/scenario.js';
import { runArrivals, type ArrivalPlan, type OpenExecutorOptions } from './open-executor.js';

/** Offsets (µs after the phase start) at which the recorded requests are due at `speed`. */
export function replayOffsetsUs(recordedUs: readonly number[], speed: number): number[] {
  return recordedUs.map((us) => Math.round(us / speed));
}

export async function runReplayPhase(
  phase: ReplayPhase,
  recordedOffsetsUs: readonly number[],
  o: OpenExecutorOptions,
): Promise<{ stats: PhaseStats; settled: Promise<void> }> {
  const due = replayOffsetsUs(recordedOffsetsUs, phase.speed);
  // The span of the arrivals (at least 1 ms, so a one-request recording still has a rate).
  const durationUs = Math.max(1000, due.at(-1) ?? 0);
  const avgRate = due.length / (durationUs / 1e6) / o.shard.count;
  const stats = o.metrics.beginPhase({
    name: phase.name,
    kind: 'replay',
    plannedDurationMs: durationUs / 1000,
    targetFromRate: avgRate,
    targetToRate: avgRate,
    speed: phase.speed,
    startUs: o.scheduler.nowUs(),
  });
  const plan: ArrivalPlan = { total: due.length, dueOffsetUs: (j) => due[j]!, durationUs, maxInFlight: phase.maxInFlight ?? due.length };
  return { stats, ...(await runArrivals(plan, stats, o)) };
}
