import type { Logger } from '../util/logger.js';

/** What the OpenTelemetry span and metrics sinks are both configured with. */
export interface OtelSinkCommonOptions {
  /** Sink name in stats and logs. */
  name?: string;
  /** Requests tracked at once (exchanges awaiting their span, in-flight gauge entries). Default 10,000; beyond it they are not tracked. */
  maxInFlight?: number;
  /** Pushes what was recorded to the exporter (the provider's forceFlush). */
  forceFlush?: () => Promise<void>;
  /** Bounds close()'s final flush: the telemetry's one close deadline (close-deadline.ts). Default: until done. */
  closeWithin?: (flush: Promise<void>) => Promise<unknown>;
  /** Items dropped downstream (queue full, failed exports), added to `stats().dropped`. */
  exportDropped?: () => number;
  logger?: Logger;
}

/** The final flush a sink's close() waits for, no longer than `closeWithin` allows. */
export function closingFlush(opts: OtelSinkCommonOptions, flush: Promise<void>): Promise<unknown> {
  return opts.closeWithin ? opts.closeWithin(flush) : flush;
}
