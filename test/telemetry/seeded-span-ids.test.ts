/** SeededSpanIds: deterministic per (seed, name), W3C-shaped, unrelated across seeds and names. */
import { describe, expect, it } from 'vitest';
import { SeededSpanIds } from '../../src/telemetry/seeded-span-ids.js';

describe('SeededSpanIds', () => {
  it('derives the same valid W3C ids from the same seed and name', () => {
    const a = new SeededSpanIds('seed-1');
    const b = new SeededSpanIds('seed-1');
    expect(a.exchange('stdio/c2s/12')).toEqual(b.exchange('stdio/c2s/12'));
    expect(a.session('stdio', 1000)).toEqual(b.session('stdio', 1000));
    const { traceId, spanId } = a.exchange('stdio/c2s/12');
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(spanId).toMatch(/^[0-9a-f]{16}$/);
  });

  it('gives unrelated ids for other seeds, other keys, and a reused connection id opened later', () => {
    const a = new SeededSpanIds('seed-1');
    const ids = [
      a.exchange('stdio/c2s/12'),
      a.exchange('stdio/c2s/13'),
      new SeededSpanIds('seed-2').exchange('stdio/c2s/12'),
      a.session('stdio', 1000),
      a.session('stdio', 1001),
    ];
    expect(new Set(ids.map((i) => i.spanId)).size).toBe(ids.length);
    expect(new Set(ids.map((i) => i.traceId)).size).toBe(ids.length);
  });

  it('makes random seeds of 128 bits', () => {
    const s = SeededSpanIds.randomSeed();
    expect(s).toMatch(/^[0-9a-f]{32}$/);
    expect(SeededSpanIds.randomSeed()).not.toBe(s);
  });
});
