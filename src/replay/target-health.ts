/**
 * How a replay's target is doing: its first failure (said once, as the report's `failure`), whether
 * it is gone for good (refused, unresolvable, hung: nothing more is sent), and the steps not sent.
 */
import type { TransportErrorClass } from '../util/network-error.js';

/** Transport errors that say nothing listens at the target. */
const UNREACHABLE: ReadonlySet<TransportErrorClass> = new Set(['connection_refused', 'dns']);

/** This many requests timing out in a row, none answered between them: the target is hung. */
export const HUNG_AFTER_TIMEOUTS = 3;

export class TargetHealth {
  /** The first reason the target failed, one line. */
  failure: string | undefined;
  /** Why nothing more is sent: the target refused a connection, does not resolve, or hangs. */
  gone: string | undefined;
  /** Whether the target answered anything at all. */
  reached = false;
  notSent = 0;
  /** Requests timed out since the last answer. */
  private timeoutsInARow = 0;

  answered(): void {
    this.reached = true;
    this.timeoutsInARow = 0;
  }

  /** A request failed at the transport, for `why`. */
  failed(errorClass: TransportErrorClass, why: string): void {
    this.failure ??= why;
    if (UNREACHABLE.has(errorClass)) this.gone ??= why;
    if (errorClass === 'timeout' && ++this.timeoutsInARow >= HUNG_AFTER_TIMEOUTS) this.gone ??= `${why} (${HUNG_AFTER_TIMEOUTS} requests in a row)`;
  }

  /** A step not sent, for `why`: what its answer says (the reason itself only the first time). */
  skipped(why: string): string {
    this.notSent++;
    const said = this.failure !== undefined;
    this.failure ??= why;
    return said ? 'not sent: the target had failed' : `not sent: ${why}`;
  }
}
