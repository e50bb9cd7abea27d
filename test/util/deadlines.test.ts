import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DeadlineList, type Deadline } from '../../src/util/deadlines.js';

/** Fake timers drive both the timer and the clock (Date.now is faked too): no real waiting. */
const clock = { nowUs: () => Date.now() * 1000 };

function entry(name: string, expired: string[]): Deadline {
  return { deadlineUs: 0, prevDeadline: undefined, nextDeadline: undefined, armed: false, expire: () => expired.push(name) };
}

describe('DeadlineList', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('expires each entry at its own deadline, not before, and only the ones not removed', () => {
    const expired: string[] = [];
    const list = new DeadlineList(clock);
    const a = entry('a', expired);
    const b = entry('b', expired);
    const c = entry('c', expired);
    list.add(a, 200);
    vi.advanceTimersByTime(50);
    list.add(b, 200); // due at 250
    list.add(c, 100); // due at 150: earlier than the tail, inserted before it
    list.remove(a);
    vi.advanceTimersByTime(99); // t = 149
    expect(expired).toEqual([]);
    vi.advanceTimersByTime(1); // t = 150
    expect(expired).toEqual(['c']);
    vi.advanceTimersByTime(99); // t = 249
    expect(expired).toEqual(['c']);
    vi.advanceTimersByTime(1); // t = 250
    expect(expired).toEqual(['c', 'b']);
    expect([a, b, c].map((d) => d.armed)).toEqual([false, false, false]);
  });

  it('keeps one timer for many entries and re-arms it for the next one', () => {
    const expired: string[] = [];
    const list = new DeadlineList(clock);
    const entries = Array.from({ length: 1000 }, (_, i) => entry(String(i), expired));
    for (const d of entries) list.add(d, 100);
    expect(vi.getTimerCount()).toBe(1);
    for (const d of entries.slice(0, 999)) list.remove(d);
    vi.advanceTimersByTime(200);
    expect(expired).toEqual(['999']);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('close stops the timer: nothing expires after', () => {
    const expired: string[] = [];
    const list = new DeadlineList(clock);
    list.add(entry('x', expired), 10);
    list.close();
    vi.advanceTimersByTime(100);
    expect(expired).toEqual([]);
  });
});
