/**
 * `replay --max-slowdown 1.5x,+50ms`: when a method or tool is slower than the recording. Pure.
 * Judged on pairs (the same exchange recorded and replayed, both answered, neither cancelled): a
 * pair is slower when the replay took more than `factor` times the recorded time and more than
 * `floorUs` longer (plus how late the replayer's event loop ran about then: a busy machine slows
 * every process on it). A group is slower when so many of its pairs are that a one-sided sign test
 * rejects "at most half of them would be" at {@link SIGN_TEST_ALPHA}; under 7 pairs no count can,
 * so then every pair must be. Fewer than `minSamples` pairs: no verdict.
 */
import { McptapError } from '../errors.js';
import { parseDurationMs } from '../data-file/duration.js';

export interface SlowdownLimit {
  /** Replayed more than this times the recorded time. */
  factor: number;
  /** ... and more than this much longer (µs): what timing alone moves a call by. */
  floorUs: number;
  /** Fewer timed pairs than this in a group: no verdict. */
  minSamples: number;
}

/**
 * The default floor. The recording is timed by the tap at the pipe, the replay by the replayer's
 * own client, whose event loop adds to what it measures: a tapped replay on 2 busy cores read 0.3
 * to 8 ms more than the tap on the same calls (once 20 ms).
 */
export const DEFAULT_FLOOR_US = 5000;

/** The smallest floor whatever is asked: timer and scheduling jitter. */
export const MIN_FLOOR_US = 1000;

export const DEFAULT_MIN_SAMPLES = 3;

/** The sign test's level (one-sided): as `compare`'s 99% bounds. */
export const SIGN_TEST_ALPHA = 0.01;

/** `1.5x`, `1.5x,+50ms`, `2,+1s`: the factor and, when given, the floor (a duration with its unit, as in scenarios). */
export function parseMaxSlowdown(v: string): { factor: number; floorUs?: number } {
  const bad = () =>
    new McptapError('MCPTAP_BAD_FLAG', `--max-slowdown must be a factor of at least 1 and optionally a floor (1.5x or 1.5x,+50ms), got ${JSON.stringify(v)}`);
  const m = /^\s*(\d+(?:\.\d+)?)x?\s*(?:,\s*\+?([^,]*))?$/i.exec(v);
  if (!m) throw bad();
  const factor = Number(m[1]);
  if (!Number.isFinite(factor) || factor < 1) throw bad();
  if (m[2] === undefined) return { factor };
  // The floor is a duration as scenario files write them (data-file/duration.ts), its unit required.
  const floorMs = /^[\s\d.]*$/.test(m[2]) ? undefined : parseDurationMs(m[2]);
  if (floorMs === undefined) throw bad();
  return { factor, floorUs: floorMs * 1000 };
}

export function slowdownLimit(spec: { factor: number; floorUs?: number }, minSamples = DEFAULT_MIN_SAMPLES): SlowdownLimit {
  return { factor: spec.factor, floorUs: Math.max(MIN_FLOOR_US, spec.floorUs ?? DEFAULT_FLOOR_US), minSamples };
}

/** Whether one pair is slower than the limit allows; `lagUs`: how late the replayer ran about then, added to the floor. */
export function pairSlower(recordedUs: number, replayedUs: number, limit: SlowdownLimit, lagUs = 0): boolean {
  return replayedUs > recordedUs * limit.factor && replayedUs - recordedUs > limit.floorUs + lagUs;
}

/** How many of `n` pairs must be slower for the group to be: the sign test's critical count, or `n`. */
export function slowerNeeded(n: number, alpha = SIGN_TEST_ALPHA): number {
  // P(X >= k) for X ~ Binomial(n, 1/2), from k = n down, while it stays within alpha.
  let tail = 0;
  let choose = 1; // C(n, n)
  let needed = n;
  for (let k = n; k >= 0; k--) {
    tail += choose * 0.5 ** n;
    if (tail > alpha) break;
    needed = k;
    choose = (choose * k) / (n - k + 1); // C(n, k - 1)
  }
  return needed;
}

/** One group's pairs, counted. */
export interface PairedFigures {
  timed: number;
  slower: number;
  recordedP50Us: number;
  replayedP50Us: number;
  /** The median of the pairs' replayed/recorded ratios: the factor as measured. */
  medianRatio: number;
}

export type SlowdownVerdict = { kind: 'slower'; message: string } | { kind: 'too_few' } | { kind: 'ok' };

export function judgeSlowdown(f: PairedFigures, limit: SlowdownLimit): SlowdownVerdict {
  if (f.timed < limit.minSamples) return { kind: 'too_few' };
  if (f.slower < slowerNeeded(f.timed)) return { kind: 'ok' };
  const ms = (us: number) => (us / 1000).toFixed(1);
  return {
    kind: 'slower',
    message:
      `p50 ${ms(f.recordedP50Us)} ms -> ${ms(f.replayedP50Us)} ms (${f.medianRatio.toFixed(2)}x per call, median); ` +
      `${f.slower} of ${f.timed} calls more than ${limit.factor}x and ${ms(limit.floorUs)} ms slower`,
  };
}
