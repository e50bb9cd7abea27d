/**
 * SQLite's word that a file's pages do not hold together: a recording damaged after it was opened
 * (a bad disk, a copy cut short, bytes overwritten). Its errors surface wherever a page is read, so
 * the CLI names them once, as invalid input, instead of a stack trace or blaming an output file.
 */
import { McptapError } from '../errors.js';

/** Whether `err` is SQLite saying the database is corrupt (`SQLITE_CORRUPT*`, `SQLITE_NOTADB`). */
export function isDamagedDatabase(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB');
}

/** The one-paragraph error for it: what happened and what the user can do. */
export function damagedDatabaseError(err: unknown): McptapError {
  return new McptapError(
    'MCPTAP_RECORDING_DAMAGED',
    `a recording file is damaged (${(err as Error).message}): \`sqlite3 FILE "PRAGMA integrity_check"\` says where, and \`sqlite3 FILE .recover\` may save what is left`,
    { cause: err },
  );
}
