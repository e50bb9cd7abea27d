/**
 * The web explorer's JSON API (`mcptap ui`), over a {@link RecordingExplorer}: GET only, every
 * parameter a query string value that names a file label, a recording, a row or a filter, never a
 * path. Pages use the explorer's keyset cursor; the live tail is the next page after the last row seen.
 */
import { basename, resolve } from 'node:path';
import { McptapError } from '../errors.js';
import { traceContextOf } from '../protocol/mcp.js';
import type { JsonRpcMessage } from '../model/jsonrpc.js';
import { OUTCOMES } from '../model/outcome.js';
import type { ListedOutcome, StoredExchange, StoredFrame } from '../store/types.js';
import { compactExchange, exchangeDetail } from './exchange-json.js';
import { MAX_PAGE, msOf, pageLimit, type FindArgs, type RecordingExplorer, type RecordingRef } from './recording-explorer.js';
import { findingsOf, type CheckIndex } from './ui-check.js';
import { replayedAnswer, type ReplayIndex } from './ui-replay.js';

export interface UiConfig {
  /** Jaeger's base URL: an exchange's trace id links to `${jaeger}/trace/ID`. */
  jaeger?: string;
  replay?: ReplayIndex;
  check?: CheckIndex;
}

export interface ApiAnswer {
  status: number;
  body: unknown;
}

const LISTED: readonly ListedOutcome[] = [...OUTCOMES, 'pending'];
/** Exchanges a waterfall draws at most (a connection's first ones). */
export const WATERFALL_MAX = 2000;
/** Notifications a waterfall marks at most on each long-lived stream. */
const STREAM_MARKS_MAX = 500;
/** Rows still pending the tail re-reads per poll at most. */
const PENDING_MAX = 100;

/**
 * Which of the files given a replay or check result (naming `file`, as given to that command) is of:
 * the same path, else the only one of the same base name, else the first. `doubt` says why the
 * match may be wrong (the caller warns).
 */
export function matchResultFile(paths: readonly string[], file: string): { index: number; doubt?: string } {
  const same = paths.findIndex((p) => resolve(p) === resolve(file));
  if (same !== -1) return { index: same };
  const named = paths.flatMap((p, i) => (basename(p) === basename(file) ? [i] : []));
  if (named.length === 1) return { index: named[0]! };
  if (named.length > 1) return { index: named[0]!, doubt: `several files given are named ${basename(file)}; shown beside ${paths[named[0]!]}` };
  return { index: 0, doubt: `none of the files given is ${file}; shown beside ${paths[0]}` };
}

export class UiApi {
  /** The label of the file the replay result is of. */
  private readonly replayFile: string | undefined;
  /** The label of the file the check result is of, matched the same way. */
  private readonly checkFile: string | undefined;

  constructor(
    private readonly explorer: RecordingExplorer,
    private readonly config: UiConfig = {},
  ) {
    this.replayFile = config.replay && this.labelOf(config.replay.file);
    this.checkFile = config.check && this.labelOf(config.check.file);
  }

  /** The label of the file a replay or check result is of (see {@link matchResultFile}). */
  private labelOf(file: string): string | undefined {
    return this.explorer.files[
      matchResultFile(
        this.explorer.files.map((f) => f.path),
        file,
      ).index
    ]?.label;
  }

  /** Answers GET `/api/<name>` with its query; a bad request is 400 with `{ error }`, an unknown name 404. */
  handle(name: string, q: URLSearchParams): ApiAnswer {
    try {
      switch (name) {
        case 'recordings':
          return ok(this.recordings());
        case 'latest':
          return ok({ files: this.explorer.files.map((f) => ({ file: f.label, latest: f.store.latestRecordingId() ?? null })) });
        case 'exchanges':
          return ok(this.exchanges(q));
        case 'exchange':
          return ok(this.exchange(q));
        case 'waterfall':
          return ok(this.waterfall(q));
        case 'pending':
          return ok(this.pending(q));
        case 'findings':
          return ok(this.findings(q));
        default:
          return { status: 404, body: { error: `no API /api/${name}` } };
      }
    } catch (err) {
      if (err instanceof McptapError) return { status: err.code === 'MCPTAP_NO_EXCHANGE' ? 404 : 400, body: { error: err.message } };
      throw err;
    }
  }

  private recordings(): unknown {
    const replay = this.config.replay;
    return {
      files: this.explorer.files.map((f) => f.label),
      recordings: this.explorer.listRecordings(),
      ...(this.config.jaeger ? { jaeger: this.config.jaeger } : {}),
      ...(replay ? { replay: { file: this.replayFile, target: replay.target, counts: replay.counts } } : {}),
      ...(this.config.check ? { check: { file: this.checkFile, recordings: [...this.config.check.recordings.keys()] } } : {}),
    };
  }

