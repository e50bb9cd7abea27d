/**
 * The recorder's INSERTs, made cheap to run. A row's cost is mostly fixed per statement (~8 000
 * instructions to bind, step and reset) and per bound value (each crosses from JS to C; a text
 * value is converted and copied twice); storing a value costs little. So:
 * - up to {@link CHUNK} consecutive rows go in one multi-row INSERT;
 * - a value that is NULL (in a nullable column without a DEFAULT) or one of a column's common
 *   values (an enum such as `direction`) is written into the statement as a literal, not bound.
 * Which values are literals is the row's shape; a statement is made for each sequence of shapes
 * met and kept (bounded: past the bounds, rows go one per statement, binding every value).
 *
 * Invariant: a row is stored exactly as the single-row statement binding all its values (with the
 * table's upsert clause, if any) stores it: a literal is the value itself, NULL in an omittable
 * column is what binding NULL stores; rows go in the order given, a plain insert's rows get
 * consecutive ids, and a row SQLite refuses is refused alone.
 *
 * Multi-row statements are plain `INSERT OR FAIL`s: a failing row keeps the rows before it, and is
 * then tried alone with the upsert clause (so a key that exists after all is updated, as the upsert
 * would). Undoing a failed multi-row statement instead would need a statement journal: a copy of
 * every page the statement touches (32 KiB each), which costs more than chunking saves. For the
 * same reason the upsert itself (its DO UPDATE may abort) only ever runs one row per statement, and
 * the connection runs without foreign-key enforcement (batch-rows-writer.ts checks that instead).
 */
import type { Database, Statement } from 'better-sqlite3';
import type { Value } from './row-helpers.js';
import { isRowError } from './row-checks.js';

/** Most rows per statement (a power of 2): most of the per-statement saving, few distinct sequences of shapes. */
const CHUNK = 8;
/** Bounds of the caches (a statement costs memory and ~50 µs to prepare). */
const MAX_SHAPES = 255;
const MAX_STATEMENTS = 96;
/** Sequences of shapes counted, and how often one must come up to get its own statement. */
const MAX_SEQUENCES = 4096;
const ADMIT = 3;

export interface ShapedTable {
  table: string;
  cols: readonly string[];
  /** Nullable columns without a DEFAULT: a NULL there is written as a literal. */
  omittable: readonly string[];
  /** Common values of some columns (plain words or integers), written as literals. */
  literals?: Readonly<Record<string, readonly (string | number)[]>>;
  /**
   * Columns whose values repeat but are not known in advance (a recording id, a connection id): the
   * first so many distinct plain values met become literals too.
   */
  learn?: Readonly<Record<string, number>>;
  /** The upsert clause: rows go through it one at a time. */
  upsert?: string;
  /** Rows likely to hit the upsert's conflict: sent through it alone straight away. */
  alone?: (v: readonly Value[]) => boolean;
}

interface Shape {
  id: number;
  /** Per column: `?` or the literal SQL. */
  tokens: string[];
  /** Positions of the bound values. */
  bound: number[];
}

/** Per column: code 0 binds, 1 is the NULL literal, 2 + i the column's i-th literal. */
interface ColumnCodes {
  radix: number;
  nullable: boolean;
  codes: Map<Value, number> | undefined;
  sql: string[];
  /** How many more values the column may learn as literals. */
  room: number;
}

type Refused = (i: number, err: Error) => void;

export class ShapedInsert {
  private readonly columns: ColumnCodes[];
  private readonly shapes = new Map<number, Shape>();
  private readonly statements = new Map<string, Statement>();
  /** How often each sequence of shapes without a statement has come up. */
  private readonly sequences = new Map<string, number>();
  /** Binds every value: for rows met once the shape cache is full. */
  private readonly plain: Shape;
  private progressStmt: Statement | undefined;
  /** The connection's total_changes() as of the last chunk, or -1: to be read (another statement ran). */
  private changes = -1;

