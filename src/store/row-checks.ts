/**
 * What the write path checks about a row itself, and which failures are a row's own.
 *
 * The schema's CHECK constraints (migrations/001-initial.ts) are enforced here in JS. SQLite codes
 * `col IN ('a', 'b', 'c')` in a CHECK as a lookup table built afresh for every row it checks: about
 * 19 000 instructions per frame row, more than binding the whole row. So the store's connection runs with `PRAGMA ignore_check_constraints = ON` and the batch writer checks the same
 * rules on the values it binds, with SQLite's error code (a row error: that row alone is refused).
 *
 * Same outcome as SQLite for every value: NULL passes here (NOT NULL is SQLite's to report), any
 * other value must be one of the listed texts. (A row that breaks a NOT NULL rule as well is
 * reported as breaking this one, where SQLite would name the NOT NULL rule; it is refused either way.)
 */
import type { Value } from './row-helpers.js';

export interface CheckRule {
  /** Position of the column in the row values. */
  at: number;
  allowed: ReadonlySet<string>;
  /** The constraint as the schema states it (for the error message). */
  text: string;
}

export function checkRule(at: number, column: string, allowed: readonly string[]): CheckRule {
  return { at, allowed: new Set(allowed), text: `${column} IN (${allowed.map((a) => `'${a}'`).join(', ')})` };
}

/**
 * Throws better-sqlite3's TypeError for a value it cannot bind. Checked here because values are
 * passed to it as separate arguments (shaped-insert.ts), and there an array or a plain object
 * would be taken apart as parameters instead of refused.
 */
export function enforceBindable(v: readonly Value[]): void {
  for (let i = 0; i < v.length; i++) {
    const x = v[i];
    const t = typeof x;
    if (t === 'string' || t === 'number' || x === null || x === undefined || t === 'bigint' || x instanceof Uint8Array) continue;
    throw new TypeError('SQLite3 can only bind numbers, strings, bigints, buffers, and null');
  }
}

/** Throws SQLite's CHECK error when a row breaks one of `rules`. */
export function enforceChecks(v: readonly Value[], rules: readonly CheckRule[]): void {
  for (const r of rules) {
    const x = v[r.at];
    if (x === null || x === undefined || (typeof x === 'string' && r.allowed.has(x))) continue;
    throw Object.assign(new Error(`CHECK constraint failed: ${r.text}`), { code: 'SQLITE_CONSTRAINT_CHECK' });
  }
}

const ROW_ERROR_CODES = /^SQLITE_(CONSTRAINT|MISMATCH|TOOBIG|RANGE)/;

/** A failure confined to one row: the transaction is still usable and the batch can go on. */
export function isRowError(err: unknown): boolean {
  if (err instanceof TypeError || err instanceof RangeError) return true;
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'string' && ROW_ERROR_CODES.test(code);
}
