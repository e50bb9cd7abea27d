/**
 * Pure mapping between Exchange objects and `exchanges` rows (see rows.ts for the other tables).
 * Ids are stored as text plus type, so `1` and `"1"` read back as they were written. Rows are read
 * with their request/response frames joined in (`request_raw`, `response_raw`; see SQL.exchangeSelect).
 */
import type { TapEvent } from '../model/events.js';
import type { Exchange, ExchangeTransport } from '../model/exchange.js';
import { idFromText, type IdType, type JsonRpcId, type JsonRpcMessage } from '../model/jsonrpc.js';
import type { Outcome } from '../model/outcome.js';
import { bool, json, n, opt, type Row, type Value } from './row-helpers.js';
import { messageOf } from './rows.js';
import type { ExchangeHead, ExchangeState, StoredExchange } from './types.js';

/**
 * Fields of an Exchange the correlator may still change after announcing it (an initialize's
 * protocol version comes from its result, for instance), saved as they were at the start so that
 * the started event reads back as it was emitted. Absent fields are saved as null.
 */
const MUTABLE_AT_START = ['outcome', 'era', 'protocolVersion', 'sessionId', 'target', 'operationKey'] as const;

/** Column order of `exchanges` rows as written; {@link exchangeValues} returns values in this order. */
export const EXCHANGE_COLS = [
  'recording_id',
  'key',
  'state',
  'started_ord',
  'completed_ord',
  'started_json',
  'connection_id',
  'direction',
  'id_text',
  'id_type',
  'method',
  'target',
  'era',
  'protocol_version',
  'session_id',
  'start_us',
  'end_us',
  'latency_us',
  'outcome',
  'error_code',
  'error_message',
  'is_error',
  'progress_count',
  'progress_json',
  'cancelled',
  'cancel_by',
  'cancel_reason',
  'cancel_us',
  'response_after_cancel',
  'http_status',
  'transport_error_class',
  'first_event_us',
  'sse_event_count',
  'transport_json',
  'request_json',
  'response_json',
  'request_seq',
  'response_seq',
  'operation_key',
  'request_frame_id',
  'response_frame_id',
] as const;
/**
 * Positions of the frame references. As encoded they hold the frame's `seq` (the frame travels in
 * the same batch); the batch writer swaps in the frames row id it just inserted.
 */
const at = (c: (typeof EXCHANGE_COLS)[number]): number => EXCHANGE_COLS.indexOf(c);
export const EXCHANGE_REQUEST_FRAME = at('request_frame_id');
export const EXCHANGE_RESPONSE_FRAME = at('response_frame_id');
const REQUEST_JSON = at('request_json');
export const EXCHANGE_STARTED_JSON = at('started_json');
const STARTED_JSON = EXCHANGE_STARTED_JSON;
/** What a started row knows that its completion does not: copied when both become one row. */
const START_COLUMNS = [at('started_ord'), REQUEST_JSON, EXCHANGE_REQUEST_FRAME];
/** Where a row holds the {@link MUTABLE_AT_START} fields, in that order. */
const MUTABLE_COLUMNS = [at('outcome'), at('era'), at('protocol_version'), at('session_id'), at('target'), at('operation_key')];
const OUTCOME = MUTABLE_COLUMNS[0]!;

/**
 * `started_json` for a started row (from {@link exchangeValues}): the {@link MUTABLE_AT_START}
 * fields as the row holds them (they were read at the start), as an object literal in that order.
 * Remembers its last answer: consecutive exchanges mostly start alike (same era, version, session,
 * tool), and then give the same text without stringifying.
 */
export function memoStartedJson(): (row: readonly Value[]) => string {
  let last: { values: Value[]; text: string } | undefined;
  return (row) => {
    const values = MUTABLE_COLUMNS.map((c) => row[c] ?? null);
    if (last && values.every((v, i) => v === last!.values[i])) return last.text;
    const [outcome, era, protocolVersion, sessionId, target, operationKey] = values;
    last = { values, text: JSON.stringify({ outcome, era, protocolVersion, sessionId, target, operationKey }) };
    return last.text;
  };
}

/**
 * Where an exchange row gets its request or response (see migrations/002-frame-refs.ts):
 * - `{ frameSeq }`: it is the message of the frame with that seq, in the same batch;
 * - `{ json }`: a copy of its own (e.g. an orphan's made-up request);
 * - `keep`: the request was already written with the exchange's start (the row keeps it).
 */
export type MessageSource = { frameSeq: number } | { json: string } | 'keep' | 'none';