  constructor(
    private readonly db: Database,
    private readonly spec: ShapedTable,
  ) {
    this.columns = spec.cols.map((c) => columnCodes(c, spec));
    // A shape's key is a number with one digit (of radix `radix`) per column: it must stay exact.
    if (this.columns.reduce((p, c) => p * c.radix, 1) > Number.MAX_SAFE_INTEGER) throw new Error(`too many shapes for ${spec.table}`);
    this.plain = { id: -1, tokens: spec.cols.map(() => '?'), bound: spec.cols.map((_, i) => i) };
  }

  /**
   * Inserts `rows` in order. Returns each row's id (for a plain insert; an upsert's update leaves
   * it meaningless), or undefined for a row SQLite refused (told to `refused`). Anything but a row
   * error (isRowError) is thrown, with the rows before it written.
   */
  insert(rows: readonly (readonly Value[])[], refused: Refused): (number | undefined)[] {
    const ids = new Array<number | undefined>(rows.length);
    const alone = this.spec.alone;
    // Each row's shape; null for a row that goes through the upsert alone.
    const shapes = rows.map((v) => (alone?.(v) ? null : this.shapeOf(v)));
    this.changes = -1;
    for (let from = 0; from < rows.length;) {
      const chunk = this.chunkAt(shapes, from);
      if (chunk) from += this.runChunk(chunk.stmt, rows, from, chunk.shapes, ids, refused);
      else {
        ids[from] = this.runOne(rows[from]!, from, refused);
        from++;
      }
    }
    return ids;
  }

  /**
   * The longest run of rows from `from` that has a multi-row statement: {@link CHUNK} rows, else
   * half as many, ... (mixed traffic makes long sequences of shapes that never recur; short ones do).
   */
  private chunkAt(shapes: readonly (Shape | null)[], from: number): { stmt: Statement; shapes: Shape[] } | undefined {
    let n = 0;
    while (n < CHUNK && from + n < shapes.length && shapes[from + n] !== null) n++;
    for (let k = CHUNK; k > 1; k >>= 1) {
      if (k > n) continue;
      const run = shapes.slice(from, from + k) as Shape[];
      const stmt = this.statement(run, false);
      if (stmt) return { stmt, shapes: run };
    }
    return undefined;
  }

  /** Runs a multi-row statement; returns how many rows it dealt with (the failing one included). */
  private runChunk(stmt: Statement, rows: readonly (readonly Value[])[], from: number, shapes: Shape[], ids: (number | undefined)[], refused: Refused): number {
    const args: Value[] = [];
    for (let j = 0; j < shapes.length; j++) {
      const v = rows[from + j]!;
      for (const at of shapes[j]!.bound) args.push(v[at]!);
    }
    if (this.changes < 0) this.changes = this.progress().changes;
    try {
      // Spread, not one array argument: better-sqlite3 then reads each value straight from the call
      // instead of through the array (~400 instructions a value less).
      const r = stmt.run(...args);
      this.changes += r.changes;
      setIds(ids, from, shapes.length, Number(r.lastInsertRowid));
      return shapes.length;
    } catch (err) {
      if (!isRowError(err) || !this.db.inTransaction) throw err;
      // OR FAIL kept the rows before the failing one, one change each; that one is tried alone.
      const now = this.progress();
      const done = now.changes - this.changes;
      if (done < 0 || done >= shapes.length) throw err; // not one row's failure after all
      setIds(ids, from, done, now.lastId);
      ids[from + done] = this.runOne(rows[from + done]!, from + done, refused);
      return done + 1;
    }
  }

  /** One row through the single-row statement of its shape (the upsert, if the table has one). */
  private runOne(v: readonly Value[], i: number, refused: Refused): number | undefined {
    this.changes = -1;
    let s = this.shapeOf(v);
    let stmt = this.statement([s], true);
    if (!stmt) stmt = this.statement([(s = this.plain)], true)!;
    try {
      return Number(stmt.run(...s.bound.map((at) => v[at]!)).lastInsertRowid);
    } catch (err) {
      if (!isRowError(err) || !this.db.inTransaction) throw err;
      refused(i, err as Error);
      return undefined;
    }
  }

