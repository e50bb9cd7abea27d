/**
 * RealScheduler keeps its contract on a clock that timers do not agree with: `sleepUntil(us)`
 * resolves only once its clock reads `us` or later. The clock here runs at half the speed of the
 * timers, so every timer fires "early" by that clock (as a setTimeout may fire up to a millisecond
 * before performance.now() reaches its due time).
 */
import { describe, expect, it } from 'vitest';
import { RealScheduler } from '../../src/load/executors/scheduler.js';
import { systemClock, type Clock } from '../../src/util/clock.js';

describe('RealScheduler', () => {
  it('sleepUntil never resolves before its clock reads the target', async () => {
    const startUs = systemClock.nowUs();
    const slow: Clock = { ...systemClock, nowUs: () => startUs + (systemClock.nowUs() - startUs) / 2 };
    const sched = new RealScheduler(slow);
    for (const aheadUs of [500, 3_000, 8_000]) {
      const target = sched.nowUs() + aheadUs;
      await sched.sleepUntil(target);
      expect(sched.nowUs()).toBeGreaterThanOrEqual(target);
    }
    // A moment already passed resolves without waiting for a timer.
    let resolved = false;
    void sched.sleepUntil(sched.nowUs() - 1).then(() => (resolved = true));
    await Promise.resolve();
    await Promise.resolve();
    expect(resolved).toBe(true);
  });
});