/**
 * An exchange row's values in {@link EXCHANGE_COLS} order. A started row's `started_json` is left
 * NULL: the encoder fills it in once it knows whether the completion joins the row (see
 * {@link takeStartColumns}, {@link memoStartedJson}).
 */
export function exchangeValues(recordingId: number, ord: number, ex: Exchange, state: ExchangeState, request: MessageSource, response: MessageSource): Value[] {
  const t: ExchangeTransport | undefined = ex.transport;
  const started = state === 'started';
  const cancel = ex.cancel;
  return [
    recordingId,
    ex.key,
    state,
    started ? ord : null,
    started ? null : ord,
    null,
    ex.connectionId,
    ex.direction,
    typeof ex.id === 'string' ? ex.id : JSON.stringify(ex.id),
    ex.idType,
    ex.method,
    n(ex.target),
    ex.era,
    n(ex.protocolVersion),
    n(ex.sessionId),
    ex.startUs,
    n(ex.endUs),
    n(ex.latencyUs),
    ex.outcome,
    n(ex.errorCode),
    n(ex.errorMessage),
    bool(ex.isError),
    ex.progress?.length ?? 0,
    ex.progress && ex.progress.length > 0 ? JSON.stringify(ex.progress) : null,
    bool(cancel !== undefined),
    n(cancel?.by),
    n(cancel?.reason),
    n(cancel?.timeUs),
    bool(ex.responseAfterCancel),
    n(t?.httpStatus),
    n(t?.errorClass),
    n(t?.firstEventUs),
    t?.eventTimesUs ? t.eventTimesUs.length : null,
    json(t),
    typeof request === 'object' && 'json' in request ? request.json : '',
    typeof response === 'object' && 'json' in response ? response.json : null,
    ex.requestSeq,
    n(ex.responseSeq),
    n(ex.operationKey),
    typeof request === 'object' && 'frameSeq' in request ? request.frameSeq : null,
    typeof response === 'object' && 'frameSeq' in response ? response.frameSeq : null,
  ];
}

/** Sets where a row (from {@link exchangeValues}) gets its request. */
export function setRequestSource(row: Value[], request: MessageSource): void {
  row[REQUEST_JSON] = typeof request === 'object' && 'json' in request ? request.json : '';
  row[EXCHANGE_REQUEST_FRAME] = typeof request === 'object' && 'frameSeq' in request ? request.frameSeq : null;
}

/**
 * Makes a completion row (`end`) also carry its start, from the started row `start`. Its
 * `started_json` is '' (schema v3) when the start differs from the row only by its outcome being
 * `unanswered`, as nearly every exchange's does; else the start's fields as JSON.
 */
export function takeStartColumns(end: Value[], start: readonly Value[], startedJson: (row: readonly Value[]) => string): void {
  for (const i of START_COLUMNS) end[i] = start[i]!;
  const alike = start[OUTCOME] === 'unanswered' && MUTABLE_COLUMNS.every((c) => c === OUTCOME || start[c] === end[c]);
  end[STARTED_JSON] = alike ? '' : startedJson(start);
}

/**
 * The request of an exchange row: its own JSON (v1 rows, made-up requests), else the message of
 * its request frame, else (that frame was lost) what the row itself says of the request.
 */
function requestOf(r: Row, frames?: FrameMessages): JsonRpcMessage {
  if (r.request_json !== '') return JSON.parse(r.request_json as string) as JsonRpcMessage;
  const fromFrame = frames ? frames(r.request_frame_id as number | null, 'request') : frameMessage(r.request_raw, r.request_batch_index);
  if (fromFrame !== undefined) return fromFrame;
  const id = r.id_type === 'string' ? r.id_text : idFromText(r.id_text as string, 'number');
  return { jsonrpc: '2.0', id, method: r.method } as JsonRpcMessage;
}

/** A row's response: its JSON, else the message its frame's bytes parse to; undefined when unanswered. */
export function responseOf(r: Row, frames?: FrameMessages): JsonRpcMessage | undefined {
  if (r.response_json !== null) return JSON.parse(r.response_json as string) as JsonRpcMessage;
  return frames ? frames(r.response_frame_id as number | null, 'response') : frameMessage(r.response_raw, r.response_batch_index);
}

/**
 * Where a row read without its frames joined in gets their messages: by the frame's row id (null:
 * the row has no such frame); undefined when there is no message there.
 */
export type FrameMessages = (frameId: number | null, side: 'request' | 'response') => JsonRpcMessage | undefined;

/** The message in a frame's bytes (`raw`, element `batchIndex` of a batch); undefined if none or they do not parse. */
export function frameMessage(raw: unknown, batchIndex: unknown): JsonRpcMessage | undefined {
  if (!Buffer.isBuffer(raw)) return undefined;
  try {
    return messageOf(raw, (batchIndex as number | null | undefined) ?? null);
  } catch {
    return undefined; // cannot happen for a message frame; a damaged file reads as "no copy"
  }
}

