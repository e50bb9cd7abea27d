/** KeyedCounts: one entry per key, attributes built once, bounded with an overflow entry. */
import { describe, expect, it } from 'vitest';
import type { Attributes } from '@opentelemetry/api';
import { KeyedCounts } from '../../src/telemetry/keyed-counts.js';

function observed(c: KeyedCounts): [number, Attributes][] {
  const out: [number, Attributes][] = [];
  c.observe({ observe: (n: number, a?: Attributes) => void out.push([n, a ?? {}]) });
  return out;
}

describe('KeyedCounts', () => {
  it('counts per key and builds the attributes once', () => {
    const c = new KeyedCounts();
    let built = 0;
    const attrs = () => (built++, { m: 'tools/call' });
    c.entry('a', attrs).n++;
    c.entry('a', attrs).n++;
    c.entry('b', () => ({ m: 'ping' })).n--;
    expect(built).toBe(1);
    expect(observed(c)).toEqual([
      [2, { m: 'tools/call' }],
      [-1, { m: 'ping' }],
    ]);
  });

  it('folds new keys past the bound into one overflow entry', () => {
    const c = new KeyedCounts(3);
    for (const k of ['a', 'b', 'c', 'd', 'a']) c.entry(k, () => ({ k })).n++;
    expect(observed(c)).toEqual([
      [2, { k: 'a' }],
      [1, { k: 'b' }],
      [2, { 'otel.metric.overflow': true }],
    ]);
  });
});
