/** Every schema migration in order. Append only; never edit or reorder a shipped one. */
import { initialSchema } from './001-initial.js';
import { frameRefs } from './002-frame-refs.js';
import { leanWrites } from './003-lean-writes.js';
import { droppedWord } from './004-dropped.js';
import type { Migration } from './migration.js';

export const MIGRATIONS: readonly Migration[] = [initialSchema, frameRefs, leanWrites, droppedWord];
export const LATEST_SCHEMA_VERSION: number = MIGRATIONS[MIGRATIONS.length - 1]!.version;
export { APPLICATION_ID, migrate, schemaVersion, applicationId, type Migration, type MigrationResult } from './migration.js';
