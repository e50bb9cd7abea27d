/**
 * ShapedInsert: whatever the shapes, chunks and failures, rows are stored exactly as one plain
 * single-row INSERT (or upsert) per row would store them, in order, a refused row alone.
 */
import BetterSqlite3, { type Database } from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Value } from '../../src/store/row-helpers.js';
import { ShapedInsert, type ShapedTable } from '../../src/store/shaped-insert.js';

const COLS = ['k', 'kind', 'n', 'note', 'flag', 'extra'] as const;
const SCHEMA = `CREATE TABLE t (id INTEGER PRIMARY KEY, k TEXT NOT NULL UNIQUE, kind TEXT NOT NULL, n INTEGER, note TEXT, flag INTEGER NOT NULL DEFAULT 0, extra BLOB);
  CREATE INDEX t_kind ON t (kind, n);`;
const UPSERT =
  'ON CONFLICT (k) DO UPDATE SET kind = excluded.kind, n = excluded.n, note = COALESCE(excluded.note, t.note), flag = excluded.flag, extra = excluded.extra';
const SPEC: ShapedTable = {
  table: 't',
  cols: COLS,
  omittable: ['n', 'note', 'extra'],
  literals: { kind: ['a', 'b', 'c/d-e.f'], flag: [0, 1] },
  upsert: UPSERT,
  learn: { note: 3, n: 2, kind: 2 }, // the first few plain values met become literals too (never "it's")
};

let shaped: Database;
let plain: Database;
beforeEach(() => {
  prepared = [];
  shaped = new BetterSqlite3(':memory:');
  plain = new BetterSqlite3(':memory:');
  for (const db of [shaped, plain]) db.exec(SCHEMA);
});
afterEach(() => {
  shaped.close();
  plain.close();
});

/** The reference: one full single-row upsert per row, refusals counted the same way. */
function reference(rows: Value[][], upsert = UPSERT): { ids: (number | undefined)[]; refused: number[] } {
  const stmt = plain.prepare(`INSERT INTO t (${COLS.join(', ')}) VALUES (${COLS.map(() => '?').join(', ')}) ${upsert}`);
  const refused: number[] = [];
  const ids = plain.transaction(() =>
    rows.map((r, i) => {
      try {
        return Number(stmt.run(r).lastInsertRowid);
      } catch {
        refused.push(i);
        return undefined;
      }
    }),
  )();
  return { ids, refused };
}

/** Statements ShapedInsert prepared, as the number of rows each inserts. */
let prepared: number[] = [];

function viaShaped(
  rows: Value[][],
  spec: ShapedTable = SPEC,
  ins = new ShapedInsert(spied(), spec),
): { ids: (number | undefined)[]; refused: number[]; errors: Error[] } {
  const refused: number[] = [];
  const errors: Error[] = [];
  const ids = shaped.transaction(() => ins.insert(rows, (i, err) => (refused.push(i), errors.push(err))))();
  return { ids, refused, errors };
}

function spied(): Database {
  const prepare = shaped.prepare.bind(shaped);
  // The connection itself, but for a prepare() that notes how many rows each INSERT writes.
  return Object.assign(Object.create(shaped) as Database, {
    prepare: (sql: string) => {
      if (sql.startsWith('INSERT')) prepared.push(sql.split('), (').length);
      return prepare(sql);
    },
  });
}

const dump = (db: Database) => db.prepare('SELECT *, typeof(n) tn, typeof(flag) tf, typeof(extra) te FROM t ORDER BY id').all();

/** Rows of many shapes, repeating so that multi-row statements get made and used. */
function mixedRows(count: number, from = 0): Value[][] {
  const kinds: Value[] = ['a', 'b', 'c/d-e.f', 'other', "it's"];
  return Array.from({ length: count }, (_, j) => {
    const i = from + j;
    return [`k${i}`, kinds[i % 5]!, i % 3 === 0 ? null : i * 1000, i % 4 === 0 ? null : `n${i % 7}`, i % 2, i % 6 === 0 ? Buffer.from([i & 255, 0, 1]) : null];
  });
}

