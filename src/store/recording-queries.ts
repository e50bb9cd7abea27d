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
import type { ListedOutcome, MethodSummary, StoredAnomaly, StoredExchange } from './types.js';

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
  limit: number;
}

export interface Page<T> {
  items: T[];
  /** Rows matching after this page, counted up to {@link MORE_COUNT_CAP}. */
  more: number;
  /** `more` reached the cap: there are at least that many. */
  moreCapped: boolean;
  /** Pass as `afterRowid` for the next page; absent on the last. */
  nextAfter?: number;
}

const WHERE = `e.recording_id = @r AND e.id > @after
  AND (@m IS NULL OR e.method = @m)
  AND (@tool IS NULL OR (e.method = 'tools/call' AND e.target = @tool))
  AND (@t IS NULL OR e.target = @t)
  AND (@o IS NULL OR (CASE WHEN e.state = 'started' THEN 'pending' ELSE e.outcome END) = @o)
  AND (@c IS NULL OR e.connection_id = @c)
  AND (@s IS NULL OR e.session_id = @s)
  AND (@minl IS NULL OR e.latency_us >= @minl)
  AND (@maxl IS NULL OR e.latency_us <= @maxl)
  AND (@text IS NULL OR instr(lower(CAST(rq.raw AS TEXT)), @text) > 0 OR instr(lower(CAST(rs.raw AS TEXT)), @text) > 0
    OR instr(lower(e.request_json), @text) > 0 OR instr(lower(coalesce(e.response_json, '')), @text) > 0)`;

const JOINS = 'FROM exchanges e LEFT JOIN frames rq ON rq.id = e.request_frame_id LEFT JOIN frames rs ON rs.id = e.response_frame_id';

const PAGE_SQL = `${SQL.exchangeSelect} WHERE ${WHERE} ORDER BY e.id LIMIT @limit`;
const MORE_SQL = `SELECT count(*) n FROM (SELECT 1 ${JOINS} WHERE ${WHERE} LIMIT ${MORE_COUNT_CAP})`;
const ANOMALY_SQL = 'SELECT * FROM anomalies WHERE recording_id = @r AND id > @after AND (@k IS NULL OR kind = @k) ORDER BY id LIMIT @limit';
const ANOMALY_MORE_SQL = `SELECT count(*) n FROM (SELECT 1 FROM anomalies WHERE recording_id = @r AND id > @after AND (@k IS NULL OR kind = @k) LIMIT ${MORE_COUNT_CAP})`;
const ANOMALY_KINDS_SQL = 'SELECT kind, count(*) n FROM anomalies WHERE recording_id = ? GROUP BY kind ORDER BY kind';
const MAX_ROWID_SQL = 'SELECT coalesce(max(id), 0) n FROM exchanges WHERE recording_id = ?';
const AFTER_SQL = `${SQL.exchangeSelect} WHERE e.recording_id = @r AND e.id > @after ORDER BY e.id LIMIT @limit`;

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
    const params = {
      r: q.recordingId,
      after: q.afterRowid ?? 0,
      m: q.method ?? null,
      tool: q.tool ?? null,
      t: q.target ?? null,
      o: q.outcome ?? null,
      c: q.connectionId ?? null,
      s: q.sessionId ?? null,
      minl: q.minLatencyUs ?? null,
      maxl: q.maxLatencyUs ?? null,
      text: q.text ? q.text.toLowerCase() : null,
    };
    const items = (this.stmt(PAGE_SQL).all({ ...params, limit: q.limit }) as rows.Row[]).map((r) => exchangeRows.rowToExchange(r));
    const last = items.at(-1)?.rowid;
    const more = last === undefined ? 0 : this.count(MORE_SQL, { ...params, after: last });
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
