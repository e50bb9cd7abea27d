/**
 * SQL text of the write path and of the event ordering, kept apart from recording-store.ts (which
 * alone executes it) to keep that file readable. Column lists live next to their value builders
 * (rows.ts, exchange-rows.ts) and match migrations/.
 */
import { OUTCOMES } from '../model/outcome.js';
import { EXCHANGE_COLS } from './exchange-rows.js';
import { CLOSED_COLS, OPENED_COLS } from './rows.js';

/** A later event for the same key replaces the row but keeps what only the start event knew. */
const KEEP_FIRST = new Set(['started_ord', 'started_json']);
const KEEP_LAST_NON_NULL = new Set(['completed_ord']);
/** Written once, with the start: a completion in a later batch does not carry the request again. */
const KEEP_EXISTING = new Set(['recording_id', 'key', 'request_json', 'request_frame_id']);

/** Positional: the write path binds value arrays (rows.ts `*Values`), not objects. */
export function insertSql(table: string, cols: readonly string[]): string {
  return `INSERT INTO ${table} (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`;
}

/** What a later row for the same exchange does to the stored one (see the KEEP_* sets). */
export function exchangeUpsertClause(): string {
  const set = EXCHANGE_COLS.filter((c) => !KEEP_EXISTING.has(c)).map((c) => {
    if (KEEP_FIRST.has(c)) return `${c} = COALESCE(exchanges.${c}, excluded.${c})`;
    if (KEEP_LAST_NON_NULL.has(c)) return `${c} = COALESCE(excluded.${c}, exchanges.${c})`;
    return `${c} = excluded.${c}`;
  });
  return `ON CONFLICT (recording_id, key) DO UPDATE SET ${set.join(', ')}`;
}

/**
 * Columns that are nullable and have no DEFAULT (migrations/): a NULL there may be written as the
 * literal NULL instead of bound (shaped-insert.ts).
 */
export const FRAME_OMITTABLE = [
  'invalid_reason',
  'detail',
  'message_kind',
  'method',
  'id_text',
  'id_type',
  'exchange_key',
  'http_status',
  'sse_event_id',
  'stream_id',
  'context_json',
  'batch_index',
  'batch_size',
] as const;
export const EXCHANGE_OMITTABLE = [
  'started_ord',
  'completed_ord',
  'started_json',
  'target',
  'protocol_version',
  'session_id',
  'end_us',
  'latency_us',
  'error_code',
  'error_message',
  'progress_json',
  'cancel_by',
  'cancel_reason',
  'cancel_us',
  'http_status',
  'transport_error_class',
  'first_event_us',
  'sse_event_count',
  'transport_json',
  'response_json',
  'response_seq',
  'operation_key',
  'request_frame_id',
  'response_frame_id',
] as const;
export const PROGRESS_OMITTABLE = ['total', 'message'] as const;
export const ANOMALY_OMITTABLE = ['direction', 'frame_seq', 'exchange_key'] as const;

/**
 * Values common enough in their column to be written as literals (shaped-insert.ts): the enums of
 * the model, and the flags and empty request copy almost every exchange row has.
 */
export const FRAME_LITERALS: Readonly<Record<string, readonly (string | number)[]>> = {
  direction: ['c2s', 's2c'],
  channel: ['stdio', 'stderr', 'http-body', 'sse'],
  kind: ['message', 'invalid', 'log'],
  message_kind: ['request', 'response', 'notification'],
  id_type: ['number', 'string', 'null'],
};
export const EXCHANGE_LITERALS: Readonly<Record<string, readonly (string | number)[]>> = {
  state: ['completed', 'started', 'orphaned'],
  direction: ['c2s', 's2c'],
  id_type: ['number', 'string'],
  era: ['legacy', 'modern', 'unknown'],
  outcome: OUTCOMES,
  is_error: [0, 1],
  progress_count: [0],
  cancelled: [0, 1],
  response_after_cancel: [0, 1],
  request_json: [''],
  started_json: [''],
};

/** Exchange rows with their request/response frames' bytes, for rowToExchange. Filter on `e.` columns. */
const EXCHANGE_SELECT = `SELECT e.*, rq.raw request_raw, rq.batch_index request_batch_index, rs.raw response_raw,
  rs.batch_index response_batch_index FROM exchanges e LEFT JOIN frames rq ON rq.id = e.request_frame_id
  LEFT JOIN frames rs ON rs.id = e.response_frame_id`;

