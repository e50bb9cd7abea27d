/**
 * A Clock for replaying a recording: "now" is the latest time among the events replayed so far,
 * so anything a sink stamps with `clock.nowUs()` (spans still open when it closes) lands at the
 * recording's own time, not at the time of the replay. Never goes backwards.
 */
import { eventTimeUs, type TapEvent } from '../model/events.js';
import type { Clock } from '../util/clock.js';

export class ReplayClock implements Clock {
  private latestUs: number;

  constructor(startUs: number) {
    this.latestUs = startUs;
  }

  nowUs(): number {
    return this.latestUs;
  }

  /** Move to the event's time (if later). */
  observe(event: TapEvent): void {
    const t = eventTimeUs(event);
    if (t !== undefined && t > this.latestUs) this.latestUs = t;
  }
}