/** An exchange row as the exchange it holds; `frames` when the row was read without its frames' bytes. */
export function rowToExchange(r: Row, frames?: FrameMessages): StoredExchange {
  const ex = { rowid: r.id as number, recordingId: r.recording_id as number, state: r.state as ExchangeState };
  return exchangeFields(ex, r, frames, true) as StoredExchange;
}

/**
 * The exchange's fields from its row, added to `o` in one fixed order (events are compared and
 * exported as they come). `end: false` gives the exchange as it started: nothing that a response,
 * progress or cancellation added (the fields saved at the start are put back by the caller).
 * Built in place: events() makes two per exchange, and copying objects to drop fields was most of it.
 */
function exchangeFields(o: object, r: Row, frames: FrameMessages | undefined, end: boolean): Exchange {
  const ex = o as Exchange;
  const idType = r.id_type as IdType;
  const idText = r.id_text as string;
  ex.key = r.key as string;
  ex.connectionId = r.connection_id as string;
  ex.direction = r.direction as Exchange['direction'];
  ex.id = idType === 'string' ? idText : (idFromText(idText, 'number') as JsonRpcId);
  ex.idType = idType;
  ex.method = r.method as string;
  ex.era = r.era as Exchange['era'];
  ex.request = requestOf(r, frames);
  ex.startUs = r.start_us as number;
  ex.outcome = r.outcome as Outcome;
  ex.isError = end && r.is_error === 1;
  ex.progress = !end || r.progress_json === null ? [] : (JSON.parse(r.progress_json as string) as Exchange['progress']);
  ex.responseAfterCancel = end && r.response_after_cancel === 1;
  ex.requestSeq = r.request_seq as number;
  opt(ex, 'target', r.target);
  opt(ex, 'protocolVersion', r.protocol_version);
  opt(ex, 'sessionId', r.session_id);
  if (end) {
    opt(ex, 'response', responseOf(r, frames));
    opt(ex, 'endUs', r.end_us);
    opt(ex, 'latencyUs', r.latency_us);
    opt(ex, 'errorCode', r.error_code);
    opt(ex, 'errorMessage', r.error_message);
    if (r.cancelled === 1) {
      ex.cancel = { timeUs: r.cancel_us as number, by: r.cancel_by as 'c2s' };
      opt(ex.cancel, 'reason', r.cancel_reason);
    }
    opt(ex as StoredExchange, 'responseSeq', r.response_seq);
    opt(ex, 'transport', r.transport_json, (s: string) => JSON.parse(s) as ExchangeTransport);
  }
  opt(ex, 'operationKey', r.operation_key);
  return ex;
}

/** The plain columns of a row read by SQL.exchangeHeads. */
export function rowToHead(r: Row): ExchangeHead {
  const h: ExchangeHead = {
    rowid: r.id as number,
    recordingId: r.recording_id as number,
    state: r.state as ExchangeState,
    connectionId: r.connection_id as string,
    direction: r.direction as Exchange['direction'],
    method: r.method as string,
    era: r.era as Exchange['era'],
    startUs: r.start_us as number,
    outcome: r.outcome as Outcome,
    requestSeq: r.request_seq as number,
    answered: r.answered === 1,
  };
  opt(h, 'target', r.target);
  opt(h, 'protocolVersion', r.protocol_version);
  opt(h, 'sessionId', r.session_id);
  opt(h, 'endUs', r.end_us);
  opt(h, 'latencyUs', r.latency_us);
  return h;
}

/**
 * The exchange as it was when it started: the final row minus everything a response, progress or
 * cancellation added, with the fields saved at the start (`started_json`) put back.
 */
export function startedSnapshot(r: Row, frames?: FrameMessages): Exchange {
  const ex = exchangeFields({}, r, frames, false);
  if (r.started_json === null) return ex;
  if (r.started_json === '') {
    ex.outcome = 'unanswered';
    return ex;
  }
  const saved = JSON.parse(r.started_json as string) as Record<string, unknown>;
  const out = ex as unknown as Record<string, unknown>;
  for (const k of MUTABLE_AT_START) {
    if (saved[k] === null || saved[k] === undefined) delete out[k];
    else out[k] = saved[k];
  }
  return ex;
}

export function completionEvent(r: Row, frames?: FrameMessages): TapEvent {
  const exchange = exchangeFields({}, r, frames, true);
  return { type: r.state === 'orphaned' ? 'exchange-orphaned' : 'exchange-completed', exchange };
}
