/**
 * The streaming readers of a recording: its TapEvent stream (a merge by `ord` of one cursor per
 * source table), its frames and the client's own notifications. Each opens fresh statements, so
 * several may iterate at once; while one is open the connection can read but not write.
 */
import type { Database, Statement } from 'better-sqlite3';
import type { TapEvent } from '../model/events.js';
import { CursorSource, mergeByOrd, type OrdSource } from './merge-by-ord.js';
import { ExchangeEvents } from './exchange-events.js';
import { FrameMessageMemory } from './frame-messages.js';
import * as exchangeRows from './exchange-rows.js';
import * as rows from './rows.js';
import { SQL } from './statements.js';
import type { NotificationHead, StoredFrame } from './types.js';

/**
 * The recording as the TapEvent stream the recorder received (minus drops), original times kept.
 * `types`: only the sources of these events are read (an export that ignores the rest reads less).
 */
export function* recordingEvents(db: Database, recordingId: number, opts: { types?: ReadonlySet<TapEvent['type']> } = {}): Generator<TapEvent> {
  const cursor = (sql: string) => keyedRows(db.prepare(sql), recordingId);
  // With the frames streamed, exchanges take their messages from them (parsed once; no join).
  const byId = db.prepare(SQL.frameRawById);
  const memory =
    opts.types && !opts.types.has('frame')
      ? undefined
      : new FrameMessageMemory((id) => {
          const r = byId.get(id) as rows.Row | undefined;
          return r && exchangeRows.frameMessage(r.raw, r.batch_index);
        });
  // Frames are made into events as the merge reads them ahead: an exchange's start comes just
  // before its request frame, which is then held already.
  const frames = function* (): Generator<rows.Row> {
    for (const r of cursor(SQL.framesByOrd)) {
      const event = rows.frameEvent(r);
      memory?.remember(r.id as number, event);
      yield { ord: r.ord, event };
    }
  };
  const started = (r: rows.Row): TapEvent => ({
    type: 'exchange-started',
    exchange: exchangeRows.startedSnapshot(r, memory?.forStart),
  });
  const completed = (r: rows.Row) => exchangeRows.completionEvent(r, memory?.forCompletion);
  const want = (type: TapEvent['type']) => !opts.types || opts.types.has(type);
  const sources: OrdSource[] = [];
  if (want('frame')) sources.push(new CursorSource(frames(), 'ord', (r) => r.event as TapEvent));
  if (want('exchange-started') && want('exchange-completed')) {
    const [s, u] = memory ? [SQL.startedByOrdBare, SQL.unstartedByOrdBare] : [SQL.startedByOrd, SQL.unstartedByOrd];
    sources.push(new ExchangeEvents({ started: cursor(s), unstarted: cursor(u), startedEvent: started, completionEvent: completed }));
  } else if (want('exchange-started')) sources.push(new CursorSource(cursor(memory ? SQL.startedByOrdBare : SQL.startedByOrd), 'started_ord', started));
  else if (want('exchange-completed')) sources.push(new CursorSource(cursor(memory ? SQL.completedByOrdBare : SQL.completedByOrd), 'completed_ord', completed));
  const others: [TapEvent['type'], string, string, (r: rows.Row) => TapEvent][] = [
    ['exchange-progress', SQL.progressByOrd, 'ord', rows.rowToProgress],
    ['anomaly', SQL.anomaliesByOrd, 'ord', rows.anomalyEvent],
    ['connection-opened', SQL.openedByOrd, 'opened_ord', (r) => rows.connectionOpenedEvent(rows.rowToConnection(r))],
    ['connection-closed', SQL.closedByOrd, 'closed_ord', (r) => rows.connectionClosedEvent(rows.rowToConnection(r))],
  ];
  for (const [type, sql, ord, toEvent] of others) if (want(type)) sources.push(new CursorSource(cursor(sql), ord, toEvent));
  yield* mergeByOrd(sources);
}
/**
 * A statement's rows for one recording, read as arrays and keyed here: better-sqlite3 builds row
 * objects property by property in C++, which costs about as much again as reading the row.
 */
function* keyedRows(stmt: Statement, recordingId: number): Generator<rows.Row> {
  stmt.raw(true);
  const cols = stmt.columns().map((c) => c.name);
  for (const values of stmt.iterate(recordingId) as IterableIterator<unknown[]>) {
    const r: rows.Row = {};
    for (let i = 0; i < cols.length; i++) r[cols[i]!] = values[i];
    yield r;
  }
}

/** A recording's frames in `ord` order. */
export function* recordingFrames(db: Database, recordingId: number): Generator<StoredFrame> {
  for (const r of db.prepare('SELECT * FROM frames WHERE recording_id = ? ORDER BY ord').iterate(recordingId)) yield rows.rowToFrame(r as rows.Row);
}

/** The client's own notifications (not cancellations, `initialized` or progress), plain columns in order: what a replay sends. */
export function* clientNotifications(db: Database, recordingId: number): Generator<NotificationHead> {
  for (const r of db.prepare(SQL.clientNotifications).iterate(recordingId) as Iterable<rows.Row>)
    yield {
      rowid: r.id as number,
      recordingId,
      connectionId: r.connection_id as string,
      timeUs: r.time_us as number,
      seq: r.seq as number,
      ...(r.session_id != null ? { sessionId: r.session_id as string } : {}),
    };
}
