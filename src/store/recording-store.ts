/**
 * The recording file: the only module that runs SQL (schema in migrations/, the long statement
 * texts in statements.ts). Synchronous by design (better-sqlite3); callers that must not block keep
 * it off their thread, as a tap does: its pipeline thread spools the traffic and the indexer process
 * (pipeline/indexer-process.ts), whose recorder sink runs `writeBatch` on its own connection.
 *
 * Invariants: JSON-RPC ids round-trip verbatim (text + type); `ord` orders a recording's events;
 * while an `events()` / `frames()` iterator is open the connection can read but not write.
 */
import { existsSync, statSync } from 'node:fs';
import BetterSqlite3, { type Database, type Statement } from 'better-sqlite3';
import { McptapError } from '../errors.js';
import type { TapEvent } from '../model/events.js';
import { parseExchangeRef, type ExchangeLookup, type ExchangeRef } from './exchange-ref.js';
import { checkIsRecording } from './migrations/file-check.js';
import { LATEST_SCHEMA_VERSION, MIGRATIONS, migrate, schemaVersion } from './migrations/index.js';
import { clientNotifications, recordingEvents, recordingFrames } from './event-stream.js';
import { EventBatchEncoder, type EncodedBatch } from './event-batch.js';
import * as exchangeRows from './exchange-rows.js';
import { BatchRowsWriter } from './batch-rows-writer.js';
import * as rows from './rows.js';
import { SQL } from './statements.js';
import { addOutcome, summariseMethods, type MethodLatency, type MethodOutcomeCount } from './summary.js';
import type {
  ExchangeFilter,
  ExchangeHead,
  ListedOutcome,
  NewRecording,
  OrderedEvent,
  RecordingEnd,
  RecordingInfo,
  RecordingListing,
  RecordingSummary,
  StoredAnomaly,
  StoredConnection,
  StoredExchange,
  StoredFrame,
  NotificationHead,
  StoredLongStream,
  WriteResult,
} from './types.js';

export interface OpenStoreOptions {
  /** Create the file if missing (recorder). Readers leave it false: a missing file is an error. */
  create?: boolean;
  /** How long a write waits for a lock held by another process. Keep short for recorders. */
  busyTimeoutMs?: number;
  /** Page cache of this connection in KiB (SQLite's default is 2 000); a busy writer wants more. */
  cacheKiB?: number;
  /** Open the file read-only (`mcptap mcp`, `show --follow`): nothing is migrated or written; an older schema is refused. */
  readOnly?: boolean;
}

/**
 * Page size of new files. Frames are stored whole and MCP messages are often kilobytes: with
 * SQLite's default 4 KiB pages a 10 KB frame spans an overflow chain, and every page costs a write
 * to the WAL and again to the file; 32 KiB pages hold most messages in one page and cut the writer's
 * CPU per 10 KB exchange by roughly 40% (small messages are unaffected). Existing files keep theirs.
 */
const NEW_FILE_PAGE_SIZE = 32 * 1024;

/**
 * Switches the file to WAL. SQLite takes the exclusive lock for that switch without calling the busy
 * handler, so a tap creating the file while another does sees SQLITE_BUSY at once: retry, within the
 * connection's busy timeout.
 */
function enterWalMode(db: Database): void {
  const deadline = Date.now() + (db.pragma('busy_timeout', { simple: true }) as number);
  const nap = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (err) {
      if ((err as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() >= deadline) throw err;
      Atomics.wait(nap, 0, 0, 5);
    }
  }
}

export class RecordingStore {
  private readonly cache = new Map<string, Statement>();
  private rowsWriter: BatchRowsWriter | undefined;

  /**
   * Whether `path` holds a recording already (a tap's indexer is up and has begun it); false while
   * the file is missing, being created, or not a recording. For watching a tap from outside.
   */
  static hasRecording(path: string): boolean {
    if (!existsSync(path)) return false;
    try {
      const store = RecordingStore.open(path);
      try {
        return store.listRecordings().length > 0;
      } finally {
        store.close();
      }
    } catch {
      return false;
    }
  }

