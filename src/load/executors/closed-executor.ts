/**
 * Closed model: `vus` virtual users, each running its iterations back to back with think time in
 * between. A VU's iteration k is intended to start when the VU became ready (the end of iteration
 * k−1 plus its think time); late wake-ups are therefore measured.
 *
 * Invariants: shard i of n runs the VUs v ≡ i−1 (mod n); iteration k of VU v has the phase-wide
 * index k·vus + v, so data rows, step choices and randomness match one big run's. No iteration
 * starts after the phase's duration has elapsed.
 */
import type { ClosedPhase } from '../scenario/scenario.js';
import type { LoadMetrics } from '../results/metrics.js';
import type { PhaseStats } from '../results/result-parts.js';
import { iterationRandom, SALT } from '../scenario/random.js';
import type { Scheduler } from './scheduler.js';
import type { IterationRunner, IterationSlot, ShardSpec } from './iteration.js';

export interface ClosedExecutorOptions {
  scheduler: Scheduler;
  metrics: LoadMetrics;
  phaseIndex: number;
  shard: ShardSpec;
  seed: number;
  run: IterationRunner;
  signal?: AbortSignal;
}

export function shardVus(vus: number, shard: ShardSpec): number[] {
  const out: number[] = [];
  for (let v = shard.index - 1; v < vus; v += shard.count) out.push(v);
  return out;
}

export async function runClosedPhase(phase: ClosedPhase, o: ClosedExecutorOptions): Promise<PhaseStats> {
  const startUs = o.scheduler.nowUs();
  const stats = o.metrics.beginPhase({ name: phase.name, kind: 'closed', plannedDurationMs: phase.durationMs, startUs });
  const vus = shardVus(phase.vus, o.shard);
  if (phase.iterations !== undefined) stats.scheduled = vus.length * phase.iterations;
  const endUs = phase.durationMs !== undefined ? startUs + phase.durationMs * 1000 : Infinity;
  await Promise.all(vus.map((vu) => runVu(phase, o, stats, vu, startUs, endUs)));
  // Without an iteration count, stopped early, or ended by its duration first: what was scheduled
  // is what started (a closed model drops nothing; it only has a cap, which counted against
  // `dropped` would dilute an open phase's real drops to nothing).
  if (phase.iterations === undefined || o.signal?.aborted || stats.started < stats.scheduled) stats.scheduled = stats.started;
  stats.endUs = o.scheduler.nowUs();
  return stats;
}

async function runVu(phase: ClosedPhase, o: ClosedExecutorOptions, stats: PhaseStats, vu: number, startUs: number, endUs: number): Promise<void> {
  let readyUs = startUs;
  const limit = phase.iterations ?? Infinity;
  for (let k = 0; k < limit && !o.signal?.aborted; k++) {
    const index = k * phase.vus + vu;
    // No think time: ready now, without a turn through an already resolved promise, and the
    // clock read that ended the last iteration is this one's start (nothing ran in between).
    let now = readyUs;
    const think = k > 0 ? thinkUs(phase, o.seed, o.phaseIndex, index) : 0;
    if (think > 0) {
      readyUs += think;
      await o.scheduler.sleepUntil(readyUs);
    }
    if (k === 0 || think > 0) now = o.scheduler.nowUs();
    if (readyUs >= endUs || now >= endUs) break;
    o.metrics.iterationStarted(stats, readyUs, now);
    try {
      // No object spread: once per iteration, and slow on Node 20's V8.
      const slot: IterationSlot = { phaseIndex: o.phaseIndex, phase: phase.name, index, vu, intendedUs: readyUs };
      if (endUs < Infinity) slot.phaseEndUs = endUs;
      await o.run(slot);
    } catch {
      // an iteration that throws is the runner's bug, already reported there; keep the VU going
    } finally {
      o.metrics.iterationEnded(stats);
    }
    readyUs = o.scheduler.nowUs();
  }
}

function thinkUs(phase: ClosedPhase, seed: number, phaseIndex: number, index: number): number {
  const { minMs, maxMs } = phase.thinkTime;
  if (maxMs <= 0) return 0;
  const r = maxMs > minMs ? iterationRandom(seed, phaseIndex, index, SALT.think)() : 0;
  return Math.round((minMs + r * (maxMs - minMs)) * 1000);
}
