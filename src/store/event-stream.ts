/**
 * The streaming readers of a recording: its TapEvent stream (a merge by `ord` of one cursor per
 * source table), its frames and the client's own notifications. Each opens fresh statements, so
 * several may iterate at once; while one is open the connection can read but not write.
 */
import type { Database } from 'better-sqlite3';
import type { TapEvent } from '../model/events.js';
import { mergeByOrd, type OrdSource } from './merge-by-ord.js';
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
  const cursor = (sql: string) => db.prepare(sql).iterate(recordingId) as IterableIterator<rows.Row>;
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
  const all: [TapEvent['type'], () => OrdSource][] = [
    ['frame', () => ({ rows: frames(), ord: 'ord', toEvent: (r) => r.event as TapEvent })],
    [
      'exchange-started',
      () => ({
        rows: cursor(memory ? SQL.startedByOrdBare : SQL.startedByOrd),
        ord: 'started_ord',
        toEvent: (r) => ({ type: 'exchange-started', exchange: exchangeRows.startedSnapshot(r, exchangeRows.rowToExchange(r, memory?.forStart)) }),
      }),
    ],
    [
      'exchange-completed',
      () => ({
        rows: cursor(memory ? SQL.completedByOrdBare : SQL.completedByOrd),
        ord: 'completed_ord',
        toEvent: (r) => exchangeRows.completionEvent(r, memory?.forCompletion),
      }),
    ],
    ['exchange-progress', () => ({ rows: cursor(SQL.progressByOrd), ord: 'ord', toEvent: rows.rowToProgress })],
    ['anomaly', () => ({ rows: cursor(SQL.anomaliesByOrd), ord: 'ord', toEvent: rows.anomalyEvent })],
    ['connection-opened', () => ({ rows: cursor(SQL.openedByOrd), ord: 'opened_ord', toEvent: (r) => rows.connectionOpenedEvent(rows.rowToConnection(r)) })],
    ['connection-closed', () => ({ rows: cursor(SQL.closedByOrd), ord: 'closed_ord', toEvent: (r) => rows.connectionClosedEvent(rows.rowToConnection(r)) })],
  ];
  const sources = all.filter(([type]) => !opts.types || opts.types.has(type)).map(([, source]) => source());
  yield* mergeByOrd(sources);
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
