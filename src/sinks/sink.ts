/**
 * The one downstream interface. The recorder, the OTel exporter, live statistics, protocol checks
 * and load thresholds are all sinks.
 *
 * Contract (checked by test/sinks/sink-contract.ts for every sink):
 * - `onEvent` is synchronous, cheap, and never throws; slow work goes behind a bounded queue.
 * - A full queue drops the newest work, counts it in `stats().dropped`, and says so once.
 * - `flush()` pushes everything queued so far to its destination; `close()` flushes and releases
 *   resources. Both are idempotent and safe to call in any order, any number of times.
 */
import type { TapEvent } from '../model/events.js';

export interface SinkStats {
  /** Events accepted. */
  events: number;
  /** Work items dropped because a bounded queue was full or the destination failed. */
  dropped: number;
  /** Errors raised inside the sink (caught by the sink or by the fan-out). */
  errors: number;
}

export interface Sink {
  readonly name: string;
  onEvent(event: TapEvent): void;
  flush(): Promise<void>;
  close(): Promise<void>;
  stats(): SinkStats;
}

export function emptyStats(): SinkStats {
  return { events: 0, dropped: 0, errors: 0 };
}
