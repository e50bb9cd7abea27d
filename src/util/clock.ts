/**
 * Wall-clock time in microseconds since the Unix epoch, with sub-millisecond resolution from the
 * monotonic clock. Injected wherever time is read so tests can control it.
 */
export interface Clock {
  nowUs(): number;
}

/**
 * Where a system clock's wall time is anchored: the epoch time at one monotonic instant. Threads
 * of one process share the monotonic clock, so a worker built from the main thread's origin reads
 * the same time as the main thread (its own Date.now() anchor could differ by a millisecond).
 */
export interface ClockOrigin {
  epochUs: number;
  hrNs: bigint;
}

export const systemClockOrigin: ClockOrigin = anchorNow();

/**
 * The epoch time of this instant from `performance.timeOrigin + performance.now()` (µs-exact),
 * not `Date.now()`: that one is truncated to the millisecond, so two processes' clocks disagreed
 * by up to 1 ms, which is all of a 2 ms budget for cross-process figures (delivery delay).
 */
function anchorNow(): ClockOrigin {
  performance.now(); // the first read loads perf_hooks (milliseconds): not between the two reads below
  const epochUs = Math.round((performance.timeOrigin + performance.now()) * 1000);
  return { epochUs, hrNs: process.hrtime.bigint() };
}

export function clockFromOrigin(o: ClockOrigin): Clock {
  const { epochUs, hrNs } = o;
  return { nowUs: () => epochUs + Number((process.hrtime.bigint() - hrNs) / 1000n) };
}

export const systemClock: Clock = clockFromOrigin(systemClockOrigin);
