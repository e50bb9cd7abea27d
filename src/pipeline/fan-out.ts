/**
 * Delivers each event to every sink, isolating them from each other and from the pipeline: a
 * sink that throws is counted and reported once, and the others still get the event.
 */
import type { TapEvent } from '../model/events.js';
import type { Sink } from '../sinks/sink.js';
import type { Logger } from '../util/logger.js';

export class FanOut {
  private readonly sinks: Sink[] = [];
  private readonly thrown = new Map<string, number>();

  constructor(private readonly logger: Logger) {}

  add(sink: Sink): () => void {
    this.sinks.push(sink);
    return () => {
      const i = this.sinks.indexOf(sink);
      if (i >= 0) this.sinks.splice(i, 1);
    };
  }

  list(): readonly Sink[] {
    return this.sinks;
  }

  emit(event: TapEvent): void {
    for (const sink of this.sinks) {
      try {
        sink.onEvent(event);
      } catch (err) {
        const n = (this.thrown.get(sink.name) ?? 0) + 1;
        this.thrown.set(sink.name, n);
        if (n === 1) this.logger.warn(`sink ${sink.name} threw (further errors counted, not logged): ${String(err)}`);
      }
    }
  }

  /** Exceptions the fan-out caught per sink. */
  thrownCounts(): ReadonlyMap<string, number> {
    return this.thrown;
  }

  async flush(): Promise<void> {
    await Promise.all(this.sinks.map((s) => s.flush().catch((e) => this.logger.warn(`sink ${s.name} flush failed: ${String(e)}`))));
  }

  async close(): Promise<void> {
    await Promise.all(this.sinks.map((s) => s.close().catch((e) => this.logger.warn(`sink ${s.name} close failed: ${String(e)}`))));
  }
}