  /** The check result's findings of a recording; `checked: false` when it holds none of it, `withCheck: false` without --check. */
  private findings(q: URLSearchParams): unknown {
    const { file, recordingId } = this.explorer.resolve(ref(q));
    const findings = this.checkedFindings(file.label, recordingId);
    return { file: file.label, recording: recordingId, withCheck: this.config.check !== undefined, checked: findings !== undefined, findings: findings ?? [] };
  }

  private checkedFindings(label: string, recordingId: number) {
    return label === this.checkFile ? this.config.check?.recordings.get(recordingId) : undefined;
  }

  /**
   * A page of exchanges (filters as `mcptap mcp`'s find_exchanges). `sort=duration`: the slowest first,
   * paged with a cursor `s:LATENCY_US:ROW` (each page reads the whole recording: no latency index).
   */
  private exchanges(q: URLSearchParams): unknown {
    const sort = q.get('sort') ?? 'time';
    if (sort !== 'time' && sort !== 'duration') throw bad(`sort is time or duration, got ${JSON.stringify(sort)}`);
    const outcome = q.get('outcome') || undefined;
    if (outcome !== undefined && !LISTED.includes(outcome as ListedOutcome)) throw bad(`outcome is one of ${LISTED.join(', ')}`);
    const minMs = num(q, 'minMs');
    const maxMs = num(q, 'maxMs');
    const args: FindArgs = {
      ...ref(q),
      ...str(q, 'method', 'method'),
      ...str(q, 'tool', 'tool'),
      ...str(q, 'connection', 'connectionId'),
      ...str(q, 'session', 'sessionId'),
      ...str(q, 'text', 'text'),
      ...(outcome !== undefined ? { outcome: outcome as ListedOutcome } : {}),
      ...(minMs !== undefined ? { minLatencyUs: Math.round(minMs * 1000) } : {}),
      ...(maxMs !== undefined ? { maxLatencyUs: Math.round(maxMs * 1000) } : {}),
      limit: num(q, 'limit') ?? 100,
    };
    // Read before the page: rows up to it were looked at, so a tail (even of a filter matching none) starts after it.
    const { file, recordingId } = this.explorer.resolve(args);
    const tailFrom = file.queries.lastExchangeRowid(recordingId);
    const cursor = q.get('cursor') || undefined;
    const page = (sort === 'duration' ? this.slowest(args, cursor) : this.explorer.findExchanges({ ...args, ...(cursor !== undefined ? { cursor } : {}) })) as {
      file: string;
      exchanges: { row: number }[];
    };
    return { ...page, exchanges: page.exchanges.map((x) => this.markReplay(page.file, x)), tailFrom };
  }

  /** A slowest-first page, the next after `cursor` (`s:LATENCY_US:ROW`, what the previous page returned). */
  private slowest(args: FindArgs, cursor: string | undefined): unknown {
    const { file, recordingId } = this.explorer.resolve(args);
    const m = cursor === undefined ? undefined : /^s:(\d{1,15}(?:\.\d+)?):(\d{1,15})$/.exec(cursor);
    if (cursor !== undefined && !m) throw bad(`a duration-sorted page takes the cursor the previous one returned, got ${JSON.stringify(cursor)}`);
    const { file: _f, recording: _r, limit, ...filters } = args;
    const page = file.queries.findExchanges({
      ...filters,
      recordingId,
      slowest: true,
      limit: pageLimit(limit),
      ...(m ? { afterSlowest: { latencyUs: Number(m[1]), rowid: Number(m[2]) } } : {}),
    });
    const origin = file.store.getRecording(recordingId)!.startedUs;
    const next = page.nextSlowest;
    return {
      file: file.label,
      recording: recordingId,
      exchanges: page.items.map((e) => compactExchange(e, origin)),
      more: page.more,
      ...(next ? { cursor: `s:${next.latencyUs}:${next.rowid}` } : {}),
    };
  }

  /** Rows the page listed as pending, as they are now (a tail re-reads them until they end). */
  private pending(q: URLSearchParams): unknown {
    const { file, recordingId } = this.explorer.resolve(ref(q));
    const origin = file.store.getRecording(recordingId)!.startedUs;
    const rows = (q.get('rows') ?? '')
      .split(',')
      .filter((r) => /^\d{1,15}$/.test(r))
      .slice(0, PENDING_MAX)
      .map(Number);
    const found = rows.map((r) => file.store.exchangeAt(r)).filter((e): e is StoredExchange => e !== undefined && e.recordingId === recordingId);
    return { exchanges: found.map((e) => this.markReplay(file.label, compactExchange(e, origin) as { row: number })) };
  }

