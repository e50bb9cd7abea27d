/**
 * The recording file: the only module that runs SQL (schema in migrations/, the long statement
 * texts in statements.ts). Synchronous
 * by design (better-sqlite3); callers that must not block keep it off their hot path, as the
 * recorder sink does with its batching queue.
 *
 * Invariants: JSON-RPC ids round-trip verbatim (text + type); `ord` orders a recording's events;
 * while an `events()` / `frames()` iterator is open the connection can read but not write.
 */
import { existsSync } from 'node:fs';
import BetterSqlite3, { type Database, type Statement } from 'better-sqlite3';
import { ExitCode, McptapError } from '../cli/exit-codes.js';
import type { TapEvent } from '../model/events.js';
import type { Exchange } from '../model/exchange.js';
import type { Frame } from '../model/frame.js';
import { parseExchangeRef, type ExchangeLookup, type ExchangeRef } from './exchange-ref.js';
import { checkIsRecording } from './migrations/file-check.js';
import { LATEST_SCHEMA_VERSION, MIGRATIONS, migrate } from './migrations/index.js';
import { mergeByOrd, type OrdSource } from './merge-by-ord.js';
import * as rows from './rows.js';
import { SQL } from './statements.js';
import { addOutcome, summariseMethods, type ExchangeFact } from './summary.js';
import type {
  ExchangeFilter, ListedOutcome, NewRecording, OrderedEvent, RecordingEnd, RecordingInfo, RecordingListing,
  RecordingSummary, StoredAnomaly, StoredConnection, StoredExchange, StoredFrame, WriteResult,
} from './types.js';

export interface OpenStoreOptions {
  /** Create the file if missing (recorder). Readers leave it false: a missing file is an error. */
  create?: boolean;
  /** How long a write waits for a lock held by another process. Keep short for recorders. */
  busyTimeoutMs?: number;
}

const ROW_ERROR_CODES = /^SQLITE_(CONSTRAINT|MISMATCH|TOOBIG|RANGE)/;

/** A failure confined to one row: the transaction is still usable and the batch can go on. */
function isRowError(err: unknown): boolean {
  if (err instanceof TypeError || err instanceof RangeError) return true;
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'string' && ROW_ERROR_CODES.test(code);
}

export class RecordingStore {
  private readonly cache = new Map<string, Statement>();

  /** Opens (and for `create`, creates) a recording file, validates it and migrates it to the latest schema. */
  static open(path: string, opts: OpenStoreOptions = {}): RecordingStore {
    if (!opts.create && !existsSync(path)) {
      throw new McptapError('MCPTAP_RECORDING_NOT_FOUND', `no such recording file: ${path}`, ExitCode.InvalidInput);
    }
    let db: Database;
    try {
      db = new BetterSqlite3(path, { fileMustExist: !opts.create, timeout: opts.busyTimeoutMs ?? (opts.create ? 100 : 2000) });
    } catch (err) {
      throw new McptapError('MCPTAP_RECORDING_UNREADABLE', `cannot open recording ${path}: ${(err as Error).message}`, ExitCode.InvalidInput);
    }
    try {
      return new RecordingStore(db, { create: opts.create, label: path });
    } catch (err) {
      db.close();
      throw err;
    }
  }

  /** Takes an open connection (injected for tests and embedding); validates and migrates it. */
  constructor(readonly db: Database, opts: { create?: boolean; label?: string } = {}) {
    const label = opts.label ?? 'database';
    checkIsRecording(db, label, opts.create ?? false);
    if (opts.create) db.pragma('journal_mode = WAL');
    db.pragma('foreign_keys = ON');
    db.pragma('synchronous = NORMAL');
    migrate(db, MIGRATIONS, label);
  }

