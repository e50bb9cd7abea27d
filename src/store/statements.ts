/**
 * SQL text of the write path and of the event ordering, kept apart from recording-store.ts (which
 * alone executes it) to keep that file readable. Column lists match migrations/ and rows.ts.
 */

const EXCHANGE_COLS = [
  'recording_id', 'key', 'state', 'started_ord', 'completed_ord', 'started_json', 'connection_id', 'direction',
  'id_text', 'id_type', 'method', 'target', 'era', 'protocol_version', 'session_id', 'start_us', 'end_us',
  'latency_us', 'outcome', 'error_code', 'error_message', 'is_error', 'progress_count', 'progress_json', 'cancelled',
  'cancel_by', 'cancel_reason', 'cancel_us', 'response_after_cancel', 'http_status', 'transport_error_class',
  'first_event_us', 'sse_event_count', 'transport_json', 'request_json', 'response_json', 'request_seq',
  'response_seq', 'operation_key',
];
/** A later event for the same key replaces the row but keeps what only the start event knew. */
const KEEP_FIRST = new Set(['started_ord', 'started_json']);
const KEEP_LAST_NON_NULL = new Set(['completed_ord']);

function insertSql(table: string, cols: readonly string[]): string {
  return `INSERT INTO ${table} (${cols.join(', ')}) VALUES (${cols.map((c) => `@${c}`).join(', ')})`;
}

function exchangeUpsertSql(): string {
  const set = EXCHANGE_COLS.filter((c) => c !== 'recording_id' && c !== 'key').map((c) => {
    if (KEEP_FIRST.has(c)) return `${c} = COALESCE(exchanges.${c}, excluded.${c})`;
    if (KEEP_LAST_NON_NULL.has(c)) return `${c} = COALESCE(excluded.${c}, exchanges.${c})`;
    return `${c} = excluded.${c}`;
  });
  return `${insertSql('exchanges', EXCHANGE_COLS)} ON CONFLICT (recording_id, key) DO UPDATE SET ${set.join(', ')}`;
}

export const SQL = {
  insertRecording: `INSERT INTO recordings (transport, target, started_us, mcptap_version, meta_json)
    VALUES (@transport, @target, @started_us, @mcptap_version, @meta_json)`,
  endRecording: `UPDATE recordings SET ended_us = @ended_us, dropped_queue = @dropped_queue, dropped_write = @dropped_write WHERE id = @id`,
  insertFrame: insertSql('frames', [
    'recording_id', 'ord', 'seq', 'connection_id', 'direction', 'channel', 'time_us', 'raw', 'kind', 'invalid_reason',
    'detail', 'message_kind', 'method', 'id_text', 'id_type', 'exchange_key', 'http_status', 'sse_event_id',
    'stream_id', 'context_json', 'batch_index', 'batch_size',
  ]),
  upsertExchange: exchangeUpsertSql(),
  insertProgress: insertSql('progress', ['recording_id', 'ord', 'exchange_key', 'time_us', 'progress', 'total', 'message']),
  insertAnomaly: insertSql('anomalies', ['recording_id', 'ord', 'kind', 'connection_id', 'direction', 'time_us', 'detail', 'frame_seq', 'exchange_key']),
  connectionOpened: `${insertSql('connections', ['recording_id', 'connection_id', 'transport', 'target', 'pid', 'session_id', 'peer_json', 'opened_us', 'opened_ord'])}
    ON CONFLICT (recording_id, connection_id) DO UPDATE SET transport = excluded.transport, target = excluded.target,
    pid = excluded.pid, session_id = excluded.session_id, peer_json = excluded.peer_json, opened_us = excluded.opened_us,
    opened_ord = excluded.opened_ord`,
  connectionClosed: `${insertSql('connections', ['recording_id', 'connection_id', 'closed_us', 'closed_ord', 'close_reason', 'exit_code', 'signal', 'close_nulls'])}
    ON CONFLICT (recording_id, connection_id) DO UPDATE SET closed_us = excluded.closed_us, closed_ord = excluded.closed_ord,
    close_reason = excluded.close_reason, exit_code = excluded.exit_code, signal = excluded.signal, close_nulls = excluded.close_nulls`,
  /** One cursor per event source, each in recorder order; events() merges them by ord. */
  framesByOrd: 'SELECT * FROM frames WHERE recording_id = ? ORDER BY ord',
  startedByOrd: 'SELECT * FROM exchanges WHERE recording_id = ? AND started_ord IS NOT NULL ORDER BY started_ord',
  completedByOrd: 'SELECT * FROM exchanges WHERE recording_id = ? AND completed_ord IS NOT NULL ORDER BY completed_ord',
  progressByOrd: 'SELECT * FROM progress WHERE recording_id = ? ORDER BY ord',
  anomaliesByOrd: 'SELECT * FROM anomalies WHERE recording_id = ? ORDER BY ord',
  openedByOrd: 'SELECT * FROM connections WHERE recording_id = ? AND opened_ord IS NOT NULL ORDER BY opened_ord',
  closedByOrd: 'SELECT * FROM connections WHERE recording_id = ? AND closed_ord IS NOT NULL ORDER BY closed_ord',
  listedOutcome: `CASE WHEN state = 'started' THEN 'pending' ELSE outcome END`,
} as const;
