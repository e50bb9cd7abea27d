/**
 * A recording as mcptap JSONL (jsonl-format.ts): the recording's TapEvent stream in its original
 * order, keeping what the pipeline needs to rebuild the same exchanges (the wire messages, their
 * HTTP context, connection opens and closes, response streams that ended unanswered) and leaving
 * out what it derives again (exchanges, progress, protocol anomalies).
 */
import type { ConnectionClosed, ConnectionOpened, TapEvent } from '../model/events.js';
import type { Exchange } from '../model/exchange.js';
import type { Frame } from '../model/frame.js';
import type { RecordingStore } from '../store/recording-store.js';
import type { RecordingInfo } from '../store/types.js';
import { isoMicros, JSONL_VERSION, type JsonlHeader, type JsonlHttp, type JsonlLine, type JsonlMessageLine } from './jsonl-format.js';

export function jsonlHeader(info: RecordingInfo): JsonlHeader {
  return {
    mcptap: 'jsonl',
    version: JSONL_VERSION,
    recording: {
      id: info.id,
      transport: info.transport,
      target: info.target,
      started: isoMicros(info.startedUs),
      ...(info.endedUs !== undefined ? { ended: isoMicros(info.endedUs) } : {}),
      ...incompleteOf(info),
      mcptapVersion: info.mcptapVersion,
    },
  };
}

/** What `mcptap ls` calls INCOMPLETE, said in the header so that an import of it is too. */
function incompleteOf(info: RecordingInfo): { incomplete?: string } {
  const why = info.meta?.incomplete;
  if (typeof why === 'string') return { incomplete: why };
  return info.endedUs === undefined ? { incomplete: 'not closed when exported (its tap was still running, or it or its indexer was killed)' } : {};
}

/** The events {@link ExportState} writes lines for: the others (starts, progress, anomalies) are not read at all. */
const EXPORTED: ReadonlySet<TapEvent['type']> = new Set(['connection-opened', 'connection-closed', 'frame', 'exchange-completed']);

/** The lines of a recording's export, header first, each without its newline. */
export function* jsonlLines(store: RecordingStore, recordingId: number): Generator<string> {
  const info = store.getRecording(recordingId)!;
  yield JSON.stringify(jsonlHeader(info));
  const state = new ExportState();
  for (const event of store.events(recordingId, { types: EXPORTED })) {
    for (const line of state.linesOf(event)) yield JSON.stringify(line);
  }
}

/** Close errors that `close` lines repeat; `superseded_by_duplicate_id` comes from a request, not a close. */
const NOT_A_CLOSE = new Set(['superseded_by_duplicate_id']);

class ExportState {
  /** Exchange key -> the stream its request travelled on. */
  private readonly streamOf = new Map<string, string>();
  /** Streams whose end was written already (a batch's exchanges share one). */
  private readonly endedStreams = new Set<string>();
  /** Connection -> why its last requests failed at close. */
  private readonly closeErrors = new Map<string, string>();

  *linesOf(event: TapEvent): Generator<JsonlLine> {
    switch (event.type) {
      case 'connection-opened':
        yield openLine(event);
        return;
      case 'connection-closed':
        yield closeLine(event, this.closeErrors.get(event.connectionId));
        return;
      case 'frame': {
        const stream = event.frame.context?.streamId;
        if (event.exchangeKey !== undefined && stream !== undefined) this.streamOf.set(event.exchangeKey, stream);
        const line = messageLine(event.frame);
        if (line) yield line;
        return;
      }
      case 'exchange-completed':
        yield* this.completion(event.exchange);
        return;
      default:
        return;
    }
  }

  private *completion(ex: Exchange): Generator<JsonlLine> {
    const errorClass = ex.transport?.errorClass;
    if (ex.outcome === 'unanswered' && errorClass !== undefined && !NOT_A_CLOSE.has(errorClass)) this.closeErrors.set(ex.connectionId, errorClass);
    const byStream = ex.outcome === 'transport_error' || (ex.outcome === 'cancelled' && ex.cancel?.by === 'disconnect');
    const stream = this.streamOf.get(ex.key);
    this.streamOf.delete(ex.key);
    if (!byStream || stream === undefined || this.endedStreams.has(`${ex.connectionId}|${stream}`)) return;
    this.endedStreams.add(`${ex.connectionId}|${stream}`);
    const t = ex.outcome === 'cancelled' ? ex.cancel!.timeUs : (ex.transport?.streamEndUs ?? ex.endUs ?? ex.startUs);
    yield {
      event: 'stream-end',
      t: isoMicros(t),
      conn: ex.connectionId,
      stream,
      outcome: ex.outcome === 'cancelled' ? 'cancelled' : 'transport_error',
      ...(errorClass !== undefined ? { errorClass } : {}),
      ...(ex.transport?.httpStatus !== undefined ? { status: ex.transport.httpStatus } : {}),
    };
  }
}

function openLine(e: ConnectionOpened): JsonlLine {
  const c = e.connection;
  return {
    event: 'open',
    t: isoMicros(e.timeUs),
    conn: c.connectionId,
    transport: c.transport,
    target: c.target,
    ...(c.sessionId !== undefined ? { session: c.sessionId } : {}),
    ...(c.pid !== undefined ? { pid: c.pid } : {}),
    ...(c.peer !== undefined ? { peer: c.peer } : {}),
  };
}

function closeLine(e: ConnectionClosed, errorClass: string | undefined): JsonlLine {
  return {
    event: 'close',
    t: isoMicros(e.timeUs),
    conn: e.connectionId,
    reason: e.reason,
    ...(e.exitCode !== undefined ? { exitCode: e.exitCode } : {}),
    ...(e.signal !== undefined ? { signal: e.signal } : {}),
    ...(errorClass !== undefined ? { errorClass } : {}),
  };
}

/** One line per message or batch (a batch's frames share their body: written once, with the first). */
function messageLine(f: Frame): JsonlMessageLine | undefined {
  if (f.kind === 'message' && f.batch && f.batch.index > 0) return undefined;
  const c = f.context;
  const line: JsonlMessageLine = { t: isoMicros(f.timeUs), dir: f.direction, conn: f.connectionId, channel: f.channel };
  if (c?.sessionId !== undefined) line.session = c.sessionId;
  const http = httpOf(f);
  if (http) line.http = http;
  if (f.kind === 'log') line.stderr = f.text;
  else if (f.kind === 'invalid') line.invalid = f.raw.toString('utf8');
  else line.message = f.batch ? JSON.parse(f.raw.toString('utf8')) : f.message;
  return line;
}

function httpOf(f: Frame): JsonlHttp | undefined {
  const c = f.context;
  if (!c) return undefined;
  const h: JsonlHttp = {};
  if (c.streamId !== undefined) h.stream = c.streamId;
  if (c.httpStatus !== undefined) h.status = c.httpStatus;
  if (c.headers !== undefined) h.headers = c.headers;
  if (c.sseEventId !== undefined) h.sseId = c.sseEventId;
  if (c.sseEventName !== undefined) h.sseEvent = c.sseEventName;
  if (c.headerProtocolVersion !== undefined) h.protocolVersion = c.headerProtocolVersion;
  if (c.responseHeadersUs !== undefined) h.responseHeaders = isoMicros(c.responseHeadersUs);
  if (c.streamEndUs !== undefined) h.streamEnd = isoMicros(c.streamEndUs);
  return Object.keys(h).length > 0 ? h : undefined;
}
