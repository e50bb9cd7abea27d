/**
 * Deadlines of many requests on one timer. A load run gives every request the same timeout, so
 * deadlines arrive in order: they are kept in an intrusive doubly linked list (O(1) to add at the
 * tail and to remove on completion, no allocation), and a single timer is armed for the earliest.
 * It fires at that deadline, expires every entry due, and re-arms for the next one: a 200 ms timeout
 * still fires at 200 ms, but a run pays one timer per timeout period instead of one per request.
 */
import type { Clock } from './clock.js';

/** An entry of a {@link DeadlineList}; embed it in the object whose deadline it is (no allocation). */
export interface Deadline {
  deadlineUs: number;
  prevDeadline: Deadline | undefined;
  nextDeadline: Deadline | undefined;
  /** Whether it is in a list (set by the list). */
  armed: boolean;
  /** The deadline passed; the entry is out of the list already. */
  expire(): void;
}

export class DeadlineList {
  private head: Deadline | undefined;
  private tail: Deadline | undefined;
  private timer: NodeJS.Timeout | undefined;
  private timerAtUs = Infinity;

  constructor(private readonly clock: Clock) {}

  /** Arm `d` for `timeoutMs` from now (`nowUs`: the caller's clock read of this instant, if it has one). */
  add(d: Deadline, timeoutMs: number, nowUs = this.clock.nowUs()): void {
    d.deadlineUs = nowUs + timeoutMs * 1000;
    d.armed = true;
    // Walk back from the tail past later deadlines (none when every timeout is the same).
    let after = this.tail;
    while (after && after.deadlineUs > d.deadlineUs) after = after.prevDeadline;
    d.prevDeadline = after;
    d.nextDeadline = after ? after.nextDeadline : this.head;
    if (d.nextDeadline) d.nextDeadline.prevDeadline = d;
    else this.tail = d;
    if (after) after.nextDeadline = d;
    else this.head = d;
    if (this.head === d && d.deadlineUs < this.timerAtUs) this.arm();
  }

  /** Take `d` out (it completed); a no-op when it is not in the list. */
  remove(d: Deadline): void {
    if (!d.armed) return;
    d.armed = false;
    if (d.prevDeadline) d.prevDeadline.nextDeadline = d.nextDeadline;
    else this.head = d.nextDeadline;
    if (d.nextDeadline) d.nextDeadline.prevDeadline = d.prevDeadline;
    else this.tail = d.prevDeadline;
    d.prevDeadline = d.nextDeadline = undefined;
    // The timer is left armed: it fires once, finds a later head, and re-arms for it.
  }

  /** Stop the timer; entries still in the list never expire. */
  close(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAtUs = Infinity;
  }

  private arm(): void {
    clearTimeout(this.timer);
    const head = this.head!;
    this.timerAtUs = head.deadlineUs;
    this.timer = setTimeout(() => this.fire(), Math.max(1, Math.ceil((head.deadlineUs - this.clock.nowUs()) / 1000)));
    this.timer.unref();
  }

  private fire(): void {
    this.timer = undefined;
    this.timerAtUs = Infinity;
    const now = this.clock.nowUs();
    while (this.head && this.head.deadlineUs <= now) {
      const d = this.head;
      this.remove(d);
      d.expire();
    }
    // A timer that fired a little early (ms ticks against a µs clock) re-arms for the rest.
    if (this.head) this.arm();
  }
}
