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
 * The epoch time of one monotonic instant, exact to a microsecond or two: the instant Date.now()
 * turns to its next millisecond, bracketed by monotonic reads. Not `performance.timeOrigin`: it is
 * fixed at process start-up, and on a loaded machine a fresh process read 10 ms off Date.now()
 * through it, in every figure; nor Date.now() alone (truncated to the millisecond). Spins up to
 * 1 ms per try; a try descheduled mid-read (wider than 2 µs) is tried again, up to 20 tries.
 */
function anchorNow(): ClockOrigin {
  let best: ClockOrigin | undefined;
  let narrowest = BigInt(Number.MAX_SAFE_INTEGER);
  for (let attempt = 0; attempt < 20 && narrowest > 2_000n; attempt++) {
    // The millisecond turns after the last Date.now() that read `start` (so after `lo`, read just
    // before that call) and before the first that read the next (so before the read after the loop).
    let lo = process.hrtime.bigint();
    const start = Date.now();
    let ms = start;
    let readAt = lo;
    while (ms === start) {
      lo = readAt;
      readAt = process.hrtime.bigint();
      ms = Date.now();
    }
    const width = process.hrtime.bigint() - lo;
    if (width < narrowest) [narrowest, best] = [width, { epochUs: ms * 1000, hrNs: lo + width / 2n }];
  }
  return best!;
}

export function clockFromOrigin(o: ClockOrigin): Clock {
  const { epochUs, hrNs } = o;
  return { nowUs: () => epochUs + Number((process.hrtime.bigint() - hrNs) / 1000n) };
}

export const systemClock: Clock = clockFromOrigin(systemClockOrigin);