  private exchange(q: URLSearchParams): unknown {
    const { file, recordingId } = this.explorer.resolve(ref(q));
    const row = num(q, 'row');
    if (row === undefined) throw bad('row is required');
    const e = file.store.exchangeAt(row);
    if (!e || e.recordingId !== recordingId)
      throw new McptapError('MCPTAP_NO_EXCHANGE', `recording ${recordingId} of ${file.label} has no exchange in row #${row}`);
    const frames = file.store.framesOfExchange(recordingId, e.key);
    const anomalies = file.store.anomalies(recordingId, { exchangeKey: e.key });
    const detail = exchangeDetail(e, frames, anomalies, { maxChars: 1_000_000, maxFrames: 500 });
    const traceId = traceIdOf(e, frames);
    const replay = file.label === this.replayFile ? this.config.replay?.rows.get(e.rowid) : undefined;
    const checked = this.checkedFindings(file.label, recordingId);
    return {
      file: file.label,
      recording: recordingId,
      ...detail,
      request: e.request,
      ...(e.response !== undefined ? { response: e.response } : {}),
      ...(traceId ? { traceId } : {}),
      ...(replay ? { replay: { ...replay, answer: replayedAnswer(e.response ?? null, replay.differences) } } : {}),
      ...(checked ? { findings: findingsOf(checked, e.rowid, e.key) } : {}),
    };
  }

  /** A connection's (or session's) exchanges and long streams, in ms from the first one's start: a waterfall. */
  private waterfall(q: URLSearchParams): unknown {
    const r = this.explorer.resolve(ref(q));
    const connectionId = q.get('connection') || undefined;
    const sessionId = q.get('session') || undefined;
    if (connectionId === undefined && sessionId === undefined) throw bad('name a connection or a session');
    const items: StoredExchange[] = [];
    let after: number | undefined;
    do {
      const page = r.file.queries.findExchanges({
        recordingId: r.recordingId,
        ...(connectionId !== undefined ? { connectionId } : {}),
        ...(sessionId !== undefined ? { sessionId } : {}),
        limit: MAX_PAGE,
        ...(after !== undefined ? { afterRowid: after } : {}),
      });
      items.push(...page.items);
      after = page.nextAfter;
    } while (after !== undefined && items.length < WATERFALL_MAX);
    const shown = items.slice(0, WATERFALL_MAX);
    const origin = Math.min(...shown.map((e) => e.startUs));
    // A stream is drawn with the connection it came on: a session's waterfall shows its connections' streams, no other's.
    const connections = new Set(shown.map((e) => e.connectionId));
    const streams = r.file.store.longStreams(r.recordingId).filter((s) => connections.has(s.connectionId));
    return {
      file: r.file.label,
      recording: r.recordingId,
      exchanges: shown.map((e) => ({
        row: e.rowid,
        method: e.method,
        ...(e.target !== undefined ? { target: e.target } : {}),
        outcome: compactExchange(e, origin).outcome,
        startMs: msOf(e.startUs - origin),
        ...(e.endUs !== undefined ? { endMs: msOf(e.endUs - origin) } : {}),
        sseMs: (e.transport?.eventTimesUs ?? []).map((u) => msOf(u - origin)),
        progressMs: e.progress.map((p) => msOf(p.timeUs - origin)),
      })),
      streams: streams.map((s) => ({
        ...s,
        firstMs: msOf(s.firstUs - origin),
        lastMs: msOf(s.lastUs - origin),
        notificationMs: r.file.queries.longStreamNotificationTimes(r.recordingId, s, STREAM_MARKS_MAX).map((u) => msOf(u - origin)),
      })),
      ...(items.length > WATERFALL_MAX || after !== undefined ? { note: `the first ${WATERFALL_MAX} exchanges` } : {}),
    };
  }

  private markReplay(file: string, x: { row: number }): unknown {
    const r = file === this.replayFile ? this.config.replay?.rows.get(x.row) : undefined;
    return r ? { ...x, replay: r.notSent ? 'notSent' : r.differences.length > 0 ? 'different' : 'same' } : x;
  }
}

/** The trace id of the exchange's span: the W3C traceparent in the request's `_meta` or its HTTP headers. */
function traceIdOf(e: StoredExchange, frames: readonly StoredFrame[]): string | undefined {
  const fromMeta = traceContextOf(e.request as JsonRpcMessage).traceparent;
  const fromHeader = frames.map((f) => f.context?.headers?.traceparent).find((h) => h !== undefined);
  const tp = fromMeta ?? fromHeader;
  return /^[\da-f]{2}-([\da-f]{32})-[\da-f]{16}-[\da-f]{2}$/.exec(tp ?? '')?.[1];
}

const ok = (body: unknown): ApiAnswer => ({ status: 200, body });

function bad(message: string): McptapError {
  return new McptapError('MCPTAP_BAD_FLAG', message);
}

function ref(q: URLSearchParams): RecordingRef {
  const recording = num(q, 'recording');
  return { ...(q.get('file') ? { file: q.get('file')! } : {}), ...(recording !== undefined ? { recording } : {}) };
}

function str<K extends string>(q: URLSearchParams, name: string, key: K): Partial<Record<K, string>> {
  const v = q.get(name);
  return v ? ({ [key]: v } as Record<K, string>) : {};
}

function num(q: URLSearchParams, name: string): number | undefined {
  const v = q.get(name);
  if (v === null || v === '') return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw bad(`${name} must be a number of at least 0, got ${JSON.stringify(v)}`);
  return n;
}
