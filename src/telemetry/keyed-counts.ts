/**
 * Counts per attribute set, reported by an observable instrument at collection: the caller names the set with a key it has, so an event costs one
 * Map lookup, not an SDK `add()`'s attribute hashing. Entries live as long as the sink (a series once seen keeps reporting, as an SDK counter's);
 * past `maxEntries` sets, new ones count in one `otel.metric.overflow` entry (method names come off the wire).
 */
import type { Attributes, ObservableResult } from '@opentelemetry/api';

export interface KeyedCount {
  readonly attrs: Attributes;
  n: number;
}

const OVERFLOW_KEY = '\u0000overflow';

export class KeyedCounts {
  private readonly entries = new Map<string, KeyedCount>();

  constructor(private readonly maxEntries = 2000) {}

  /** The entry for `key`, created with `attrs()` on first use (or the overflow entry when full). */
  entry(key: string, attrs: () => Attributes): KeyedCount {
    let e = this.entries.get(key);
    if (e) return e;
    if (this.entries.size >= this.maxEntries - 1) key = OVERFLOW_KEY;
    e = this.entries.get(key);
    if (!e) this.entries.set(key, (e = { attrs: key === OVERFLOW_KEY ? { 'otel.metric.overflow': true } : attrs(), n: 0 }));
    return e;
  }

  observe(result: ObservableResult): void {
    for (const e of this.entries.values()) result.observe(e.n, e.attrs);
  }

  clear(): void {
    this.entries.clear();
  }
}
