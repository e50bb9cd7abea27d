/**
 * Pure mapping between TapEvent objects and table rows (column names as in migrations/). Kept apart
 * from recording-store.ts so the SQL module stays small; no SQL here.
 *
 * Invariant: every row object carries every named parameter of its INSERT (null when absent), as
 * better-sqlite3 rejects missing named parameters.
 */
import type { AnomalySeen, ConnectionClosed, ConnectionOpened, ExchangeProgress } from '../model/events.js';
import type { Exchange, ExchangeTransport } from '../model/exchange.js';
import type { Frame, FrameContext } from '../model/frame.js';
import { idFromText, type IdType, type JsonRpcId, type JsonRpcMessage } from '../model/jsonrpc.js';
import type { Outcome } from '../model/outcome.js';
import type { ExchangeState, StoredAnomaly, StoredConnection, StoredExchange, StoredFrame } from './types.js';

type Params = Record<string, string | number | bigint | Buffer | null>;
export type Row = Record<string, unknown>;

const n = <T>(v: T | undefined | null): T | null => (v === undefined ? null : v);
const json = (v: unknown): string | null => (v === undefined ? null : JSON.stringify(v));
const bool = (v: boolean | undefined): number => (v ? 1 : 0);

function idColumns(id: unknown): { id_text: string | null; id_type: string | null } {
  if (typeof id === 'string') return { id_text: id, id_type: 'string' };
  if (typeof id === 'number') return { id_text: String(id), id_type: 'number' };
  if (id === null) return { id_text: null, id_type: 'null' };
  return { id_text: null, id_type: null };
}

export function frameParams(recordingId: number, ord: number, frame: Frame, exchangeKey: string | undefined): Params {
  const c: FrameContext | undefined = frame.context;
  const msg = frame.kind === 'message' ? (frame.message as unknown as Record<string, unknown>) : undefined;
  const ids = msg ? idColumns(msg.id) : { id_text: null, id_type: null };
  return {
    recording_id: recordingId,
    ord,
    seq: frame.seq,
    connection_id: frame.connectionId,
    direction: frame.direction,
    channel: frame.channel,
    time_us: frame.timeUs,
    raw: frame.raw,
    kind: frame.kind,
    invalid_reason: frame.kind === 'invalid' ? frame.reason : null,
    detail: frame.kind === 'invalid' ? frame.detail : null,
    message_kind: frame.kind === 'message' ? frame.messageKind : null,
    method: msg && typeof msg.method === 'string' ? msg.method : null,
    ...ids,
    exchange_key: n(exchangeKey),
    http_status: n(c?.httpStatus),
    sse_event_id: n(c?.sseEventId),
    stream_id: n(c?.streamId),
    context_json: json(c),
    batch_index: frame.kind === 'message' && frame.batch ? frame.batch.index : null,
    batch_size: frame.kind === 'message' && frame.batch ? frame.batch.size : null,
  };
}

/** Rebuilds a frame. A message frame's `message` is re-parsed from the stored (redacted) raw bytes. */
export function rowToFrame(r: Row): StoredFrame {
  const raw = r.raw as Buffer;
  const base = {
    recordingId: r.recording_id as number,
    seq: r.seq as number,
    connectionId: r.connection_id as string,
    direction: r.direction as Frame['direction'],
    channel: r.channel as Frame['channel'],
    timeUs: r.time_us as number,
    raw,
    ...(r.context_json !== null ? { context: JSON.parse(r.context_json as string) as FrameContext } : {}),
    ...(r.exchange_key !== null ? { exchangeKey: r.exchange_key as string } : {}),
  };
  if (r.kind === 'log') return { ...base, kind: 'log', text: raw.toString('utf8') };
  if (r.kind === 'invalid') {
    return { ...base, kind: 'invalid', reason: r.invalid_reason as 'not_json', detail: (r.detail as string | null) ?? '' };
  }
  let value: unknown;
  try {
    value = JSON.parse(raw.toString('utf8'));
  } catch (err) {
    return { ...base, kind: 'invalid', reason: 'not_json', detail: `stored message no longer parses: ${(err as Error).message}` };
  }
  const index = r.batch_index as number | null;
  const message = (index === null ? value : (value as unknown[])[index]) as JsonRpcMessage;
  const frame: StoredFrame = { ...base, kind: 'message', messageKind: r.message_kind as 'request', message };
  if (index !== null) frame.batch = { index, size: r.batch_size as number };
  return frame;
}

/**
 * Fields of an Exchange the correlator may still change after announcing it (an initialize's
 * protocol version comes from its result, for instance), saved as they were at the start so that
 * the started event reads back as it was emitted. Absent fields are saved as null.
 */
const MUTABLE_AT_START = ['outcome', 'era', 'protocolVersion', 'sessionId', 'target', 'operationKey'] as const;

