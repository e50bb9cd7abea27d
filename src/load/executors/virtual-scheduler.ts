/**
 * Discrete-event time for deterministic runs: `sleepUntil` parks the caller; {@link run} lets all
 * pending promise work settle (one macrotask turn drains every microtask), then jumps the clock to
 * the earliest parked wake-up and releases it, until the driven promise settles.
 *
 * Invariant: only valid when everything that takes time waits through this scheduler (no real
 * timers; real IO only where virtual time does not matter, e.g. loading files before a run); then
 * results are exactly reproducible, which the shard-merge tests rely on.
 */
import type { Scheduler } from './scheduler.js';

interface Sleeper {
  atUs: number;
  seq: number;
  wake: () => void;
}

export class VirtualScheduler implements Scheduler {
  private now: number;
  private seq = 0;
  private sleepers: Sleeper[] = [];

  constructor(startUs = 1_000_000_000_000) {
    this.now = startUs;
  }

  nowUs(): number {
    return this.now;
  }

  sleepUntil(us: number): Promise<void> {
    if (us <= this.now) return Promise.resolve();
    return new Promise((wake) => {
      // Keep sleepers sorted by (time, arrival order): binary search for the insertion point.
      let lo = 0;
      let hi = this.sleepers.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (this.sleepers[mid]!.atUs <= us) lo = mid + 1;
        else hi = mid;
      }
      this.sleepers.splice(lo, 0, { atUs: us, seq: this.seq++, wake });
    });
  }

  /** Drive virtual time until `work` settles. Bounded by `maxSteps` wake-ups. */
  async run<T>(work: Promise<T>, maxSteps = 10_000_000): Promise<T> {
    let settled = false;
    const done = work.finally(() => (settled = true));
    let idle = 0;
    for (let steps = 0; steps < maxSteps; steps++) {
      await new Promise((r) => setImmediate(r));
      if (settled) return done;
      if (this.sleepers.length === 0) {
        // Real IO (reading a data file, say) may still be pending: wait for it in real time,
        // without moving virtual time; give up after ~5 s of nothing.
        if (++idle > 5000) throw new Error('virtual scheduler: nothing is scheduled but the work has not finished (deadlock)');
        await new Promise((r) => setTimeout(r, 1));
        continue;
      }
      idle = 0;
      const first = this.sleepers[0]!.atUs;
      this.now = first;
      // Release everyone due at this instant, in the order they went to sleep.
      while (this.sleepers.length > 0 && this.sleepers[0]!.atUs === first) this.sleepers.shift()!.wake();
    }
    throw new Error(`virtual scheduler: still running after ${maxSteps} steps`);
  }
}
