import { describe, expect, it } from 'vitest';
import { StallSchedule, parseStallSpec, stallDelayMs } from '../../src/reference/stall-schedule.js';
import type { Clock } from '../../src/util/clock.js';

describe('stall schedule', () => {
  const opts = { everyMs: 2000, forMs: 500 };

  it('holds responses during [k*every - for, k*every) until k*every, and never before the first window', () => {
    expect(stallDelayMs(opts, 0)).toBe(0);
    expect(stallDelayMs(opts, 1499)).toBe(0);
    expect(stallDelayMs(opts, 1500)).toBe(500);
    expect(stallDelayMs(opts, 1999)).toBe(1);
    expect(stallDelayMs(opts, 2000)).toBe(0);
    expect(stallDelayMs(opts, 3600)).toBe(400);
    expect(stallDelayMs(opts, -5)).toBe(0);
  });

  it('is anchored at construction time on the injected clock', () => {
    let now = 1_000_000_000;
    const clock: Clock = { nowUs: () => now };
    const schedule = new StallSchedule(opts, clock);
    expect(schedule.anchorEpochMs).toBe(1_000_000);
    now += 1_700_000; // 1700 ms later
    expect(schedule.delayMs()).toBe(300);
    now += 300_000;
    expect(schedule.delayMs()).toBe(0);
  });

  it('parses EVERY_MS:FOR_MS and rejects impossible schedules', () => {
    expect(parseStallSpec('2000:500')).toEqual(opts);
    expect(parseStallSpec(' 10 : 1 ')).toEqual({ everyMs: 10, forMs: 1 });
    for (const bad of ['500:500', '2000:0', '2000', 'a:b', '2000:-1', '']) expect(parseStallSpec(bad)).toBeUndefined();
    expect(() => new StallSchedule({ everyMs: 100, forMs: 100 }, { nowUs: () => 0 })).toThrow(RangeError);
  });
});