  /** Opens (and for `create`, creates) a recording file, validates it and migrates it to the latest schema. */
  static open(path: string, opts: OpenStoreOptions = {}): RecordingStore {
    if (!opts.create && !existsSync(path)) {
      throw new McptapError('MCPTAP_RECORDING_NOT_FOUND', `no such recording file: ${path}`);
    }
    if (!opts.create && statSync(path).isDirectory()) throw new McptapError('MCPTAP_RECORDING_UNREADABLE', `${path} is a directory, not a recording file`);
    let db: Database;
    try {
      db = new BetterSqlite3(path, {
        fileMustExist: !opts.create,
        readonly: opts.readOnly === true && !opts.create,
        timeout: opts.busyTimeoutMs ?? (opts.create ? 100 : 2000),
      });
    } catch (err) {
      throw new McptapError('MCPTAP_RECORDING_UNREADABLE', `cannot open recording ${path}: ${(err as Error).message}`);
    }
    try {
      const store = new RecordingStore(db, { create: opts.create, label: path });
      if (opts.cacheKiB !== undefined) db.pragma(`cache_size = ${-Math.max(1, Math.floor(opts.cacheKiB))}`);
      return store;
    } catch (err) {
      db.close();
      throw err;
    }
  }

  /** Takes an open connection (injected for tests and embedding); validates and migrates it. */
  constructor(
    readonly db: Database,
    opts: { create?: boolean; label?: string } = {},
  ) {
    const label = opts.label ?? 'database';
    checkIsRecording(db, label, opts.create ?? false);
    if (opts.create) {
      // Only an empty file takes a page size; it must be set before WAL mode writes the header.
      if (schemaVersion(db) === 0) db.pragma(`page_size = ${NEW_FILE_PAGE_SIZE}`);
      enterWalMode(db);
    }
    db.pragma('synchronous = NORMAL');
    // The write path (batch-rows-writer.ts) checks the schema's CHECK rules and the foreign key to
    // `recordings` itself, far cheaper than SQLite does per row; nothing here deletes rows.
    db.pragma('ignore_check_constraints = ON');
    db.pragma('foreign_keys = OFF');
    if (db.readonly && schemaVersion(db) < LATEST_SCHEMA_VERSION)
      throw new McptapError('MCPTAP_RECORDING_UNREADABLE', `${label} has an older schema; open it once with \`mcptap ls ${label}\` to upgrade it`);
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
    this.stmt(SQL.endRecording).run({
      id: recordingId,
      ended_us: end.endedUs,
      dropped_queue: end.droppedQueue,
      dropped_write: end.droppedWrite,
      incomplete: end.incomplete ?? null,
    });
  }

  /**
   * Writes a batch in ONE transaction. A bad row is skipped and counted in `rejected`; anything that
   * breaks the transaction (disk full, lock, closed database) throws and nothing of the batch is kept.
   */
  writeEvents(recordingId: number, batch: readonly OrderedEvent[]): WriteResult {
    const encoder = new EventBatchEncoder({ recordingId });
    let rejected = 0;
    let firstError: Error | undefined;
    for (const item of batch) {
      try {
        encoder.add(item?.ord, item?.event);
      } catch (err) {
        rejected++; // a malformed event: refused alone, like a bad row
        firstError ??= err as Error;
      }
    }
    const sealed = encoder.seal();
    const result: WriteResult = sealed ? this.writeBatch(sealed.batch) : { written: 0, rejected: 0 };
    result.rejected += rejected;
    if (firstError) result.firstError = firstError;
    return result;
  }

  /**
   * Writes rows made by an {@link EventBatchEncoder} in
   * ONE transaction, with the same failure rules as {@link writeEvents} (batch-rows-writer.ts).
   */
  writeBatch(batch: EncodedBatch): WriteResult {
    const writer = (this.rowsWriter ??= new BatchRowsWriter(this.db));
    // IMMEDIATE: the write lock is taken (waiting up to the busy timeout) before the first read;
    // a read first would make SQLite refuse the later upgrade at once instead of waiting.
    return this.db.transaction(() => writer.write(batch)).immediate();
  }

