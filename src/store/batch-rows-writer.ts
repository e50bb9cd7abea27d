/**
 * Writes the rows of an {@link EncodedBatch} (event-batch.ts) on one connection, inside the
 * caller's transaction (RecordingStore.writeBatch owns it).
 *
 * Frames go first, so that exchange rows can reference the row ids of their request/response
 * frames (the encoder put the frames' seqs there). Rows go through shaped multi-row INSERTs
 * (shaped-insert.ts) after the JS form of the rules SQLite is not asked to check (row-checks.ts);
 * only the rare connection rows, upserts, run one statement each.
 *
 * Failure rules: a row error (isRowError) refuses that row alone, counted in `rejected` (a started
 * and completed exchange in one row counts two events); anything else throws, and the caller's
 * transaction then keeps nothing of the batch.
 */
import type { Database, Statement } from 'better-sqlite3';
import type { EncodedBatch } from './event-batch.js';
import { EXCHANGE_COLS, EXCHANGE_REQUEST_FRAME, EXCHANGE_RESPONSE_FRAME } from './exchange-rows.js';
import type { Value } from './row-helpers.js';
import { checkRule, enforceBindable, enforceChecks, isRowError, type CheckRule } from './row-checks.js';
import * as rows from './rows.js';
import { ShapedInsert } from './shaped-insert.js';
import {
  ANOMALY_OMITTABLE,
  EXCHANGE_LITERALS,
  EXCHANGE_OMITTABLE,
  FRAME_LITERALS,
  FRAME_OMITTABLE,
  PROGRESS_OMITTABLE,
  SQL,
  exchangeUpsertClause,
} from './statements.js';
import type { WriteResult } from './types.js';

const FRAME_CHECKS: readonly CheckRule[] = [checkRule(rows.FRAME_COLS.indexOf('kind'), 'kind', ['message', 'invalid', 'log'])];
const EXCHANGE_CHECKS: readonly CheckRule[] = [
  checkRule(EXCHANGE_COLS.indexOf('state'), 'state', ['started', 'completed', 'orphaned']),
  checkRule(EXCHANGE_COLS.indexOf('id_type'), 'id_type', ['string', 'number']),
];

/** A writer mostly writes one recording, of one or a few connections: their ids become literals. */
const LEARNED = { recording_id: 2, connection_id: 4 };
const STARTED_ORD = EXCHANGE_COLS.indexOf('started_ord');

export class BatchRowsWriter {
  private readonly frames: ShapedInsert;
  private readonly exchanges: ShapedInsert;
  private readonly progress: ShapedInsert;
  private readonly anomalies: ShapedInsert;
  private readonly connections: Record<'o' | 'c', Statement>;
  private recordingExists: Statement | undefined;
  /** A recording id seen to exist in this batch (batches nearly always hold one recording's rows). */
  private knownRecording: Value | undefined;

  constructor(private readonly db: Database) {
    this.frames = new ShapedInsert(db, { table: 'frames', cols: rows.FRAME_COLS, omittable: FRAME_OMITTABLE, literals: FRAME_LITERALS, learn: LEARNED });
    this.exchanges = new ShapedInsert(db, {
      table: 'exchanges',
      cols: EXCHANGE_COLS,
      omittable: EXCHANGE_OMITTABLE,
      literals: EXCHANGE_LITERALS,
      learn: LEARNED,
      upsert: exchangeUpsertClause(),
      // A row with its start is the exchange's first; one without updates the row its start made.
      alone: (v) => v[STARTED_ORD] === null,
    });
    this.progress = new ShapedInsert(db, { table: 'progress', cols: rows.PROGRESS_COLS, omittable: PROGRESS_OMITTABLE, learn: LEARNED });
    this.anomalies = new ShapedInsert(db, { table: 'anomalies', cols: rows.ANOMALY_COLS, omittable: ANOMALY_OMITTABLE, learn: LEARNED });
    this.connections = { o: db.prepare(SQL.connectionOpened), c: db.prepare(SQL.connectionClosed) };
  }

