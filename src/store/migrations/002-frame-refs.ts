/**
 * Schema v2: an exchange stores its request and response once, in `frames`, instead of a second
 * copy as JSON in the exchange row (which doubled the bytes written per exchange).
 *
 * - `request_frame_id` / `response_frame_id` reference the `frames` row (by its id) whose message
 *   IS the request / response: the recorder sets them only when the correlator took the message
 *   from exactly that frame, so reading the frame back gives the same (redacted) value.
 * - `request_json` stays NOT NULL (changing that would mean rebuilding the table, i.e. rewriting every
 *   older file on open); the empty string, which is never valid JSON, says "see request_frame_id".
 *   `response_json` is NULL when `response_frame_id` is set.
 * - A request whose frame row is missing (its frame was dropped by a full queue or a failed write)
 *   reads back as `{jsonrpc, id, method}` from the row's own columns.
 * - v1 rows keep their JSON copies and read back as before.
 */
import type { Migration } from './migration.js';

export const frameRefs: Migration = {
  version: 2,
  name: 'exchanges reference their request/response frames',
  up: (db) =>
    db.exec(`
ALTER TABLE exchanges ADD COLUMN request_frame_id INTEGER;
ALTER TABLE exchanges ADD COLUMN response_frame_id INTEGER;
`),
};
