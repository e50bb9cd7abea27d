/**
 * SQL text of the write path and of the event ordering, kept apart from recording-store.ts (which
 * alone executes it) to keep that file readable. Column lists live next to their value builders
 * (rows.ts, exchange-rows.ts) and match migrations/.
 */
import { EXCHANGE_COLS } from './exchange-rows.js';
import { ANOMALY_COLS, CLOSED_COLS, FRAME_COLS, OPENED_COLS, PROGRESS_COLS } from './rows.js';

/** A later event for the same key replaces the row but keeps what only the start event knew. */
const KEEP_FIRST = new Set(['started_ord', 'started_json']);
const KEEP_LAST_NON_NULL = new Set(['completed_ord']);
/** Written once, with the start: a completion in a later batch does not carry the request again. */
const KEEP_EXISTING = new Set(['recording_id', 'key', 'request_json', 'request_frame_id']);

/** Positional: the write path binds value arrays (rows.ts `*Values`), not objects. */
function insertSql(table: string, cols: readonly string[]): string {
  return `INSERT INTO ${table} (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`;
}

function exchangeUpsertSql(): string {
  const set = EXCHANGE_COLS.filter((c) => !KEEP_EXISTING.has(c)).map((c) => {
    if (KEEP_FIRST.has(c)) return `${c} = COALESCE(exchanges.${c}, excluded.${c})`;
    if (KEEP_LAST_NON_NULL.has(c)) return `${c} = COALESCE(excluded.${c}, exchanges.${c})`;
    return `${c} = excluded.${c}`;
  });
  return `${insertSql('exchanges', EXCHANGE_COLS)} ON CONFLICT (recording_id, key) DO UPDATE SET ${set.join(', ')}`;
}

/** Exchange rows with their request/response frames' bytes, for rowToExchange. Filter on `e.` columns. */
const EXCHANGE_SELECT = `SELECT e.*, rq.raw request_raw, rq.batch_index request_batch_index, rs.raw response_raw,
  rs.batch_index response_batch_index FROM exchanges e LEFT JOIN frames rq ON rq.id = e.request_frame_id
  LEFT JOIN frames rs ON rs.id = e.response_frame_id`;

export const SQL = {
  insertRecording: `INSERT INTO recordings (transport, target, started_us, mcptap_version, meta_json)
    VALUES (@transport, @target, @started_us, @mcptap_version, @meta_json)`,
  endRecording: `UPDATE recordings SET ended_us = @ended_us, dropped_queue = @dropped_queue, dropped_write = @dropped_write WHERE id = @id`,
  insertFrame: insertSql('frames', FRAME_COLS),
  upsertExchange: exchangeUpsertSql(),
  insertProgress: insertSql('progress', PROGRESS_COLS),
  insertAnomaly: insertSql('anomalies', ANOMALY_COLS),
  connectionOpened: `${insertSql('connections', OPENED_COLS)}
    ON CONFLICT (recording_id, connection_id) DO UPDATE SET transport = excluded.transport, target = excluded.target,
    pid = excluded.pid, session_id = excluded.session_id, peer_json = excluded.peer_json, opened_us = excluded.opened_us,
    opened_ord = excluded.opened_ord`,
  connectionClosed: `${insertSql('connections', CLOSED_COLS)}
    ON CONFLICT (recording_id, connection_id) DO UPDATE SET closed_us = excluded.closed_us, closed_ord = excluded.closed_ord,
    close_reason = excluded.close_reason, exit_code = excluded.exit_code, signal = excluded.signal, close_nulls = excluded.close_nulls`,
  /** One cursor per event source, each in recorder order; events() merges them by ord. */
  framesByOrd: 'SELECT * FROM frames WHERE recording_id = ? ORDER BY ord',
  startedByOrd: `${EXCHANGE_SELECT} WHERE e.recording_id = ? AND e.started_ord IS NOT NULL ORDER BY e.started_ord`,
  completedByOrd: `${EXCHANGE_SELECT} WHERE e.recording_id = ? AND e.completed_ord IS NOT NULL ORDER BY e.completed_ord`,
  progressByOrd: 'SELECT * FROM progress WHERE recording_id = ? ORDER BY ord',
  anomaliesByOrd: 'SELECT * FROM anomalies WHERE recording_id = ? ORDER BY ord',
  openedByOrd: 'SELECT * FROM connections WHERE recording_id = ? AND opened_ord IS NOT NULL ORDER BY opened_ord',
  closedByOrd: 'SELECT * FROM connections WHERE recording_id = ? AND closed_ord IS NOT NULL ORDER BY closed_ord',
  listedOutcome: `CASE WHEN state = 'started' THEN 'pending' ELSE outcome END`,
  /** The same for a query on {@link SQL.exchangeSelect} (alias `e`). */
  listedOutcomeE: `CASE WHEN e.state = 'started' THEN 'pending' ELSE e.outcome END`,
  exchangeSelect: EXCHANGE_SELECT,
} as const;
