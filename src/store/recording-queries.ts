/**
 * Paged queries over a recording for explorers (`mcptap mcp`, a web UI): filtered exchange pages
 * with a keyset cursor, anomaly pages, per-method latency summaries with p90. SQL next to the
 * store's own (recording-store.ts runs the rest); every value is bound, never spliced into the text,
 * and no query loads a recording whole: a page reads `limit` rows, "how many more" counts at most
 * {@link MORE_COUNT_CAP} of them.
 */
import type { Statement } from 'better-sqlite3';
import type { RecordingStore } from './recording-store.js';
import * as exchangeRows from './exchange-rows.js';
import * as rows from './rows.js';
import { SQL } from './statements.js';
import { summariseMethods, type MethodLatency, type MethodOutcomeCount, type PercentileField } from './summary.js';
import type { ListedOutcome, MethodSummary, StoredAnomaly, StoredExchange, StoredLongStream } from './types.js';

/** "N more" counts stop here: past it a page says "at least N more" (a count over a huge recording would read it whole). */
export const MORE_COUNT_CAP = 10_000;

/** Every field optional: an absent one matches all. */
export interface ExchangeQuery {
  recordingId: number;
  method?: string;
  /** The tool of a tools/call. */
  tool?: string;
  /** Tool, prompt or resource URI (any method). */
  target?: string;
  outcome?: ListedOutcome;
  connectionId?: string;
  sessionId?: string;
  minLatencyUs?: number;
  maxLatencyUs?: number;
  /** Case-insensitive text in the request or the response (their stored, redacted bytes). */
  text?: string;
  /** Rows after this row id (the cursor of the previous page). */
  afterRowid?: number;
  /** The slowest first (exchanges with a latency only); each page reads the whole recording. */
  slowest?: boolean;
  /** With `slowest`: the rows after this one in that order (the `nextSlowest` of the previous page). */
  afterSlowest?: SlowestCursor;
  limit: number;
}

/** Where a slowest-first page ended: its last row's latency and row id (ties go by row id). */
export interface SlowestCursor {
  latencyUs: number;
  rowid: number;
}

export interface Page<T> {
  items: T[];
  /** Rows matching after this page, counted up to {@link MORE_COUNT_CAP}. */
  more: number;
  /** `more` reached the cap: there are at least that many. */
  moreCapped: boolean;
  /** Pass as `afterRowid` for the next page; absent on the last. */
  nextAfter?: number;
  /** Slowest first: pass as `afterSlowest` for the next page; absent on the last. */
  nextSlowest?: SlowestCursor;
}

/**
 * The WHERE of a page: only the filters given (an `@x IS NULL OR ...` for each absent one would keep
 * the planner from the primary key and join the frames even with no text filter). Values stay bound.
 */
const CONDITIONS: Record<string, string> = {
  m: 'e.method = @m',
  tool: "e.method = 'tools/call' AND e.target = @tool",
  t: 'e.target = @t',
  o: "(CASE WHEN e.state = 'started' THEN 'pending' ELSE e.outcome END) = @o",
  c: 'e.connection_id = @c',
  s: 'e.session_id = @s',
  minl: 'e.latency_us >= @minl',
  maxl: 'e.latency_us <= @maxl',
  text: `(instr(lower(CAST(rq.raw AS TEXT)), @text) > 0 OR instr(lower(CAST(rs.raw AS TEXT)), @text) > 0
    OR instr(lower(e.request_json), @text) > 0 OR instr(lower(coalesce(e.response_json, '')), @text) > 0)`,
};

const JOINS = 'LEFT JOIN frames rq ON rq.id = e.request_frame_id LEFT JOIN frames rs ON rs.id = e.response_frame_id';

/** The page and "how many more" statements for the filters present (in CONDITIONS' order). */
function pageSql(present: readonly string[], slowest: boolean, afterSlowest: boolean): { page: string; more: string } {
  // `+e.recording_id`: walk the primary key from the cursor; an index on recording_id would sort the whole recording for each page.
  const where = [
    'e.id > @after',
    '+e.recording_id = @r',
    ...(slowest ? ['e.latency_us IS NOT NULL'] : []),
    ...(afterSlowest ? ['(e.latency_us < @al OR (e.latency_us = @al AND e.id > @ai))'] : []),
    ...present.map((k) => CONDITIONS[k]!),
  ].join(' AND ');
  const joins = present.includes('text') ? JOINS : '';
  // Slowest first: SQLite keeps the top `limit` rows while it reads (a bounded sorter), not the whole recording.
  return {
    page: `${SQL.exchangeSelect} WHERE ${where} ORDER BY ${slowest ? 'e.latency_us DESC, e.id' : 'e.id'} LIMIT @limit`,
    more: `SELECT count(*) n FROM (SELECT 1 FROM exchanges e ${joins} WHERE ${where} LIMIT ${slowest ? '@limit + ' : ''}${MORE_COUNT_CAP})`,
  };
}

const ANOMALY_SQL = 'SELECT * FROM anomalies WHERE id > @after AND +recording_id = @r AND (@k IS NULL OR kind = @k) ORDER BY id LIMIT @limit';
const ANOMALY_MORE_SQL = `SELECT count(*) n FROM (SELECT 1 FROM anomalies WHERE id > @after AND +recording_id = @r AND (@k IS NULL OR kind = @k) LIMIT ${MORE_COUNT_CAP})`;
const ANOMALY_KINDS_SQL = 'SELECT kind, count(*) n FROM anomalies WHERE recording_id = ? GROUP BY kind ORDER BY kind';
// The `+recording_id` below: walk the primary key (from the cursor, or back from the end), not an index on recording_id (which sorts the whole recording).
const MAX_ROWID_SQL = 'SELECT coalesce((SELECT id FROM exchanges WHERE +recording_id = ? ORDER BY id DESC LIMIT 1), 0) n';
const AFTER_SQL = `${SQL.exchangeSelect} WHERE e.id > @after AND +e.recording_id = @r ORDER BY e.id LIMIT @limit`;