function startedJson(ex: Exchange): string {
  return JSON.stringify(Object.fromEntries(MUTABLE_AT_START.map((k) => [k, ex[k] ?? null])));
}

/** `start`: the started event written in the same row as this completion (see writeEvents). */
export function exchangeParams(recordingId: number, ord: number, ex: Exchange, state: ExchangeState, start?: { ord: number; exchange: Exchange }): Params {
  const t: ExchangeTransport | undefined = ex.transport;
  const started = state === 'started';
  return {
    recording_id: recordingId,
    key: ex.key,
    state,
    started_ord: started ? ord : (start?.ord ?? null),
    completed_ord: started ? null : ord,
    started_json: started ? startedJson(ex) : start ? startedJson(start.exchange) : null,
    connection_id: ex.connectionId,
    direction: ex.direction,
    id_text: typeof ex.id === 'string' ? ex.id : JSON.stringify(ex.id),
    id_type: ex.idType,
    method: ex.method,
    target: n(ex.target),
    era: ex.era,
    protocol_version: n(ex.protocolVersion),
    session_id: n(ex.sessionId),
    start_us: ex.startUs,
    end_us: n(ex.endUs),
    latency_us: n(ex.latencyUs),
    outcome: ex.outcome,
    error_code: n(ex.errorCode),
    error_message: n(ex.errorMessage),
    is_error: bool(ex.isError),
    progress_count: ex.progress?.length ?? 0,
    progress_json: ex.progress && ex.progress.length > 0 ? JSON.stringify(ex.progress) : null,
    cancelled: bool(ex.cancel !== undefined),
    cancel_by: n(ex.cancel?.by),
    cancel_reason: n(ex.cancel?.reason),
    cancel_us: n(ex.cancel?.timeUs),
    response_after_cancel: bool(ex.responseAfterCancel),
    http_status: n(t?.httpStatus),
    transport_error_class: n(t?.errorClass),
    first_event_us: n(t?.firstEventUs),
    sse_event_count: t?.eventTimesUs ? t.eventTimesUs.length : null,
    transport_json: json(t),
    request_json: JSON.stringify(ex.request ?? null),
    response_json: json(ex.response),
    request_seq: ex.requestSeq,
    response_seq: n(ex.responseSeq),
    operation_key: n(ex.operationKey),
  };
}

/** Sets `key` on `o` only when the column is not NULL, so absent optional fields stay absent. */
function opt<T extends object, K extends keyof T>(o: T, key: K, v: unknown, map: (x: never) => T[K] = (x) => x as T[K]): void {
  if (v !== null && v !== undefined) o[key] = map(v as never);
}

export function rowToExchange(r: Row): StoredExchange {
  const idType = r.id_type as IdType;
  const idText = r.id_text as string;
  const ex: StoredExchange = {
    rowid: r.id as number,
    recordingId: r.recording_id as number,
    state: r.state as ExchangeState,
    key: r.key as string,
    connectionId: r.connection_id as string,
    direction: r.direction as Exchange['direction'],
    id: idType === 'string' ? idText : (idFromText(idText, 'number') as JsonRpcId),
    idType,
    method: r.method as string,
    era: r.era as Exchange['era'],
    request: JSON.parse(r.request_json as string) as JsonRpcMessage,
    startUs: r.start_us as number,
    outcome: r.outcome as Outcome,
    isError: r.is_error === 1,
    progress: r.progress_json === null ? [] : (JSON.parse(r.progress_json as string) as Exchange['progress']),
    responseAfterCancel: r.response_after_cancel === 1,
    requestSeq: r.request_seq as number,
  };
  opt(ex, 'target', r.target);
  opt(ex, 'protocolVersion', r.protocol_version);
  opt(ex, 'sessionId', r.session_id);
  opt(ex, 'response', r.response_json, (s: string) => JSON.parse(s) as JsonRpcMessage);
  opt(ex, 'endUs', r.end_us);
  opt(ex, 'latencyUs', r.latency_us);
  opt(ex, 'errorCode', r.error_code);
  opt(ex, 'errorMessage', r.error_message);
  if (r.cancelled === 1) {
    ex.cancel = { timeUs: r.cancel_us as number, by: r.cancel_by as 'c2s' };
    opt(ex.cancel, 'reason', r.cancel_reason);
  }
  opt(ex, 'responseSeq', r.response_seq);
  opt(ex, 'transport', r.transport_json, (s: string) => JSON.parse(s) as ExchangeTransport);
  opt(ex, 'operationKey', r.operation_key);
  return ex;
}

/**
 * The exchange as it was when it started: the final row minus everything a response, progress or
 * cancellation added, with the fields saved at the start (`started_json`) put back.
 */
