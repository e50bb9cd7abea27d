/**
 * A Clock for replaying a recording: "now" is the latest time among the events replayed so far,
 * so anything a sink stamps with `clock.nowUs()` (spans still open when it closes) lands at the
 * recording's own time, not at the time of the replay. Never goes backwards.
 */
import type { TapEvent } from '../model/events.js';
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

/** When the event happened, as the tap saw it. */
export function eventTimeUs(e: TapEvent): number | undefined {
  switch (e.type) {
    case 'frame':
      return e.frame.timeUs;
    case 'exchange-started':
      return e.exchange.startUs;
    case 'exchange-completed':
    case 'exchange-orphaned':
      return e.exchange.endUs ?? e.exchange.transport?.streamEndUs ?? e.exchange.cancel?.timeUs ?? e.exchange.startUs;
    case 'exchange-progress':
      return e.progress.timeUs;
    case 'anomaly':
    case 'connection-opened':
    case 'connection-closed':
      return e.timeUs;
  }
}