  private progress(): { changes: number; lastId: number } {
    this.progressStmt ??= this.db.prepare('SELECT total_changes() changes, last_insert_rowid() lastId');
    return this.progressStmt.get() as { changes: number; lastId: number };
  }

  private shapeOf(v: readonly Value[]): Shape {
    const cols = this.columns;
    let key = 0;
    for (let c = 0; c < cols.length; c++) {
      const col = cols[c]!;
      if (col.radix > 1) key = key * col.radix + codeOf(col, v[c]);
    }
    const known = this.shapes.get(key);
    if (known) return known;
    if (this.shapes.size >= MAX_SHAPES) return this.plain;
    const tokens = cols.map((col, c) => col.sql[codeOf(col, v[c])]!);
    const shape = { id: this.shapes.size, tokens, bound: tokens.flatMap((t, c) => (t === '?' ? [c] : [])) };
    this.shapes.set(key, shape);
    return shape;
  }

  /**
   * The statement for rows of these shapes. A single-row one is made on first use; a multi-row one
   * once its sequence of shapes has come up {@link ADMIT} times (mixed traffic makes many sequences
   * that never recur, and making a statement costs more than chunking one run saves). Undefined
   * when not (yet) made, or past the bound; never for `plain`.
   */
  private statement(shapes: Shape[], single: boolean): Statement | undefined {
    const key = `${single ? 's' : 'm'}${shapes.map((s) => s.id).join(',')}`;
    const known = this.statements.get(key);
    if (known) return known;
    if (this.statements.size >= MAX_STATEMENTS && shapes[0] !== this.plain) return undefined;
    if (!single) {
      const seen = (this.sequences.get(key) ?? 0) + 1;
      if (this.sequences.size >= MAX_SEQUENCES) this.sequences.clear();
      this.sequences.set(key, seen);
      if (seen < ADMIT) return undefined;
    }
    const { table, cols, upsert } = this.spec;
    const values = shapes.map((s) => `(${s.tokens.join(', ')})`).join(', ');
    const sql = `INSERT OR FAIL INTO ${table} (${cols.join(', ')}) VALUES ${values}${single && upsert ? ` ${upsert}` : ''}`;
    const stmt = this.db.prepare(sql);
    this.statements.set(key, stmt);
    return stmt;
  }
}

function codeOf(col: ColumnCodes, x: Value | undefined): number {
  if (x === null) return col.nullable ? 1 : 0;
  const code = col.codes?.get(x!);
  if (code !== undefined) return code;
  if (col.room === 0 || !isSafeLiteral(x)) return 0;
  // A value met for the first time while the column has room: it is a literal from now on.
  col.room--;
  col.sql.push(literalSql(x));
  col.codes!.set(x, col.sql.length - 1);
  return col.sql.length - 1;
}

function isSafeLiteral(x: unknown): x is string | number {
  return typeof x === 'string' ? x.length <= 64 && WORD.test(x) : Number.isSafeInteger(x);
}

const literalSql = (x: string | number): string => (typeof x === 'string' ? `'${x}'` : String(x));

/** Rows `from .. from + n - 1` got the consecutive ids ending at `last` (a new rowid is max + 1). */
function setIds(ids: (number | undefined)[], from: number, n: number, last: number): void {
  for (let j = 0; j < n; j++) ids[from + j] = last - (n - 1) + j;
}

const WORD = /^[A-Za-z0-9_./-]*$/;

function columnCodes(col: string, spec: ShapedTable): ColumnCodes {
  const nullable = spec.omittable.includes(col);
  const literals = spec.literals?.[col] ?? [];
  const room = spec.learn?.[col] ?? 0;
  const sql = ['?', 'NULL'];
  for (const l of literals) {
    if (!isSafeLiteral(l)) throw new Error(`not a safe literal for ${col}: ${String(l)}`);
    sql.push(literalSql(l));
  }
  const codes = literals.length || room ? new Map<Value, number>(literals.map((l, i) => [l, 2 + i])) : undefined;
  return { radix: literals.length || room || nullable ? 2 + literals.length + room : 1, nullable, codes, sql, room };
}
