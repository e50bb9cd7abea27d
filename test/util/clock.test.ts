import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/util/clock.js';

describe('systemClock', () => {
  // Cross-process figures (a server's stamp against mcptap's arrival time) need the epoch anchor
  // exact, not truncated to Date.now()'s millisecond. Date.now() floors the true time, so an exact
  // clock read just before it is at most 1 ms ahead of it, and one read just after is never behind.
  it('agrees with Date.now() to the microsecond, not only the millisecond', () => {
    let tight = 0;
    let lowest = Infinity;
    let highest = -Infinity;
    for (let i = 0; i < 200_000 && tight < 20_000; i++) {
      const before = systemClock.nowUs();
      const ms = Date.now();
      const after = systemClock.nowUs();
      if (after - before > 20) continue; // descheduled between the reads: says nothing
      tight++;
      lowest = Math.min(lowest, after - ms * 1000);
      highest = Math.max(highest, before - ms * 1000);
    }
    expect(tight).toBeGreaterThan(1000);
    expect(lowest).toBeGreaterThanOrEqual(-50);
    expect(highest).toBeLessThan(1050);
  });
});
