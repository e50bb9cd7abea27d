/**
 * The reference server's deliberate stalls, used to test coordinated-omission correction.
 *
 * Invariant: the schedule is a pure function of time since its anchor (the server start), so a
 * load test that knows the anchor and the two numbers can compute exactly which requests were
 * held and for how long. With `{everyMs: E, forMs: F}` every response that would leave the
 * server during `[k·E − F, k·E)` (k = 1, 2, …; times relative to the anchor) is held until
 * `k·E`. The first `E − F` ms after start are never stalled, so startup handshakes go through.
 */
import type { Clock } from '../util/clock.js';

export interface StallOptions {
  /** Period of the schedule in ms (> forMs). */
  everyMs: number;
  /** Length of the stall at the end of every period, in ms (> 0). */
  forMs: number;
}

export class StallSchedule {
  private readonly anchorUs: number;

  constructor(
    readonly options: StallOptions,
    private readonly clock: Clock,
  ) {
    validateStall(options);
    this.anchorUs = clock.nowUs();
  }

  /** Wall-clock epoch ms the schedule is anchored at (windows are relative to this). */
  get anchorEpochMs(): number {
    return this.anchorUs / 1000;
  }

  /** How long a response leaving now must wait; 0 outside a stall window. */
  delayMs(nowUs: number = this.clock.nowUs()): number {
    return stallDelayMs(this.options, (nowUs - this.anchorUs) / 1000);
  }
}

/** Delay for a response leaving `elapsedMs` after the anchor (pure; see module invariant). */
export function stallDelayMs(opts: StallOptions, elapsedMs: number): number {
  if (elapsedMs < 0) return 0;
  const phase = elapsedMs % opts.everyMs;
  const windowStart = opts.everyMs - opts.forMs;
  return phase >= windowStart ? opts.everyMs - phase : 0;
}

export function validateStall(opts: StallOptions): void {
  const ok = Number.isFinite(opts.everyMs) && Number.isFinite(opts.forMs) && opts.forMs > 0 && opts.everyMs > opts.forMs;
  if (!ok) throw new RangeError(`stall needs 0 < forMs < everyMs, got everyMs=${opts.everyMs} forMs=${opts.forMs}`);
}

/** Parse the CLI form `EVERY_MS:FOR_MS`, e.g. `2000:500`. Returns undefined when malformed. */
export function parseStallSpec(spec: string): StallOptions | undefined {
  const m = /^\s*(\d+)\s*:\s*(\d+)\s*$/.exec(spec);
  if (!m) return undefined;
  const opts = { everyMs: Number(m[1]), forMs: Number(m[2]) };
  try {
    validateStall(opts);
  } catch {
    return undefined;
  }
  return opts;
}
