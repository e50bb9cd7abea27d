/**
 * The clock of a text baseline written by `replay --update`: each message is stamped with the time
 * its counterpart was recorded (a step's request, response, cancellation) instead of when it was
 * seen now, and one without a counterpart (progress, initialized, a server request's answer) with
 * its session's latest; so the file holds no time that differs from run to run, and keeps the
 * recorded gaps, latencies and cancellation points.
 */
import type { Clock } from '../util/clock.js';

export class RecordedTimes implements Clock {
  private readonly latest = new Map<string, number>();
  private maxUs: number;

  constructor(private readonly startUs: number) {
    this.maxUs = startUs;
  }

  /** The time to stamp a message of `session` with. */
  at(session: string, recordedUs?: number): number {
    const t = recordedUs ?? this.latest.get(session) ?? this.startUs;
    this.latest.set(session, Math.max(t, this.latest.get(session) ?? t));
    this.maxUs = Math.max(this.maxUs, t);
    return t;
  }

  /** The latest time stamped: where the recording ends. */
  nowUs(): number {
    return this.maxUs;
  }
}

/**
 * A text baseline's connection id for a replay session (`1/connection stdio`): the session's key
 * without the prefixes earlier updates added, so that a baseline updated from itself keeps its ids.
 */
export function baselineConnectionId(sessionKey: string): string {
  return sessionKey.replace(/^(?:\d+\/connection )+(?=\d+\/)/, '');
}
