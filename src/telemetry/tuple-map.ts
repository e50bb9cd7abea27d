/**
 * A map keyed by a fixed-length tuple of strings (or undefined), as nested Maps: a lookup allocates nothing, where a joined string key is built and
 * hashed per call. Bounded: past `maxEntries`, `set` stores nothing (callers build what they need each time; names come off the wire).
 */
type Part = string | undefined;
type Level = Map<Part, unknown>;

export class TupleMap<V> {
  private readonly root: Level = new Map();
  private count = 0;

  constructor(
    private readonly arity: number,
    private readonly maxEntries = 4096,
  ) {}

  get size(): number {
    return this.count;
  }

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
    if (this.count >= this.maxEntries) return value;
    const parts = [a, b, c, d, e];
    let level = this.root;
    for (let i = 0; i < this.arity - 1; i++) {
      let next = level.get(parts[i]) as Level | undefined;
      if (!next) level.set(parts[i], (next = new Map()));
      level = next;
    }
    if (!level.has(parts[this.arity - 1])) this.count++;
    level.set(parts[this.arity - 1], value);
    return value;
  }

  clear(): void {
    this.root.clear();
    this.count = 0;
  }
}
