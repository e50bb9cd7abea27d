/** Delivers each event to every sink, isolated: a sink that throws is counted and reported once; the others still get it. */
import type { TapEvent } from '../model/events.js';
import type { Sink } from '../sinks/sink.js';
import type { Logger } from '../util/logger.js';
import { SayOnce } from '../util/say-once.js';

export class FanOut {
  private readonly sinks: Sink[] = [];
  private readonly thrown: SayOnce;

  constructor(private readonly logger: Logger) {
    this.thrown = new SayOnce((m) => logger.warn(m));
  }

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
        this.thrown.count(sink.name, () => `sink ${sink.name} threw (further errors counted, not logged): ${String(err)}`);
      }
    }
  }

  /** Exceptions the fan-out caught per sink. */
  thrownCounts(): ReadonlyMap<string, number> {
    return this.thrown.totals();
  }

  async flush(): Promise<void> {
    await Promise.all(this.sinks.map((s) => s.flush().catch((e) => this.logger.warn(`sink ${s.name} flush failed: ${String(e)}`))));
  }

  async close(): Promise<void> {
    await Promise.all(this.sinks.map((s) => s.close().catch((e) => this.logger.warn(`sink ${s.name} close failed: ${String(e)}`))));
  }
}