/** What an exchange event is made of (exchange-rows.ts reads these; each column costs a value per row, and events() reads every exchange twice). */
const EXCHANGE_EVENT_COLS = `id, recording_id, state, key, started_ord, completed_ord, started_json, connection_id, direction, id_text, id_type,
  method, target, era, protocol_version, session_id, start_us, end_us, latency_us, outcome, error_code, error_message, is_error, progress_json,
  cancelled, cancel_by, cancel_reason, cancel_us, response_after_cancel, transport_json, request_json, response_json, request_seq, response_seq,
  operation_key, request_frame_id, response_frame_id`;

/** Outcome as listed (an exchange in flight at the end is `pending`); `e.` for queries on exchangeSelect. */
const listedOutcome = (alias = '') => `CASE WHEN ${alias}state = 'started' THEN 'pending' ELSE ${alias}outcome END`;
/** `ls`: a tools/call row per tool (a 1 ms tool and a 3 s one have nothing to share); other methods, one row. */
const LS_TOOL = `CASE WHEN method = 'tools/call' THEN target END`;

export const SQL = {
  insertRecording: `INSERT INTO recordings (transport, target, started_us, mcptap_version, meta_json)
    VALUES (@transport, @target, @started_us, @mcptap_version, @meta_json)`,
  endRecording: `UPDATE recordings SET ended_us = @ended_us, dropped_queue = @dropped_queue, dropped_write = @dropped_write,
    meta_json = CASE WHEN @incomplete IS NULL THEN meta_json ELSE json_set(coalesce(meta_json, '{}'), '$.incomplete', @incomplete) END WHERE id = @id`,
  connectionOpened: `${insertSql('connections', OPENED_COLS)}
    ON CONFLICT (recording_id, connection_id) DO UPDATE SET transport = excluded.transport, target = excluded.target,
    pid = excluded.pid, session_id = excluded.session_id, peer_json = excluded.peer_json, opened_us = excluded.opened_us,
    opened_ord = excluded.opened_ord`,
  connectionClosed: `${insertSql('connections', CLOSED_COLS)}
    ON CONFLICT (recording_id, connection_id) DO UPDATE SET closed_us = excluded.closed_us, closed_ord = excluded.closed_ord,
    close_reason = excluded.close_reason, exit_code = excluded.exit_code, signal = excluded.signal, close_nulls = excluded.close_nulls`,
  /** One cursor per event source, each in recorder order; events() merges them by ord. */
  /** What rows.frameEvent reads (not the columns it does not: each one costs a value per frame). */
  framesByOrd: `SELECT id, ord, seq, connection_id, direction, channel, time_us, raw, kind, invalid_reason, detail, message_kind,
    exchange_key, context_json, batch_index, batch_size FROM frames WHERE recording_id = ? ORDER BY ord`,
  startedByOrd: `${EXCHANGE_SELECT} WHERE e.recording_id = ? AND e.started_ord IS NOT NULL ORDER BY e.started_ord`,
  completedByOrd: `${EXCHANGE_SELECT} WHERE e.recording_id = ? AND e.completed_ord IS NOT NULL ORDER BY e.completed_ord`,
  /** The same without the frames joined in: events() takes their messages from the frames it streams already. */
  startedByOrdBare: `SELECT ${EXCHANGE_EVENT_COLS} FROM exchanges WHERE recording_id = ? AND started_ord IS NOT NULL ORDER BY started_ord`,
  completedByOrdBare: `SELECT ${EXCHANGE_EVENT_COLS} FROM exchanges WHERE recording_id = ? AND completed_ord IS NOT NULL ORDER BY completed_ord`,
  /** Exchanges that completed without a start (orphans), for events() that reads the started ones once for both events. */
  unstartedByOrd: `${EXCHANGE_SELECT} WHERE e.recording_id = ? AND e.started_ord IS NULL AND e.completed_ord IS NOT NULL ORDER BY e.completed_ord`,
  unstartedByOrdBare: `SELECT ${EXCHANGE_EVENT_COLS} FROM exchanges WHERE recording_id = ? AND started_ord IS NULL AND completed_ord IS NOT NULL
    ORDER BY completed_ord`,
  /** A frame's bytes by row id, for an exchange whose frame events() no longer holds. */
  frameRawById: 'SELECT raw, batch_index FROM frames WHERE id = ?',
  progressByOrd: 'SELECT * FROM progress WHERE recording_id = ? ORDER BY ord',
  anomaliesByOrd: 'SELECT * FROM anomalies WHERE recording_id = ? ORDER BY ord',
  openedByOrd: 'SELECT * FROM connections WHERE recording_id = ? AND opened_ord IS NOT NULL ORDER BY opened_ord',
  closedByOrd: 'SELECT * FROM connections WHERE recording_id = ? AND closed_ord IS NOT NULL ORDER BY closed_ord',
  listedOutcome: listedOutcome(),
  /** `ls`: counts per method and outcome, and how many of them have a latency; outcomes in order of first appearance. */
  methodOutcomeCounts: `SELECT method, ${LS_TOOL} tool, ${listedOutcome()} outcome, count(*) n, count(latency_us) timed
    FROM exchanges WHERE recording_id = ? GROUP BY 1, 2, 3 ORDER BY min(id)`,
  /** `ls`: latencies in rank order per method and tool. No index (it would cost every write): SQLite's sorter spills to a temp file. */
  latenciesByMethod: `SELECT method, ${LS_TOOL} tool, latency_us latencyUs FROM exchanges WHERE recording_id = ? AND latency_us IS NOT NULL
    ORDER BY method, tool, latency_us`,
  exchangeSelect: EXCHANGE_SELECT,
  /** One statement for every filter combination of `exchanges()`: an absent filter is NULL and matches all. */
  exchangesFiltered: `${EXCHANGE_SELECT} WHERE (@r IS NULL OR e.recording_id = @r) AND (@m IS NULL OR e.method = @m)
    AND (@t IS NULL OR e.target = @t) AND (@o IS NULL OR ${listedOutcome('e.')} = @o)
    ORDER BY e.recording_id, e.start_us, e.id LIMIT @limit OFFSET @offset`,
  /** An exchange's plain columns (no messages: no frames joined, no JSON read), in start order. */
  exchangeHeads: `SELECT id, recording_id, state, connection_id, direction, method, target, era, protocol_version, session_id,
    start_us, end_us, latency_us, outcome, request_seq, (response_frame_id IS NOT NULL OR response_json IS NOT NULL) answered
    FROM exchanges WHERE recording_id = ? ORDER BY recording_id, start_us, id`,
  /** What the client sent that is no request and that the replayer does not send on its own. */
  clientNotifications: `SELECT id, connection_id, seq, time_us, json_extract(context_json, '$.sessionId') session_id FROM frames
    WHERE recording_id = ? AND direction = 'c2s' AND kind = 'message' AND message_kind = 'notification'
    AND method NOT IN ('notifications/cancelled', 'notifications/initialized', 'notifications/progress') ORDER BY ord`,
  /** {@link SQL.exchangeSelect} for a lookup by JSON-RPC id: left alone, the planner walks the whole recording in start order. */
  exchangeById: EXCHANGE_SELECT.replace('FROM exchanges e', 'FROM exchanges e INDEXED BY exchanges_id'),
  /**
   * Frames linked to an exchange, plus its request/response frames even if unlinked. Each half on
   * its index: written as one OR, the planner walks every frame of the recording.
   */
  framesOfExchange: `SELECT f.* FROM frames f WHERE f.id IN (
      SELECT id FROM frames WHERE recording_id = @r AND exchange_key = @k
      UNION SELECT id FROM frames WHERE recording_id = @r AND seq IN (
        SELECT request_seq FROM exchanges WHERE recording_id = @r AND key = @k
        UNION ALL SELECT response_seq FROM exchanges WHERE recording_id = @r AND key = @k))
    ORDER BY f.seq, f.id`,
  /** `show --streams`: a recording's long-lived streams (recording-store.ts longStreams). */
  longStreams: `SELECT connection_id AS connectionId, stream_id AS streamId,
    CASE WHEN sum(direction = 'c2s') = 0 THEN 'get' ELSE 'listen' END AS kind,
    min(CASE WHEN direction = 's2c' THEN time_us END) AS firstUs, max(CASE WHEN direction = 's2c' THEN time_us END) AS lastUs,
    sum(direction = 's2c') AS frames, sum(direction = 's2c' AND message_kind = 'notification') AS notifications
    FROM frames WHERE recording_id = ? AND stream_id IS NOT NULL
    GROUP BY connection_id, stream_id
    HAVING sum(direction = 's2c') > 0
      AND ((sum(direction = 'c2s') = 0 AND sum(channel = 'sse') > 0) OR max(CASE WHEN direction = 'c2s' THEN method END) = 'subscriptions/listen')
    ORDER BY firstUs`,
  longStreamNotificationTimes: `SELECT time_us AS t FROM frames
    WHERE recording_id = @r AND connection_id = @c AND stream_id = @s AND direction = 's2c' AND message_kind = 'notification'
    ORDER BY time_us LIMIT @n`,
} as const;
