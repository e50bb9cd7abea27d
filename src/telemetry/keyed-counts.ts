/**
 * Counts per attribute set, kept by the sink and reported through an observable instrument at
 * collection time. An SDK `add()` hashes its attributes on every call (sort + JSON.stringify);
 * here the caller names the set with a cheap key it already has, so the per-event cost is one Map
 * lookup. Entries are never removed while the sink lives (a series, once seen, keeps reporting,
 * as an SDK counter's would).
 *
 * Bounded like the SDK's own storage: past `maxEntries` attribute sets (method names come off the
 * wire), new sets are counted in one `otel.metric.overflow` entry.
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
