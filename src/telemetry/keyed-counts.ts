/**
 * The per-event lookup tables of the metrics sinks. {@link KeyedCounts}: counts per attribute set, reported by an observable instrument at
 * collection: the caller names the set with a key it has, so an event costs one Map lookup, not an SDK `add()`'s attribute hashing. Entries live as
 * long as the sink (a series once seen keeps reporting, as an SDK counter's); past `maxEntries` sets, new ones count in one `otel.metric.overflow`
 * entry (method names come off the wire). {@link TupleMap}: a map keyed by a fixed-length tuple of strings (or undefined), as nested Maps: a lookup
 * allocates nothing, where a joined string key is built and hashed per call. Bounded: past `maxEntries`, `set` stores nothing (callers build what
 * they need each time; names come off the wire).
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
}

type Part = string | undefined;
type Level = Map<Part, unknown>;

export class TupleMap<V> {
  private readonly root: Level = new Map();
  /** Entries stored. */
  size = 0;

  constructor(
    private readonly arity: number,
    private readonly maxEntries = 4096,
  ) {}

  get(a: Part, b?: Part, c?: Part, d?: Part, e?: Part): V | undefined {
    let level: Level | undefined = this.root;
    const n = this.arity;
    level = level.get(a) as Level | undefined;
    if (n === 1 || level === undefined) return level as V | undefined;
    level = level.get(b) as Level | undefined;
    if (n === 2 || level === undefined) return level as V | undefined;
    level = level.get(c) as Level | undefined;
    if (n === 3 || level === undefined) return level as V | undefined;
    level = level.get(d) as Level | undefined;
    if (n === 4 || level === undefined) return level as V | undefined;
    return level.get(e) as V | undefined;
  }

  /** Stores `value` unless full; returns `value` either way. */
  set(value: V, a: Part, b?: Part, c?: Part, d?: Part, e?: Part): V {
    if (this.size >= this.maxEntries) return value;
    const parts = [a, b, c, d, e];
    let level = this.root;
    for (let i = 0; i < this.arity - 1; i++) {
      let next = level.get(parts[i]) as Level | undefined;
      if (!next) level.set(parts[i], (next = new Map()));
      level = next;
    }
    if (!level.has(parts[this.arity - 1])) this.size++;
    level.set(parts[this.arity - 1], value);
    return value;
  }
}