  /** Writes every row of `batch`; call inside a transaction. */
  write(batch: EncodedBatch): WriteResult {
    const result: WriteResult = { written: 0, rejected: 0 };
    const values = batch.rows;
    const tags = batch.tags;
    this.knownRecording = undefined;
    const frameIds = this.writeFrames(values, tags, result);
    // Each table's rows in batch order (the order of rows in different tables does not matter).
    const queued = { x: new Queue(), p: new Queue(), a: new Queue() };
    for (let i = 0; i < tags.length; i++) {
      const tag = tags[i]!;
      if (tag === 'f') continue;
      const v = values[i]!;
      if (tag === 'x' || tag === 'X') {
        v[EXCHANGE_REQUEST_FRAME] = frameIds.get(v[EXCHANGE_REQUEST_FRAME]!) ?? null;
        v[EXCHANGE_RESPONSE_FRAME] = frameIds.get(v[EXCHANGE_RESPONSE_FRAME]!) ?? null;
        const n = tag === 'X' ? 2 : 1;
        if (this.passes(v, EXCHANGE_CHECKS, n, result)) queued.x.add(v, n);
      } else if (tag === 'p' || tag === 'a') {
        if (this.passes(v, [], 1, result)) queued[tag].add(v, 1);
      } else {
        const stmt = tag === 'o' || tag === 'c' ? this.connections[tag] : undefined;
        if (this.passes(v, [], 1, result)) this.tryRow(result, 1, () => (stmt ? stmt.run(v) : rejectTag(tag)));
      }
    }
    for (const [table, q] of [
      [this.exchanges, queued.x],
      [this.progress, queued.p],
      [this.anomalies, queued.a],
    ] as const) {
      const ids = table.insert(q.rows, (i, err) => this.refuse(result, q.events[i]!, err));
      ids.forEach((id, i) => id !== undefined && (result.written += q.events[i]!));
    }
    return result;
  }

  /** Inserts the frame rows; returns frame seq -> row id (the exchange rows' references). */
  private writeFrames(values: Value[][], tags: string, result: WriteResult): Map<Value, number> {
    const frames: Value[][] = [];
    for (let i = 0; i < tags.length; i++) {
      if (tags[i] !== 'f') continue;
      const v = values[i]!;
      if (this.passes(v, FRAME_CHECKS, 1, result)) frames.push(v);
    }
    const ids = this.frames.insert(frames, (_i, err) => this.refuse(result, 1, err));
    const frameIds = new Map<Value, number>();
    ids.forEach((id, i) => {
      if (id === undefined) return;
      result.written++;
      frameIds.set(frames[i]![rows.FRAME_SEQ]!, id);
    });
    return frameIds;
  }

  /**
   * The rules SQLite is not asked to check on this connection: the schema's CHECKs (row-checks.ts)
   * and the foreign key to `recordings` (the connection runs without foreign-key enforcement, see
   * shaped-insert.ts; every table's first column is `recording_id`). A row that breaks one is
   * refused (`n` events), with SQLite's error.
   */
  private passes(v: readonly Value[], rules: readonly CheckRule[], n: number, result: WriteResult): boolean {
    try {
      this.checkRecording(v[0]);
      enforceBindable(v);
      enforceChecks(v, rules);
      return true;
    } catch (err) {
      this.refuse(result, n, err as Error);
      return false;
    }
  }

  private checkRecording(id: Value | undefined): void {
    if (id === this.knownRecording || id === null || id === undefined) return;
    this.recordingExists ??= this.db.prepare('SELECT 1 FROM recordings WHERE id = ?').pluck();
    if (this.recordingExists.get(id) === undefined) throw Object.assign(new Error('FOREIGN KEY constraint failed'), { code: 'SQLITE_CONSTRAINT_FOREIGNKEY' });
    this.knownRecording = id;
  }

  /** Runs one row's statement: a row error refuses the row; anything else throws. */
  private tryRow(result: WriteResult, n: number, run: () => unknown): void {
    try {
      run();
      result.written += n;
    } catch (err) {
      if (!isRowError(err) || !this.db.inTransaction) throw err;
      this.refuse(result, n, err as Error);
    }
  }

  private refuse(result: WriteResult, n: number, err: Error): void {
    result.rejected += n;
    result.firstError ??= err;
  }
}

/** Rows for one table, with the events each stands for. */
class Queue {
  readonly rows: Value[][] = [];
  readonly events: number[] = [];

  add(v: Value[], events: number): void {
    this.rows.push(v);
    this.events.push(events);
  }
}

function rejectTag(tag: string): never {
  throw new TypeError(`unknown row tag ${JSON.stringify(tag)}`);
}
