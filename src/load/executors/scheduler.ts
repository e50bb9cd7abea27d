/**
 * Time for the executors: read the clock, wait until a moment. Injected so that executors can be
 * driven by real time or, in tests and simulations, by {@link VirtualScheduler}.
 */
import { systemClock, type Clock } from '../../util/clock.js';

export interface Scheduler {
  nowUs(): number;
  /** Resolves at or after `us`; immediately (next microtask) when `us` has passed. */
  sleepUntil(us: number): Promise<void>;
}

/**
 * Real time. Timers are coarse (setTimeout, ms resolution): the open executor wakes at most once
 * per tick and starts every arrival that came due, each with its own exact intended time, so the
 * lateness a tick adds is measured, never hidden.
 */
export class RealScheduler implements Scheduler {
  constructor(private readonly clock: Clock = systemClock) {}

  nowUs(): number {
    return this.clock.nowUs();
  }

  async sleepUntil(us: number): Promise<void> {
    // A timer may fire up to a millisecond before the clock reads `us`: wait again until it does.
    for (let i = 0; i < 100; i++) {
      const ms = (us - this.clock.nowUs()) / 1000;
      if (ms <= 0) return;
      await new Promise((resolve) => setTimeout(resolve, Math.max(1, Math.floor(ms))));
    }
  }
}
