/**
 * Pure mapping between TapEvent objects and table rows (column names as in migrations/); exchanges
 * are mapped in exchange-rows.ts. Kept apart from recording-store.ts so the SQL module stays small.
 *
 * Invariant: every `*Values` array has exactly one value per name of its `*_COLS` list, in that
 * order (null when absent): the write statements bind them positionally.
 */
import type { AnomalySeen, ConnectionClosed, ConnectionOpened, ExchangeProgress, FrameSeen, TapEvent } from '../model/events.js';
import type { Frame, FrameContext } from '../model/frame.js';
import type { JsonRpcMessage } from '../model/jsonrpc.js';
import type { RecordingInfo, StoredAnomaly, StoredConnection, StoredFrame } from './types.js';

import { json, n, opt, type Row, type Value } from './row-helpers.js';

export type { Row } from './row-helpers.js';

/** Column order of `frames` rows as written; {@link frameValues} returns values in this order. */
export const FRAME_COLS = [
  'recording_id',
  'ord',
  'seq',
  'connection_id',
  'direction',
  'channel',
  'time_us',
  'raw',
  'kind',
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
/** Positions in {@link FRAME_COLS} that the batch writer reads or replaces. */
export const FRAME_SEQ = 2;
export const FRAME_RAW = 7;

/** A frame row's values in {@link FRAME_COLS} order (a positional array: no per-row object keys to hash). */
export function frameValues(recordingId: number, ord: number, frame: Frame, exchangeKey: string | undefined): Value[] {
  const c: FrameContext | undefined = frame.context;
  const msg = frame.kind === 'message' ? (frame.message as unknown as Record<string, unknown>) : undefined;
  const id = msg?.id;
  const idText = typeof id === 'string' ? id : typeof id === 'number' ? String(id) : null;
  const idType = typeof id === 'string' ? 'string' : typeof id === 'number' ? 'number' : id === null && msg ? 'null' : null;
  const batch = frame.kind === 'message' ? frame.batch : undefined;
  return [
    recordingId,
    ord,
    frame.seq,
    frame.connectionId,
    frame.direction,
    frame.channel,
    frame.timeUs,
    frame.raw,
    frame.kind,
    frame.kind === 'invalid' ? frame.reason : null,
    frame.kind === 'invalid' ? frame.detail : null,
    frame.kind === 'message' ? frame.messageKind : null,
    msg && typeof msg.method === 'string' ? msg.method : null,
    idText,
    idType,
    n(exchangeKey),
    n(c?.httpStatus),
    n(c?.sseEventId),
    n(c?.streamId),
    json(c),
    batch ? batch.index : null,
    batch ? batch.size : null,
  ];
}

/** The message a stored message frame holds: its raw bytes parsed, or element `batchIndex` of a batch. Throws if they do not parse. */
export function messageOf(raw: Buffer, batchIndex: number | null): JsonRpcMessage {
  const value: unknown = JSON.parse(raw.toString('utf8'));
  return (batchIndex === null ? value : (value as unknown[])[batchIndex]) as JsonRpcMessage;
}

/** What every frame has, from its row (the context last), in the order rowToFrame has always given it. */
function frameHead(r: Row): Record<string, unknown> {
  const head: Record<string, unknown> = {
    seq: r.seq,
    connectionId: r.connection_id,
    direction: r.direction,
    channel: r.channel,
    timeUs: r.time_us,
    raw: r.raw,
  };
  if (r.context_json !== null) head.context = JSON.parse(r.context_json as string) as FrameContext;
  return head;
}

/**
 * `head` (the fields before a frame's kind, a fresh object) completed with the fields of its kind,
 * in place (no copy: events() makes one per frame). A message frame's `message` is parsed from the
 * stored (redacted) raw bytes; if they no longer parse, the frame reads as invalid.
 */
function withKind(r: Row, head: Record<string, unknown>): Frame {
  const raw = r.raw as Buffer;
  if (r.kind === 'log') return Object.assign(head, { kind: 'log', text: raw.toString('utf8') }) as unknown as Frame;
  if (r.kind === 'invalid')
    return Object.assign(head, { kind: 'invalid', reason: r.invalid_reason, detail: (r.detail as string | null) ?? '' }) as unknown as Frame;
  const index = r.batch_index as number | null;
  let message: JsonRpcMessage;
  try {
    message = messageOf(raw, index);
  } catch (err) {
    return Object.assign(head, {
      kind: 'invalid',
      reason: 'not_json',
      detail: `stored message no longer parses: ${(err as Error).message}`,
    }) as unknown as Frame;
  }
  head.kind = 'message';
  head.messageKind = r.message_kind;
  head.message = message;
  if (index !== null) head.batch = { index, size: r.batch_size as number };
  return head as unknown as Frame;
}

/** Rebuilds a frame from its row. */
export function rowToFrame(r: Row): StoredFrame {
  const head: Record<string, unknown> = { recordingId: r.recording_id, ...frameHead(r) };
  if (r.exchange_key !== null) head.exchangeKey = r.exchange_key;
  return withKind(r, head) as StoredFrame;
}

export const PROGRESS_COLS = ['recording_id', 'ord', 'exchange_key', 'time_us', 'progress', 'total', 'message'] as const;

export function progressValues(recordingId: number, ord: number, e: ExchangeProgress): Value[] {
  const p = e.progress;
  return [recordingId, ord, e.exchangeKey, p.timeUs, p.progress, n(p.total), n(p.message)];
}

export function rowToProgress(r: Row): ExchangeProgress {
  const progress: ExchangeProgress['progress'] = { timeUs: r.time_us as number, progress: r.progress as number };
  opt(progress, 'total', r.total);
  opt(progress, 'message', r.message);
  return { type: 'exchange-progress', exchangeKey: r.exchange_key as string, progress };
}

export const ANOMALY_COLS = ['recording_id', 'ord', 'kind', 'connection_id', 'direction', 'time_us', 'detail', 'frame_seq', 'exchange_key'] as const;

export function anomalyValues(recordingId: number, ord: number, a: AnomalySeen): Value[] {
  return [recordingId, ord, a.kind, a.connectionId, n(a.direction), a.timeUs, a.detail, n(a.frameSeq), n(a.exchangeKey)];
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

export const OPENED_COLS = ['recording_id', 'connection_id', 'transport', 'target', 'pid', 'session_id', 'peer_json', 'opened_us', 'opened_ord'] as const;

export function openedValues(recordingId: number, ord: number, e: ConnectionOpened): Value[] {
  const c = e.connection;
  return [recordingId, c.connectionId, c.transport, c.target, n(c.pid), n(c.sessionId), json(c.peer), e.timeUs, ord];
}

export const CLOSED_COLS = ['recording_id', 'connection_id', 'closed_us', 'closed_ord', 'close_reason', 'exit_code', 'signal', 'close_nulls'] as const;

export function closedValues(recordingId: number, ord: number, e: ConnectionClosed): Value[] {
  const nulls = (e.exitCode === null ? 1 : 0) | (e.signal === null ? 2 : 0);
  return [recordingId, e.connectionId, e.timeUs, ord, e.reason, n(e.exitCode), n(e.signal), nulls];
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

/**
 * The frame event of a row of SQL.framesByOrd: what {@link rowToFrame} gives minus its recording id
 * and exchange key (the event carries the key), built in one go (events() reads every frame).
 */
export function frameEvent(r: Row): FrameSeen {
  const frame = withKind(r, frameHead(r));
  return r.exchange_key === null ? { type: 'frame', frame } : { type: 'frame', frame, exchangeKey: r.exchange_key as string };
}

export function anomalyEvent(r: Row): TapEvent {
  const { recordingId: _r, rowid: _i, ...a } = rowToAnomaly(r);
  return a;
}

export function toRecordingInfo(r: Row): RecordingInfo {
  const info: RecordingInfo = {
    id: r.id as number,
    transport: r.transport as RecordingInfo['transport'],
    target: r.target as string,
    startedUs: r.started_us as number,
    mcptapVersion: r.mcptap_version as string,
    droppedQueue: r.dropped_queue as number,
    droppedWrite: r.dropped_write as number,
  };
  if (r.ended_us !== null) info.endedUs = r.ended_us as number;
  if (r.meta_json !== null) info.meta = JSON.parse(r.meta_json as string) as Record<string, unknown>;
  return info;
}
