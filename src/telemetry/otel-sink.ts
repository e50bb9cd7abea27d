/** What the OpenTelemetry span and metrics sinks share: their options, stats, errors said once, and a final flush under the close deadline. */
import type { TapEvent } from '../model/events.js';
import { emptyStats, type Sink, type SinkStats } from '../sinks/sink.js';
import { silentLogger, type Logger } from '../util/logger.js';
import { SayOnce } from '../util/say-once.js';

export interface OtelSinkCommonOptions {
  /** Pushes what was recorded to the exporter (the provider's forceFlush). */
  forceFlush?: () => Promise<void>;
  /** Bounds close()'s final flush: the telemetry's one close deadline (close-deadline.ts). Default: until done. */
  closeWithin?: (flush: Promise<void>) => Promise<unknown>;
  /** Items dropped downstream (queue full, failed exports), added to `stats().dropped`. */
  exportDropped?: () => number;
  logger?: Logger;
}

/** Requests tracked at once (exchanges awaiting their span, in-flight gauge entries); beyond it they are not tracked. */
export const MAX_IN_FLIGHT = 10_000;

export abstract class OtelSink<O extends OtelSinkCommonOptions> implements Sink {
  protected readonly logger: Logger;
  protected readonly counts = emptyStats();
  protected closed = false;
  private readonly errorsSaid: SayOnce;

  constructor(
    readonly name: string,
    /** `otel span sink`: how its errors are reported. */
    private readonly what: string,
    protected readonly opts: O,
  ) {
    this.logger = opts.logger ?? silentLogger;
    this.errorsSaid = new SayOnce((m) => this.logger.warn(m));
  }

  abstract onEvent(event: TapEvent): void;
  abstract close(): Promise<void>;

  async flush(): Promise<void> {
    await this.opts.forceFlush?.().catch((e) => this.error(e));
  }

  stats(): SinkStats {
    return { ...this.counts, dropped: this.counts.dropped + (this.opts.exportDropped?.() ?? 0) };
  }

  /** The final flush close() waits for, no longer than `closeWithin` allows. */
  protected closingFlush(): Promise<unknown> {
    const flush = this.flush();
    return this.opts.closeWithin ? this.opts.closeWithin(flush) : flush;
  }

  protected error(err: unknown): void {
    this.counts.errors = this.errorsSaid.count('error', () => `${this.what} error (further errors counted, not logged): ${String(err)}`);
  }
}
