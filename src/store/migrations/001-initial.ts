/**
 * Schema v1 of an mcptap recording file. Never edit a shipped migration: add the next one.
 *
 * Invariants the read side relies on:
 * - `ord` columns hold the recorder's event ordinal, unique within a recording across all tables;
 *   ordering by it replays the original TapEvent stream.
 * - JSON-RPC ids are stored as text next to their type ('string' | 'number') so that `1` and `"1"`
 *   never collapse.
 * - Everything stored has already passed through the redactor.
 */
import type { Migration } from './migration.js';

const SQL = `
CREATE TABLE recordings (
  id              INTEGER PRIMARY KEY,
  transport       TEXT    NOT NULL,
  target          TEXT    NOT NULL,
  started_us      INTEGER NOT NULL,
  ended_us        INTEGER,
  mcptap_version  TEXT    NOT NULL,
  meta_json       TEXT,
  dropped_queue   INTEGER NOT NULL DEFAULT 0,
  dropped_write   INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE connections (
  recording_id  INTEGER NOT NULL REFERENCES recordings(id) ON DELETE CASCADE,
  connection_id TEXT    NOT NULL,
  transport     TEXT,
  target        TEXT,
  pid           INTEGER,
  session_id    TEXT,
  peer_json     TEXT,
  opened_us     INTEGER,
  opened_ord    INTEGER,
  closed_us     INTEGER,
  closed_ord    INTEGER,
  close_reason  TEXT,
  exit_code     INTEGER,
  signal        TEXT,
  -- ConnectionClosed tells "null" (no exit code) from "absent" (not known): bit 1 exitCode, bit 2 signal.
  close_nulls   INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (recording_id, connection_id)
);

CREATE TABLE frames (
  id             INTEGER PRIMARY KEY,
  recording_id   INTEGER NOT NULL REFERENCES recordings(id) ON DELETE CASCADE,
  ord            INTEGER NOT NULL,
  seq            INTEGER NOT NULL,
  connection_id  TEXT    NOT NULL,
  direction      TEXT    NOT NULL,
  channel        TEXT    NOT NULL,
  time_us        INTEGER NOT NULL,
  raw            BLOB    NOT NULL,
  kind           TEXT    NOT NULL CHECK (kind IN ('message', 'invalid', 'log')),
  invalid_reason TEXT,
  detail         TEXT,
  message_kind   TEXT,
  method         TEXT,
  id_text        TEXT,
  id_type        TEXT,
  exchange_key   TEXT,
  http_status    INTEGER,
  sse_event_id   TEXT,
  stream_id      TEXT,
  context_json   TEXT,
  batch_index    INTEGER,
  batch_size     INTEGER
);
CREATE INDEX frames_seq ON frames (recording_id, seq);
CREATE INDEX frames_ord ON frames (recording_id, ord);
CREATE INDEX frames_exchange ON frames (recording_id, exchange_key);

CREATE TABLE exchanges (
  id                    INTEGER PRIMARY KEY,
  recording_id          INTEGER NOT NULL REFERENCES recordings(id) ON DELETE CASCADE,
  key                   TEXT    NOT NULL,
  state                 TEXT    NOT NULL CHECK (state IN ('started', 'completed', 'orphaned')),
  started_ord           INTEGER,
  completed_ord         INTEGER,
  -- What changes while an exchange is in flight, as it was at its start (JSON; see rows.ts).
  started_json          TEXT,
  connection_id         TEXT    NOT NULL,
  direction             TEXT    NOT NULL,
  id_text               TEXT    NOT NULL,
  id_type               TEXT    NOT NULL CHECK (id_type IN ('string', 'number')),
  method                TEXT    NOT NULL,
  target                TEXT,
  era                   TEXT    NOT NULL,
  protocol_version      TEXT,
  session_id            TEXT,
  start_us              INTEGER NOT NULL,
  end_us                INTEGER,
  latency_us            INTEGER,
  outcome               TEXT    NOT NULL,
  error_code            INTEGER,
  error_message         TEXT,
  is_error              INTEGER NOT NULL DEFAULT 0,
  progress_count        INTEGER NOT NULL DEFAULT 0,
  progress_json         TEXT,
  cancelled             INTEGER NOT NULL DEFAULT 0,
  cancel_by             TEXT,
  cancel_reason         TEXT,
  cancel_us             INTEGER,
  response_after_cancel INTEGER NOT NULL DEFAULT 0,
  http_status           INTEGER,
  transport_error_class TEXT,
  first_event_us        INTEGER,
  sse_event_count       INTEGER,
  transport_json        TEXT,
  request_json          TEXT    NOT NULL,
  response_json         TEXT,
  request_seq           INTEGER NOT NULL,
  response_seq          INTEGER,
  operation_key         TEXT,
  UNIQUE (recording_id, key)
);
CREATE INDEX exchanges_start ON exchanges (recording_id, start_us);
CREATE INDEX exchanges_method ON exchanges (recording_id, method, latency_us);
CREATE INDEX exchanges_id ON exchanges (recording_id, id_text, id_type);
CREATE INDEX exchanges_started_ord ON exchanges (recording_id, started_ord);
CREATE INDEX exchanges_completed_ord ON exchanges (recording_id, completed_ord);

CREATE TABLE progress (
  id           INTEGER PRIMARY KEY,
  recording_id INTEGER NOT NULL REFERENCES recordings(id) ON DELETE CASCADE,
  ord          INTEGER NOT NULL,
  exchange_key TEXT    NOT NULL,
  time_us      INTEGER NOT NULL,
  progress     REAL    NOT NULL,
  total        REAL,
  message      TEXT
);
CREATE INDEX progress_ord ON progress (recording_id, ord);

CREATE TABLE anomalies (
  id            INTEGER PRIMARY KEY,
  recording_id  INTEGER NOT NULL REFERENCES recordings(id) ON DELETE CASCADE,
  ord           INTEGER NOT NULL,
  kind          TEXT    NOT NULL,
  connection_id TEXT    NOT NULL,
  direction     TEXT,
  time_us       INTEGER NOT NULL,
  detail        TEXT    NOT NULL,
  frame_seq     INTEGER,
  exchange_key  TEXT
);
CREATE INDEX anomalies_ord ON anomalies (recording_id, ord);
CREATE INDEX anomalies_exchange ON anomalies (recording_id, exchange_key);
`;

export const initialSchema: Migration = {
  version: 1,
  name: 'initial schema',
  up: (db) => db.exec(SQL),
};