export const EXPLORE_PERCENTILES: readonly PercentileField[] = [
  ['p50Us', 50],
  ['p90Us', 90],
  ['p99Us', 99],
];

export class RecordingQueries {
  private readonly cache = new Map<string, Statement>();

  constructor(private readonly store: RecordingStore) {}

  private stmt(sql: string): Statement {
    let s = this.cache.get(sql);
    if (!s) this.cache.set(sql, (s = this.store.db.prepare(sql)));
    return s;
  }

  /** One page of exchanges in row order (the order they were first recorded, i.e. by start). */
  findExchanges(q: ExchangeQuery): Page<StoredExchange> {
    const filters: Record<string, string | number | undefined> = {
      m: q.method,
      tool: q.tool,
      t: q.target,
      o: q.outcome,
      c: q.connectionId,
      s: q.sessionId,
      minl: q.minLatencyUs,
      maxl: q.maxLatencyUs,
      text: q.text ? q.text.toLowerCase() : undefined,
    };
    const present = Object.keys(CONDITIONS).filter((k) => filters[k] !== undefined);
    const keyset = q.slowest === true && q.afterSlowest !== undefined;
    const params = {
      r: q.recordingId,
      after: q.afterRowid ?? 0,
      ...Object.fromEntries(present.map((k) => [k, filters[k]])),
      ...(keyset ? { al: q.afterSlowest!.latencyUs, ai: q.afterSlowest!.rowid } : {}),
    };
    const sql = pageSql(present, q.slowest === true, keyset);
    const items = (this.stmt(sql.page).all({ ...params, limit: q.limit }) as rows.Row[]).map((r) => exchangeRows.rowToExchange(r));
    if (q.slowest) {
      // The rest are those matching beyond this page in slowest-first order.
      const more = Math.max(0, this.count(sql.more, { ...params, limit: q.limit }) - items.length);
      const last = items.at(-1);
      return {
        items,
        more,
        moreCapped: more >= MORE_COUNT_CAP,
        ...(more > 0 && last?.latencyUs !== undefined ? { nextSlowest: { latencyUs: last.latencyUs, rowid: last.rowid } } : {}),
      };
    }
    const last = items.at(-1)?.rowid;
    const more = last === undefined ? 0 : this.count(sql.more, { ...params, after: last });
    return page(items, more, last);
  }

  /** One page of a recording's anomalies, optionally of one kind, with the counts of every kind. */
  anomalies(q: { recordingId: number; kind?: string; afterRowid?: number; limit: number }): Page<StoredAnomaly> & { kinds: Record<string, number> } {
    const params = { r: q.recordingId, after: q.afterRowid ?? 0, k: q.kind ?? null };
    const items = (this.stmt(ANOMALY_SQL).all({ ...params, limit: q.limit }) as rows.Row[]).map(rows.rowToAnomaly);
    const last = items.at(-1)?.rowid;
    const more = last === undefined ? 0 : this.count(ANOMALY_MORE_SQL, { ...params, after: last });
    const kinds = Object.fromEntries((this.stmt(ANOMALY_KINDS_SQL).all(q.recordingId) as { kind: string; n: number }[]).map((k) => [k.kind, k.n]));
    return { ...page(items, more, last), kinds };
  }

  /** Per method (per tool for tools/call): counts by outcome and p50/p90/p99/max latency, in bounded memory. */
  latencySummary(recordingId: number): MethodSummary[] {
    const counts = this.stmt(SQL.methodOutcomeCounts).all(recordingId) as MethodOutcomeCount[];
    // A fresh statement: the cached one may be iterating already.
    const latencies = this.store.db.prepare(SQL.latenciesByMethod).iterate(recordingId) as Iterable<MethodLatency>;
    return summariseMethods(counts, latencies, EXPLORE_PERCENTILES);
  }

  /** When the first `limit` notifications of a long-lived stream came (µs, in order): its marks in a waterfall. */
  longStreamNotificationTimes(recordingId: number, stream: Pick<StoredLongStream, 'connectionId' | 'streamId'>, limit: number): number[] {
    const found = this.stmt(SQL.longStreamNotificationTimes).all({ r: recordingId, c: stream.connectionId, s: stream.streamId, n: limit }) as { t: number }[];
    return found.map((f) => f.t);
  }

  /** The highest exchange row id of a recording so far (0: none): where a tail starts. */
  lastExchangeRowid(recordingId: number): number {
    return (this.stmt(MAX_ROWID_SQL).get(recordingId) as { n: number }).n;
  }

  /** Exchanges recorded after `afterRowid` (any state), in row order: what a tail reads next. */
  exchangesAfter(recordingId: number, afterRowid: number, limit: number): StoredExchange[] {
    return (this.stmt(AFTER_SQL).all({ r: recordingId, after: afterRowid, limit }) as rows.Row[]).map((r) => exchangeRows.rowToExchange(r));
  }

  private count(sql: string, params: Record<string, unknown>): number {
    return (this.stmt(sql).get(params) as { n: number }).n;
  }
}

function page<T>(items: T[], more: number, last: number | undefined): Page<T> {
  return { items, more, moreCapped: more >= MORE_COUNT_CAP, ...(more > 0 && last !== undefined ? { nextAfter: last } : {}) };
}