  // ---- read side --------------------------------------------------------------------------

  listRecordings(): RecordingListing[] {
    const outcomes = this.stmt(`SELECT recording_id r, ${SQL.listedOutcome} o, count(*) n FROM exchanges GROUP BY 1, 2`).all() as {
      r: number;
      o: ListedOutcome;
      n: number;
    }[];
    const anomalies = new Map(
      (this.stmt('SELECT recording_id r, count(*) n FROM anomalies GROUP BY 1').all() as { r: number; n: number }[]).map((a) => [a.r, a.n]),
    );
    return (this.stmt('SELECT * FROM recordings ORDER BY id').all() as rows.Row[]).map((r) => {
      const info = rows.toRecordingInfo(r);
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
    return r && rows.toRecordingInfo(r);
  }

  /** The most recent recording in the file (the default for `show`). */
  latestRecordingId(): number | undefined {
    return (this.stmt('SELECT max(id) id FROM recordings').get() as { id: number | null }).id ?? undefined;
  }

  connections(recordingId: number): StoredConnection[] {
    return (this.stmt('SELECT * FROM connections WHERE recording_id = ? ORDER BY opened_us, connection_id').all(recordingId) as rows.Row[]).map(
      rows.rowToConnection,
    );
  }

  /** Exchanges in start order. `outcome: 'pending'` selects exchanges still in flight at the end. */
  exchanges(filter: ExchangeFilter = {}): StoredExchange[] {
    return (this.stmt(SQL.exchangesFiltered).all(exchangeParams(filter)) as rows.Row[]).map((r) => exchangeRows.rowToExchange(r));
  }

  /** {@link exchanges} one at a time, for recordings too big to hold: the connection cannot write until it ends. */
  *iterateExchanges(filter: ExchangeFilter = {}): Generator<StoredExchange> {
    // A fresh statement per call: a cached one cannot be iterated twice at once.
    for (const r of this.db.prepare(SQL.exchangesFiltered).iterate(exchangeParams(filter))) yield exchangeRows.rowToExchange(r as rows.Row);
  }

  /** The plain columns of a recording's exchanges, one at a time in start order: a scan that reads no message. */
  *iterateExchangeHeads(recordingId: number): Generator<ExchangeHead> {
    for (const r of this.db.prepare(SQL.exchangeHeads).iterate(recordingId)) yield exchangeRows.rowToHead(r as rows.Row);
  }

  /** The exchange with this row id (any recording of the file). */
  exchangeAt(rowid: number): StoredExchange | undefined {
    const r = this.stmt(`${SQL.exchangeSelect} WHERE e.id = ?`).get(rowid) as rows.Row | undefined;
    return r && exchangeRows.rowToExchange(r);
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
    if ('key' in l) found = this.stmt(`${SQL.exchangeSelect} WHERE e.recording_id = ? AND e.key = ?`).all(recordingId, l.key) as rows.Row[];
    else if ('rowid' in l) found = this.stmt(`${SQL.exchangeSelect} WHERE e.recording_id = ? AND e.id = ?`).all(recordingId, l.rowid) as rows.Row[];
    else {
      const text = typeof l.id === 'string' ? l.id : String(l.id);
      found = this.stmt(
        `${SQL.exchangeById} WHERE e.recording_id = @r AND e.id_text = @t AND e.id_type = @ty
        AND (@c IS NULL OR e.connection_id = @c) AND (@d IS NULL OR e.direction = @d) ORDER BY e.start_us, e.id`,
      ).all({ r: recordingId, t: text, ty: typeof l.id === 'string' ? 'string' : 'number', c: l.connectionId ?? null, d: l.direction ?? null }) as rows.Row[];
    }
    return found.map((r) => exchangeRows.rowToExchange(r));
  }

  /** Frames linked to the exchange, plus its request/response frames even if unlinked, in seq order. */
  framesOfExchange(recordingId: number, exchangeKey: string): StoredFrame[] {
    return (this.stmt(SQL.framesOfExchange).all({ r: recordingId, k: exchangeKey }) as rows.Row[]).map(rows.rowToFrame);
  }

  /** The recording's frames in `ord` order, one at a time (event-stream.ts). */
  frames(recordingId: number): Generator<StoredFrame> {
    return recordingFrames(this.db, recordingId);
  }

  /** The client's own notifications (not cancellations, `initialized` or progress): what a replay sends (event-stream.ts). */
  iterateClientNotifications(recordingId: number): Generator<NotificationHead> {
    return clientNotifications(this.db, recordingId);
  }

  /** The frame with this row id (any recording of the file). */
  frameAt(rowid: number): StoredFrame | undefined {
    const r = this.stmt('SELECT * FROM frames WHERE id = ?').get(rowid) as rows.Row | undefined;
    return r && rows.rowToFrame(r);
  }

  anomalies(recordingId: number, opts: { exchangeKey?: string } = {}): StoredAnomaly[] {
    // Two statements, not one with `@k IS NULL OR ...`: that one walks all the recording's anomalies for one exchange's.
    const found =
      opts.exchangeKey === undefined || opts.exchangeKey === null
        ? this.stmt('SELECT * FROM anomalies WHERE recording_id = ? ORDER BY ord').all(recordingId)
        : this.stmt('SELECT * FROM anomalies INDEXED BY anomalies_exchange WHERE recording_id = ? AND exchange_key = ? ORDER BY ord').all(
            recordingId,
            opts.exchangeKey,
          );
    return (found as rows.Row[]).map(rows.rowToAnomaly);
  }

  /**
   * The long-lived streams of a recording, in the order they began: HTTP streams whose server
   * frames came over SSE with no request on the same stream (a standalone GET) or whose request
   * was `subscriptions/listen`. One pass over the recording's frames.
   */
  longStreams(recordingId: number): StoredLongStream[] {
    return this.stmt(SQL.longStreams).all(recordingId) as StoredLongStream[];
  }

  /** Counts and per-method latency percentiles, aggregated in SQL and one sorted stream: bounded memory. */
  summary(recordingId: number): RecordingSummary {
    const count = (table: string) => (this.stmt(`SELECT count(*) n FROM ${table} WHERE recording_id = ?`).get(recordingId) as { n: number }).n;
    const counts = this.stmt(SQL.methodOutcomeCounts).all(recordingId) as MethodOutcomeCount[];
    const outcomes = {};
    for (const c of counts) addOutcome(outcomes, c.outcome, c.n);
    const kinds = this.stmt('SELECT kind, count(*) n FROM anomalies WHERE recording_id = ? GROUP BY kind ORDER BY kind').all(recordingId) as {
      kind: string;
      n: number;
    }[];
    // A fresh statement: the cached one may be iterating already.
    const latencies = this.db.prepare(SQL.latenciesByMethod).iterate(recordingId) as Iterable<MethodLatency>;
    return {
      recordingId,
      frames: count('frames'),
      connections: count('connections'),
      exchanges: counts.reduce((s, c) => s + c.n, 0),
      outcomes,
      anomalies: kinds.reduce((s, k) => s + k.n, 0),
      anomalyKinds: Object.fromEntries(kinds.map((k) => [k.kind, k.n])),
      methods: summariseMethods(counts, latencies),
    };
  }

  /**
   * The recording as the TapEvent stream the recorder received (minus drops), original times kept:
   * a merge by `ord` of one ordered cursor per source table (event-stream.ts).
   */
  events(recordingId: number, opts: { types?: ReadonlySet<TapEvent['type']> } = {}): Generator<TapEvent> {
    return recordingEvents(this.db, recordingId, opts);
  }
}

/** Parameters of {@link SQL.exchangesFiltered}: an absent filter is NULL and matches all. */
function exchangeParams(filter: ExchangeFilter): Record<string, string | number | null> {
  return {
    r: filter.recordingId ?? null,
    m: filter.method ?? null,
    t: filter.target ?? null,
    o: filter.outcome ?? null,
    limit: filter.limit ?? -1,
    offset: filter.offset ?? 0,
  };
}

export { LATEST_SCHEMA_VERSION };
