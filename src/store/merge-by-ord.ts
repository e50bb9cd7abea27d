/**
 * Merges sources that each give events in ascending ordinal order into one stream in ordinal order.
 * Ordinals are unique across sources within a recording, so ties do not arise; if they did, the
 * earlier source in the list wins. Every source is peeked before each event is taken, so a source
 * whose next event depends on what another has read (exchange-events.ts) is asked afresh each time.
 */
import type { TapEvent } from '../model/events.js';
import type { Row } from './rows.js';

export interface OrdSource {
  /** The ordinal of the next event; undefined when the source is done. */
  peek(): number | undefined;
  /** The next event (only after peek gave an ordinal). */
  take(): TapEvent;
  /** Ends the source early (frees its statements). */
  close(): void;
}

/** A cursor whose rows are ascending in column `ord`, each made into one event. */
export class CursorSource implements OrdSource {
  private head: IteratorResult<Row> | undefined;

  constructor(
    private readonly rows: Iterator<Row>,
    private readonly ord: string,
    private readonly toEvent: (row: Row) => TapEvent,
  ) {}

  peek(): number | undefined {
    const h = (this.head ??= this.rows.next());
    return h.done ? undefined : (h.value[this.ord] as number);
  }

  take(): TapEvent {
    const row = this.head!.value as Row;
    this.head = undefined;
    return this.toEvent(row);
  }

  close(): void {
    this.rows.return?.();
  }
}

export function* mergeByOrd(sources: readonly OrdSource[]): Generator<TapEvent> {
  try {
    for (;;) {
      let best = -1;
      let bestOrd = Infinity;
      for (let i = 0; i < sources.length; i++) {
        const ord = sources[i]!.peek();
        if (ord !== undefined && (best < 0 || ord < bestOrd)) ((best = i), (bestOrd = ord));
      }
      if (best < 0) return;
      yield sources[best]!.take();
    }
  } finally {
    // A consumer that stops early must not leave statements busy (the connection could not write).
    for (const s of sources) s.close();
  }
}
