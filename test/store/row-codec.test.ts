/** packRows/unpackRows: the writer thread gets exactly what JSON used to give it, cheaper. */
import { describe, expect, it } from 'vitest';
import { packRows, unpackRows, isPackedRows } from '../../src/store/row-codec.js';
import type { Value } from '../../src/store/row-helpers.js';

describe('row codec', () => {
  it('unpacks what JSON.parse(JSON.stringify(rows)) would give, for every kind of value', () => {
    const odd = [NaN, Infinity, -Infinity, -0, undefined, true, { a: [1, 'x'] }, Buffer.from('ab')] as unknown as Value[];
    const rows: Value[][] = [
      [1, 'c1', 'stdio', 1_767_225_600_000_123, 0.5, -3, null, '', 'ünïcødé ✓ \u0000 "quoted" \\ \n', 'c1'],
      [],
      odd,
      ['c1', 'c1/c2s/1', 2 ** 53 - 1, Number.MIN_VALUE, 'c1/c2s/1'],
    ];
    const packed = packRows(rows);
    expect(isPackedRows(packed)).toBe(true);
    expect(isPackedRows(rows)).toBe(false);
    expect(unpackRows(packed)).toEqual(JSON.parse(JSON.stringify(rows)));
    expect(Object.is(unpackRows(packed)[2]![3], 0)).toBe(true); // -0 comes back as JSON gives it: 0
    // Repeated texts travel once.
    expect(JSON.parse(packed.texts)).toHaveLength(new Set(['c1', 'stdio', '', 'ünïcødé ✓ \u0000 "quoted" \\ \n', 'c1/c2s/1']).size + 3);
  });

  it('survives a structured clone (the thread boundary), typed arrays and all', () => {
    const rows: Value[][] = [[1, 'a', null], [2, 'b', 3.25]];
    expect(unpackRows(structuredClone(packRows(rows)))).toEqual(rows);
  });
});