describe('ShapedInsert', () => {
  it('stores rows of every shape exactly as plain single-row inserts do, in order, with their ids', () => {
    const rows = mixedRows(300);
    const got = viaShaped(rows);
    expect(got.refused).toEqual([]);
    expect(got.ids).toEqual(reference(rows).ids);
    expect(dump(shaped)).toEqual(dump(plain));
    // Sequences of shapes that recur got multi-row statements (8 rows, or fewer where 8 did not recur).
    expect(prepared.filter((n) => n > 1).length).toBeGreaterThan(0);
    expect(prepared.length).toBeLessThanOrEqual(96 + 1);
  });

  it('a row refused inside a multi-row statement: the rows before it stay, it is refused alone, the rest follow', () => {
    const spec: ShapedTable = { ...SPEC, upsert: undefined }; // a plain table: a repeated key is a row error
    const ins = new ShapedInsert(spied(), spec);
    const same = (i: number): Value[] => [`s${i}`, 'a', i, 'x', 0, null]; // one shape: chunks of 8 get a statement
    viaShaped(
      Array.from({ length: 40 }, (_, i) => same(i)),
      spec,
      ins,
    );
    expect(prepared).toContain(8);
    const rows = Array.from({ length: 40 }, (_, i) => same(100 + i));
    rows[11] = same(3); // a key already stored, in the middle of the second chunk
    rows[12] = same(100 + 11); // and one repeated within the batch
    rows[13] = same(100 + 11);
    const got = viaShaped(rows, spec, ins);
    reference(
      Array.from({ length: 40 }, (_, i) => same(i)),
      '',
    );
    const want = reference(rows, '');
    expect(got.refused).toEqual([11, 13]);
    expect(got.refused).toEqual(want.refused);
    expect(got.errors.map((e) => (e as { code?: string }).code)).toEqual(['SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_CONSTRAINT_UNIQUE']);
    expect(got.ids).toEqual(want.ids);
    expect(dump(shaped)).toEqual(dump(plain));
  });

  it('a key met again inside a multi-row statement is updated through the upsert, the rows around it inserted', () => {
    const ins = new ShapedInsert(spied(), SPEC);
    const row = (i: number, n: number): Value[] => [`u${i}`, 'b', n, null, 1, null];
    const first = Array.from({ length: 48 }, (_, i) => row(i, i));
    const second = Array.from({ length: 48 }, (_, i) => row(i % 5 === 2 ? i : 100 + i, 1000 + i)); // every 5th key exists
    viaShaped(first, SPEC, ins);
    const got = viaShaped(second, SPEC, ins);
    reference(first);
    reference(second);
    expect(got.refused).toEqual([]);
    expect(dump(shaped)).toEqual(dump(plain));
  });

  it('refuses a bad row alone, in the middle of a chunk or alone, keeping the rows around it', () => {
    const rows = mixedRows(64);
    rows[5]![1] = null; // NOT NULL kind, inside the first chunks
    rows[20]![0] = null;
    rows[63]![1] = null; // the last row
    const all = [...rows, ...mixedRows(64, 64), ...mixedRows(64, 0)]; // then 64 more, then the first 64 keys again (upserts)
    const got = viaShaped(all);
    const want = reference(all);
    expect(got.refused).toEqual(want.refused);
    expect(got.refused).toEqual([5, 20, 63]);
    expect(got.errors.map((e) => (e as { code?: string }).code)).toEqual([
      'SQLITE_CONSTRAINT_NOTNULL',
      'SQLITE_CONSTRAINT_NOTNULL',
      'SQLITE_CONSTRAINT_NOTNULL',
    ]);
    expect(got.ids.slice(0, 128)).toEqual(want.ids.slice(0, 128));
    expect(dump(shaped)).toEqual(dump(plain));
  });

  it('a key that exists already is updated through the upsert, whether sent alone or met in a chunk', () => {
    const first = mixedRows(40);
    const again = mixedRows(40).map((r, i) => [r[0]!, 'b', 7 + i, null, 1, null]);
    for (const alone of [undefined, (v: readonly Value[]) => v[2] === 7]) {
      shaped.exec('DELETE FROM t');
      plain.exec('DELETE FROM t');
      viaShaped(first);
      const got = viaShaped(again, { ...SPEC, ...(alone ? { alone } : {}) });
      reference(first);
      reference(again);
      expect(got.refused).toEqual([]);
      expect(dump(shaped)).toEqual(dump(plain));
    }
  });

  it('past its bounds on shapes and statements, still stores rows exactly', () => {
    const many = Array.from({ length: 600 }, (_, i): Value[] => [
      `m${i}`,
      i % 3 === 0 ? 'a' : `kind${i % 97}`,
      (i & 1) === 0 ? null : i,
      (i & 2) === 0 ? null : 'x',
      (i >> 2) & 1,
      (i & 8) === 0 ? null : Buffer.from('z'),
    ]);
    // Enough literal values to make hundreds of shapes.
    const spec: ShapedTable = { ...SPEC, literals: { kind: Array.from({ length: 97 }, (_, k) => `kind${k}`), flag: [0, 1] } };
    const got = viaShaped(many, spec);
    expect(got.refused).toEqual([]);
    reference(many);
    expect(dump(shaped)).toEqual(dump(plain));
  });

  it('refuses to write an unsafe literal into SQL', () => {
    expect(() => new ShapedInsert(shaped, { ...SPEC, literals: { kind: ["x'); DROP TABLE t; --"] } })).toThrow(/not a safe literal/);
    expect(() => new ShapedInsert(shaped, { ...SPEC, literals: { n: [1.5] } })).toThrow(/not a safe literal/);
  });
});
