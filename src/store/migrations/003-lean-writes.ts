/**
 * Schema v3: cheaper writes, same data.
 *
 * - Drops `exchanges_method` (recording_id, method, latency_us): no query uses it (summaries read a
 *   recording's exchanges whole, `show --method` filters while walking `exchanges_start`), and as
 *   latencies come in random order every insert lands on a random page of it: on a large recording
 *   each batch dirtied hundreds of its pages, each written to the WAL in full.
 * - `started_json` may be '' (never valid JSON): the exchange started with outcome `unanswered`
 *   and every other field that `started_json` saves as the row has it. The recorder writes that
 *   for nearly every exchange whose start and completion share a batch, instead of the same
 *   ~130 bytes of JSON per row. (NULL keeps its meaning; v1/v2 rows never hold ''.)
 *
 * Not a schema change but part of the same step: the write connection checks the CHECK rules and
 * the foreign key to `recordings` itself (store/row-checks.ts, batch-rows-writer.ts).
 */
import type { Migration } from './migration.js';

export const leanWrites: Migration = {
  version: 3,
  name: 'drop the unused exchanges_method index; started_json may be empty',
  up: (db) => db.exec('DROP INDEX IF EXISTS exchanges_method;'),
};