  get isOpen(): boolean {
    return this.db.open;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  private stmt(sql: string): Statement {
    let s = this.cache.get(sql);
    if (!s) this.cache.set(sql, (s = this.db.prepare(sql)));
    return s;
  }

  // ---- write side -------------------------------------------------------------------------

  beginRecording(info: NewRecording): number {
    const r = this.stmt(SQL.insertRecording).run({
      transport: info.transport,
      target: info.target,
      started_us: info.startedUs,
      mcptap_version: info.mcptapVersion,
      meta_json: info.meta === undefined ? null : JSON.stringify(info.meta),
    });
    return Number(r.lastInsertRowid);
  }

  endRecording(recordingId: number, end: RecordingEnd): void {
    this.stmt(SQL.endRecording).run({ id: recordingId, ended_us: end.endedUs, dropped_queue: end.droppedQueue, dropped_write: end.droppedWrite });
  }

  /**
   * Writes a batch in ONE transaction. A bad row is skipped and counted in `rejected`; anything that
   * breaks the transaction (disk full, lock, closed database) throws and nothing of the batch is kept.
   */
  writeEvents(recordingId: number, batch: readonly OrderedEvent[]): WriteResult {
    const result: WriteResult = { written: 0, rejected: 0 };
    const completedAt = completionIndexes(batch);
    // Started events whose completion comes later in this batch: written as one row with it,
    // which halves the exchange writes of a busy tap (most exchanges start and end within a batch).
    const deferred = new Map<string, OrderedEvent>();
    this.db.transaction(() => {
      batch.forEach((item, i) => {
        const e = item?.event;
        if (e?.type === 'exchange-started' && (completedAt.get(e.exchange?.key) ?? -1) > i) return void deferred.set(e.exchange.key, item);
        const start = e?.type === 'exchange-completed' || e?.type === 'exchange-orphaned' ? deferred.get(e.exchange?.key) : undefined;
        if (start) deferred.delete((e as { exchange: Exchange }).exchange.key);
        const n = start ? 2 : 1;
        try {
          this.writeOne(recordingId, item, start);
          result.written += n;
        } catch (err) {
          if (!isRowError(err) || !this.db.inTransaction) throw err;
          result.rejected += n;
          result.firstError ??= err as Error;
        }
      });
    })();
    return result;
  }

  private writeOne(recordingId: number, { ord, event: e }: OrderedEvent, start?: OrderedEvent): void {
    const started = start?.event.type === 'exchange-started' ? { ord: start.ord, exchange: start.event.exchange } : undefined;
    switch (e.type) {
      case 'frame':
        return void this.stmt(SQL.insertFrame).run(rows.frameParams(recordingId, ord, e.frame, e.exchangeKey));
      case 'exchange-started':
        return void this.stmt(SQL.upsertExchange).run(rows.exchangeParams(recordingId, ord, e.exchange, 'started'));
      case 'exchange-completed':
        return void this.stmt(SQL.upsertExchange).run(rows.exchangeParams(recordingId, ord, e.exchange, 'completed', started));
      case 'exchange-orphaned':
        return void this.stmt(SQL.upsertExchange).run(rows.exchangeParams(recordingId, ord, e.exchange, 'orphaned', started));
      case 'exchange-progress':
        return void this.stmt(SQL.insertProgress).run(rows.progressParams(recordingId, ord, e));
      case 'anomaly':
        return void this.stmt(SQL.insertAnomaly).run(rows.anomalyParams(recordingId, ord, e));
      case 'connection-opened':
        return void this.stmt(SQL.connectionOpened).run(rows.openedParams(recordingId, ord, e));
      case 'connection-closed':
        return void this.stmt(SQL.connectionClosed).run(rows.closedParams(recordingId, ord, e));
      default:
        throw new TypeError(`unknown event type ${JSON.stringify((e as { type?: unknown } | null)?.type)}`);
    }
  }

  // ---- read side --------------------------------------------------------------------------

  listRecordings(): RecordingListing[] {
    const outcomes = this.stmt(`SELECT recording_id r, ${SQL.listedOutcome} o, count(*) n FROM exchanges GROUP BY 1, 2`).all() as { r: number; o: ListedOutcome; n: number }[];
    const anomalies = new Map((this.stmt('SELECT recording_id r, count(*) n FROM anomalies GROUP BY 1').all() as { r: number; n: number }[]).map((a) => [a.r, a.n]));
    return (this.stmt('SELECT * FROM recordings ORDER BY id').all() as rows.Row[]).map((r) => {
      const info = toRecordingInfo(r);
      const listing: RecordingListing = { ...info, exchanges: 0, outcomes: {}, anomalies: anomalies.get(info.id) ?? 0 };
      for (const o of outcomes) {
        if (o.r !== info.id) continue;
        listing.exchanges += o.n;
        addOutcome(listing.outcomes, o.o, o.n);
      }
      return listing;
    });
  }

  getRecording(id: number): RecordingInfo | undefined {
    const r = this.stmt('SELECT * FROM recordings WHERE id = ?').get(id) as rows.Row | undefined;
    return r && toRecordingInfo(r);
  }

  /** The most recent recording in the file (the default for `show`). */
  latestRecordingId(): number | undefined {
    return (this.stmt('SELECT max(id) id FROM recordings').get() as { id: number | null }).id ?? undefined;
  }

  connections(recordingId: number): StoredConnection[] {
    return (this.stmt('SELECT * FROM connections WHERE recording_id = ? ORDER BY opened_us, connection_id').all(recordingId) as rows.Row[]).map(rows.rowToConnection);
  }

  /** Exchanges in start order. `outcome: 'pending'` selects exchanges still in flight at the end. */
  exchanges(filter: ExchangeFilter = {}): StoredExchange[] {
    // One statement for every filter combination: an absent filter is NULL and matches all.
    const sql = `SELECT * FROM exchanges WHERE (@r IS NULL OR recording_id = @r) AND (@m IS NULL OR method = @m)
      AND (@t IS NULL OR target = @t) AND (@o IS NULL OR ${SQL.listedOutcome} = @o)
      ORDER BY recording_id, start_us, id LIMIT @limit OFFSET @offset`;
    const p = { r: filter.recordingId ?? null, m: filter.method ?? null, t: filter.target ?? null, o: filter.outcome ?? null, limit: filter.limit ?? -1, offset: filter.offset ?? 0 };
    return (this.stmt(sql).all(p) as rows.Row[]).map(rows.rowToExchange);
  }

  /** Every exchange a reference matches (an id may be reused, or appear on several connections). */
  exchangesByRef(recordingId: number, ref: ExchangeRef): StoredExchange[] {
    for (const lookup of parseExchangeRef(ref)) {
      const found = this.lookup(recordingId, lookup);
      if (found.length > 0) return found;
    }
    return [];
  }

  exchange(recordingId: number, ref: ExchangeRef): StoredExchange | undefined {
    return this.exchangesByRef(recordingId, ref)[0];
  }

  private lookup(recordingId: number, l: ExchangeLookup): StoredExchange[] {
    let found: rows.Row[];
    if ('key' in l) found = this.stmt('SELECT * FROM exchanges WHERE recording_id = ? AND key = ?').all(recordingId, l.key) as rows.Row[];
    else if ('rowid' in l) found = this.stmt('SELECT * FROM exchanges WHERE recording_id = ? AND id = ?').all(recordingId, l.rowid) as rows.Row[];
    else {
      const text = typeof l.id === 'string' ? l.id : String(l.id);
      found = this.stmt(`SELECT * FROM exchanges WHERE recording_id = @r AND id_text = @t AND id_type = @ty
        AND (@c IS NULL OR connection_id = @c) AND (@d IS NULL OR direction = @d) ORDER BY start_us, id`)
        .all({ r: recordingId, t: text, ty: typeof l.id === 'string' ? 'string' : 'number', c: l.connectionId ?? null, d: l.direction ?? null }) as rows.Row[];
    }
    return found.map(rows.rowToExchange);
  }

  /** Frames linked to the exchange, plus its request/response frames even if unlinked, in seq order. */
  framesOfExchange(recordingId: number, exchangeKey: string): StoredFrame[] {
    return (this.stmt(`SELECT f.* FROM frames f WHERE f.recording_id = @r AND (f.exchange_key = @k OR f.seq IN (
        SELECT request_seq FROM exchanges WHERE recording_id = @r AND key = @k
        UNION ALL SELECT response_seq FROM exchanges WHERE recording_id = @r AND key = @k))
      ORDER BY f.seq, f.id`).all({ r: recordingId, k: exchangeKey }) as rows.Row[]).map(rows.rowToFrame);
  }

  *frames(recordingId: number): Generator<StoredFrame> {
    // A fresh statement per call: a cached one cannot be iterated twice at once.
    for (const r of this.db.prepare('SELECT * FROM frames WHERE recording_id = ? ORDER BY ord').iterate(recordingId)) yield rows.rowToFrame(r as rows.Row);
  }

  anomalies(recordingId: number, opts: { exchangeKey?: string } = {}): StoredAnomaly[] {
    return (this.stmt('SELECT * FROM anomalies WHERE recording_id = @r AND (@k IS NULL OR exchange_key = @k) ORDER BY ord')
      .all({ r: recordingId, k: opts.exchangeKey ?? null }) as rows.Row[]).map(rows.rowToAnomaly);
  }

  summary(recordingId: number): RecordingSummary {
    const count = (table: string) => (this.stmt(`SELECT count(*) n FROM ${table} WHERE recording_id = ?`).get(recordingId) as { n: number }).n;
    const facts = this.stmt(`SELECT method, ${SQL.listedOutcome} outcome, latency_us latencyUs FROM exchanges WHERE recording_id = ?`).all(recordingId) as ExchangeFact[];
    const outcomes = {};
    for (const f of facts) addOutcome(outcomes, f.outcome);
    const kinds = this.stmt('SELECT kind, count(*) n FROM anomalies WHERE recording_id = ? GROUP BY kind ORDER BY kind').all(recordingId) as { kind: string; n: number }[];
    return {
      recordingId,
      frames: count('frames'),
      connections: count('connections'),
      exchanges: facts.length,
      outcomes,
      anomalies: kinds.reduce((s, k) => s + k.n, 0),
      anomalyKinds: Object.fromEntries(kinds.map((k) => [k.kind, k.n])),
      methods: summariseMethods(facts),
    };
  }

  /**
   * The recording as the TapEvent stream the recorder received (minus drops), original times kept:
   * a merge by `ord` of one ordered cursor per source table.
   */
  *events(recordingId: number): Generator<TapEvent> {
    // Fresh statements: several cursors are open at once, and a cached one may be iterating already.
    const cursor = (sql: string) => this.db.prepare(sql).iterate(recordingId) as Iterator<rows.Row>;
    const sources: OrdSource[] = [
      { rows: cursor(SQL.framesByOrd), ord: 'ord', toEvent: frameEvent },
      { rows: cursor(SQL.startedByOrd), ord: 'started_ord', toEvent: (r) => ({ type: 'exchange-started', exchange: rows.startedSnapshot(r, rows.rowToExchange(r)) }) },
      { rows: cursor(SQL.completedByOrd), ord: 'completed_ord', toEvent: completionEvent },
      { rows: cursor(SQL.progressByOrd), ord: 'ord', toEvent: rows.rowToProgress },
      { rows: cursor(SQL.anomaliesByOrd), ord: 'ord', toEvent: anomalyEvent },
      { rows: cursor(SQL.openedByOrd), ord: 'opened_ord', toEvent: (r) => rows.connectionOpenedEvent(rows.rowToConnection(r)) },
      { rows: cursor(SQL.closedByOrd), ord: 'closed_ord', toEvent: (r) => rows.connectionClosedEvent(rows.rowToConnection(r)) },
    ];
    yield* mergeByOrd(sources);
  }
}

/** Exchange key -> index of its last completion (completed or orphaned) in the batch. */
function completionIndexes(batch: readonly OrderedEvent[]): Map<unknown, number> {
  const at = new Map<unknown, number>();
  batch.forEach((item, i) => {
    const e = item?.event;
    if (e?.type === 'exchange-completed' || e?.type === 'exchange-orphaned') at.set(e.exchange?.key, i);
  });
  return at;
}

function frameEvent(r: rows.Row): TapEvent {
  const { recordingId: _r, exchangeKey, ...frame } = rows.rowToFrame(r);
  return exchangeKey === undefined ? { type: 'frame', frame: frame as Frame } : { type: 'frame', frame: frame as Frame, exchangeKey };
}

function completionEvent(r: rows.Row): TapEvent {
  const { rowid: _r, recordingId: _i, state, ...exchange } = rows.rowToExchange(r);
  return { type: state === 'orphaned' ? 'exchange-orphaned' : 'exchange-completed', exchange };
}

function anomalyEvent(r: rows.Row): TapEvent {
  const { recordingId: _r, rowid: _i, ...a } = rows.rowToAnomaly(r);
  return a;
}

function toRecordingInfo(r: rows.Row): RecordingInfo {
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

export { LATEST_SCHEMA_VERSION };
