/**
 * Merges cursors that are each sorted by an ordinal column into one stream in ordinal order.
 * Ordinals are unique across sources within a recording, so ties do not arise; if they did, the
 * earlier source in the list wins.
 */
import type { TapEvent } from '../model/events.js';
import type { Row } from './rows.js';

export interface OrdSource {
  rows: Iterator<Row>;
  /** Column holding the ordinal; rows arrive ascending in it. */
  ord: string;
  toEvent(row: Row): TapEvent;
}

export function* mergeByOrd(sources: readonly OrdSource[]): Generator<TapEvent> {
  const heads = sources.map((s) => s.rows.next());
  try {
    for (;;) {
      let best = -1;
      let bestOrd = Infinity;
      for (let i = 0; i < heads.length; i++) {
        const h = heads[i]!;
        if (h.done) continue;
        const ord = h.value[sources[i]!.ord] as number;
        if (best < 0 || ord < bestOrd) ((best = i), (bestOrd = ord));
      }
      if (best < 0) return;
      const row = heads[best]!.value as Row;
      heads[best] = sources[best]!.rows.next();
      yield sources[best]!.toEvent(row);
    }
  } finally {
    // A consumer that stops early must not leave statements busy (the connection could not write).
    for (const s of sources) s.rows.return?.();
  }
}
