/**
 * Tells an mcptap recording from any other file before anything is written to it: recordings carry
 * `PRAGMA application_id` = {@link APPLICATION_ID}; a brand-new empty file is accepted only when
 * creating one.
 */
import type { Database } from 'better-sqlite3';
import { McptapError } from '../../errors.js';
import { APPLICATION_ID, applicationId, schemaVersion } from './migration.js';

/** Refuses files that are not mcptap recordings before anything is written to them. */
export function checkIsRecording(db: Database, label: string, create: boolean): void {
  let appId: number;
  let tables: number;
  let version: number;
  try {
    // One read transaction: another tap creating the same file commits its tables, its
    // application_id and its version together, and separate reads could see some without the rest.
    [appId, tables, version] = db.transaction(() => [
      applicationId(db),
      (db.prepare("SELECT count(*) n FROM sqlite_master WHERE type = 'table'").get() as { n: number }).n,
      schemaVersion(db),
    ])();
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'SQLITE_READONLY_DIRECTORY' || code === 'SQLITE_READONLY_CANTINIT' || code === 'SQLITE_CANTOPEN') {
      // A recording is in WAL mode: reading it needs its -shm (and -wal) files beside it, which
      // SQLite creates when they are missing. It is a recording; it cannot be read from there.
      throw new McptapError(
        'MCPTAP_RECORDING_UNREADABLE',
        `cannot read ${label} where it is: SQLite must create ${label}-shm beside it and cannot (${(err as Error).message}); copy the file to a directory you can write`,
      );
    }
    const why = code === 'SQLITE_NOTADB' ? 'not an SQLite database' : (err as Error).message;
    throw new McptapError('MCPTAP_NOT_A_RECORDING', `${label} is not an mcptap recording (${why})`);
  }
  if (appId === APPLICATION_ID) return;
  if (appId === 0 && tables === 0 && version === 0) {
    if (create) return;
    throw new McptapError('MCPTAP_NOT_A_RECORDING', `${label} is not an mcptap recording (empty database)`);
  }
  throw new McptapError('MCPTAP_NOT_A_RECORDING', `${label} is not an mcptap recording (a different SQLite database)`);
}