export function startedSnapshot(r: Row, full: StoredExchange): Exchange {
  const { rowid: _r, recordingId: _i, state: _s, response: _resp, responseSeq: _rs, endUs: _e, latencyUs: _l, ...rest } = full;
  const { errorCode: _c, errorMessage: _m, cancel: _x, transport: _t, ...base } = rest;
  const ex: Exchange = { ...base, isError: false, progress: [], responseAfterCancel: false };
  if (r.started_json === null) return ex;
  const saved = JSON.parse(r.started_json as string) as Record<string, unknown>;
  const out = ex as unknown as Record<string, unknown>;
  for (const k of MUTABLE_AT_START) {
    if (saved[k] === null || saved[k] === undefined) delete out[k];
    else out[k] = saved[k];
  }
  return ex;
}

export function progressParams(recordingId: number, ord: number, e: ExchangeProgress): Params {
  const p = e.progress;
  return {
    recording_id: recordingId,
    ord,
    exchange_key: e.exchangeKey,
    time_us: p.timeUs,
    progress: p.progress,
    total: n(p.total),
    message: n(p.message),
  };
}

export function rowToProgress(r: Row): ExchangeProgress {
  const progress: ExchangeProgress['progress'] = { timeUs: r.time_us as number, progress: r.progress as number };
  opt(progress, 'total', r.total);
  opt(progress, 'message', r.message);
  return { type: 'exchange-progress', exchangeKey: r.exchange_key as string, progress };
}

export function anomalyParams(recordingId: number, ord: number, a: AnomalySeen): Params {
  return {
    recording_id: recordingId,
    ord,
    kind: a.kind,
    connection_id: a.connectionId,
    direction: n(a.direction),
    time_us: a.timeUs,
    detail: a.detail,
    frame_seq: n(a.frameSeq),
    exchange_key: n(a.exchangeKey),
  };
}

export function rowToAnomaly(r: Row): StoredAnomaly {
  const a: StoredAnomaly = {
    type: 'anomaly',
    recordingId: r.recording_id as number,
    rowid: r.id as number,
    kind: r.kind as AnomalySeen['kind'],
    connectionId: r.connection_id as string,
    timeUs: r.time_us as number,
    detail: r.detail as string,
  };
  opt(a, 'direction', r.direction);
  opt(a, 'frameSeq', r.frame_seq);
  opt(a, 'exchangeKey', r.exchange_key);
  return a;
}

export function openedParams(recordingId: number, ord: number, e: ConnectionOpened): Params {
  const c = e.connection;
  return {
    recording_id: recordingId,
    connection_id: c.connectionId,
    transport: c.transport,
    target: c.target,
    pid: n(c.pid),
    session_id: n(c.sessionId),
    peer_json: json(c.peer),
    opened_us: e.timeUs,
    opened_ord: ord,
  };
}

export function closedParams(recordingId: number, ord: number, e: ConnectionClosed): Params {
  return {
    recording_id: recordingId,
    connection_id: e.connectionId,
    closed_us: e.timeUs,
    closed_ord: ord,
    close_reason: e.reason,
    exit_code: n(e.exitCode),
    signal: n(e.signal),
    close_nulls: (e.exitCode === null ? 1 : 0) | (e.signal === null ? 2 : 0),
  };
}

export function rowToConnection(r: Row): StoredConnection {
  const c: StoredConnection = { recordingId: r.recording_id as number, connectionId: r.connection_id as string };
  opt(c, 'transport', r.transport);
  opt(c, 'target', r.target);
  opt(c, 'pid', r.pid);
  opt(c, 'sessionId', r.session_id);
  opt(c, 'peer', r.peer_json, (s: string) => JSON.parse(s) as StoredConnection['peer']);
  opt(c, 'openedUs', r.opened_us);
  opt(c, 'closedUs', r.closed_us);
  opt(c, 'closeReason', r.close_reason);
  opt(c, 'exitCode', r.exit_code);
  opt(c, 'signal', r.signal);
  const nulls = (r.close_nulls as number | null) ?? 0;
  if (nulls & 1) c.exitCode = null;
  if (nulls & 2) c.signal = null;
  return c;
}

export function connectionOpenedEvent(c: StoredConnection): ConnectionOpened {
  const connection: ConnectionOpened['connection'] = {
    connectionId: c.connectionId,
    transport: c.transport ?? 'stdio',
    target: c.target ?? '',
  };
  opt(connection, 'pid', c.pid);
  opt(connection, 'sessionId', c.sessionId);
  opt(connection, 'peer', c.peer);
  return { type: 'connection-opened', timeUs: c.openedUs ?? 0, connection };
}

export function connectionClosedEvent(c: StoredConnection): ConnectionClosed {
  const e: ConnectionClosed = { type: 'connection-closed', timeUs: c.closedUs ?? 0, connectionId: c.connectionId, reason: c.closeReason ?? '' };
  if (c.exitCode !== undefined) e.exitCode = c.exitCode;
  if (c.signal !== undefined) e.signal = c.signal;
  return e;
}
