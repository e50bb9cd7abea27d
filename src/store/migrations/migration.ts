/**
 * Versioned schema migrations, tracked in `PRAGMA user_version`. A file is stamped with
 * `PRAGMA application_id` so that any other SQLite file is recognised as "not a recording".
 */
import type { Database } from 'better-sqlite3';
import { McptapError } from '../../errors.js';

/** 'mCTP' in ASCII: marks a SQLite file as an mcptap recording. */
export const APPLICATION_ID = 0x6d435450;

export interface Migration {
  /** Schema version after this migration ran; versions are 1, 2, 3, ... without gaps. */
  version: number;
  name: string;
  /** Runs inside the migration's transaction; must not commit or roll back itself. */
  up(db: Database): void;
}

export interface MigrationResult {
  from: number;
  to: number;
}

export function schemaVersion(db: Database): number {
  return db.pragma('user_version', { simple: true }) as number;
}

export function applicationId(db: Database): number {
  return db.pragma('application_id', { simple: true }) as number;
}

/**
 * Brings `db` to the latest version in `migrations`, every pending step in one IMMEDIATE transaction
 * with the `user_version` bump: a crash leaves the file at a whole version, and a reader (`show
 * --follow` waiting for a tap to create the file) sees it empty or at the latest, never between. A
 * file newer than this mcptap is refused rather than guessed at.
 */
export function migrate(db: Database, migrations: readonly Migration[], label = 'recording'): MigrationResult {
  const latest = migrations.length === 0 ? 0 : migrations[migrations.length - 1]!.version;
  const from = schemaVersion(db);
  if (from > latest) {
    throw new McptapError(
      'MCPTAP_RECORDING_TOO_NEW',
      `${label} has schema version ${from}, written by a newer mcptap (this one reads up to ${latest}); upgrade mcptap`,
    );
  }
  if (from < latest) {
    db.transaction(() => {
      // Another process may have migrated between our read and this lock.
      const now = schemaVersion(db);
      for (const m of migrations) {
        if (m.version <= now) continue;
        m.up(db);
        db.pragma(`user_version = ${m.version}`);
      }
      db.pragma(`application_id = ${APPLICATION_ID}`);
    }).immediate();
  }
  return { from, to: Math.max(from, latest) };
}
