/**
 * Schema v4: one word for traffic a tap forwarded but did not record. The anomaly kind
 * `not_observed` (the tap's side path was full) is now `dropped`, as in the recording's
 * `dropped_queue` / `dropped_write` counts and in `mcptap ls`.
 */
import type { Migration } from './migration.js';

export const droppedWord: Migration = {
  version: 4,
  name: "anomaly kind not_observed is now 'dropped'",
  up: (db) => db.exec("UPDATE anomalies SET kind = 'dropped' WHERE kind = 'not_observed';"),
};
