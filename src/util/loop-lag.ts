/**
 * How late this process's event loop runs: a timer every few ms, and how much later than asked it
 * fired. On a busy machine every process waits for a core; the replayer's own lag says how much a
 * call's time may have grown from that alone (the server waits as the replayer does).
 */
import { systemClock, type Clock } from './clock.js';

export class LoopLag {
  private timer: NodeJS.Timeout | undefined;
  private expectedUs = 0;
  /** Lateness (µs) and time of the last samples, a ring. */
  private readonly late: Float64Array;
  private readonly at: Float64Array;
  private next = 0;
  private maxLateUs = 0;

  constructor(
    private readonly everyMs = 5,
    private readonly windowMs = 1000,
    private readonly clock: Clock = systemClock,
  ) {
    const n = Math.ceil(windowMs / everyMs);
    this.late = new Float64Array(n);
    this.at = new Float64Array(n).fill(-Infinity);
  }

  start(): this {
    this.expectedUs = this.clock.nowUs() + this.everyMs * 1000;
    this.timer = setInterval(() => this.tick(), this.everyMs);
    this.timer.unref();
    return this;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** The largest lateness in the last window (µs). */
  recentUs(): number {
    const since = this.clock.nowUs() - this.windowMs * 1000;
    let max = 0;
    for (let i = 0; i < this.late.length; i++) if (this.at[i]! >= since && this.late[i]! > max) max = this.late[i]!;
    return max;
  }

  /** The largest lateness since the start (µs). */
  get maxUs(): number {
    return this.maxLateUs;
  }

  private tick(): void {
    const now = this.clock.nowUs();
    const late = Math.max(0, now - this.expectedUs);
    this.late[this.next] = late;
    this.at[this.next] = now;
    this.next = (this.next + 1) % this.late.length;
    if (late > this.maxLateUs) this.maxLateUs = late;
    this.expectedUs = now + this.everyMs * 1000;
  }
}
