/**
 * Recordings to explore, opened read-only: the query layer of `mcptap mcp` (and of a web explorer).
 * Files are named by a label (the file's base name, numbered when two share one); a request names a
 * label, never a path, so nothing a client sends reaches the file system. Results are plain,
 * compact JSON-ready objects; pages carry "N more" and a cursor. Secrets are as stored (redacted).
 */
import { basename } from 'node:path';
import { McptapError } from '../errors.js';
import { RecordingStore } from '../store/recording-store.js';
import { RecordingQueries, type ExchangeQuery } from '../store/recording-queries.js';
import type { RecordingListing, StoredExchange } from '../store/types.js';
import { incompleteOf } from '../report/recording-list.js';
import { compactExchange, exchangeDetail, type DetailLimits } from './exchange-json.js';
import { compareSummaries, summaryRow, type SummaryRow } from './latency-rows.js';

export interface OpenFile {
  label: string;
  path: string;
  store: RecordingStore;
  queries: RecordingQueries;
}

/** Where a recording is: the file's label (optional with one file) and its number (default: the file's latest). */
export interface RecordingRef {
  file?: string;
  recording?: number;
}

export type FindArgs = RecordingRef & Omit<ExchangeQuery, 'recordingId' | 'afterRowid' | 'limit'> & { cursor?: string; limit?: number };

export const DEFAULT_PAGE = 20;
export const MAX_PAGE = 200;

export class RecordingExplorer {
  readonly files: readonly OpenFile[];

  private constructor(files: OpenFile[]) {
    this.files = files;
  }

  /** Opens every file read-only; fails (closing what it opened) on the first that is not a readable recording. */
  static open(paths: readonly string[]): RecordingExplorer {
    const files: OpenFile[] = [];
    const seen = new Map<string, number>();
    try {
      for (const path of paths) {
        const store = RecordingStore.open(path, { readOnly: true });
        const base = basename(path);
        const n = (seen.get(base) ?? 0) + 1;
        seen.set(base, n);
        files.push({ label: n === 1 ? base : `${base}#${n}`, path, store, queries: new RecordingQueries(store) });
      }
    } catch (err) {
      for (const f of files) f.store.close();
      throw err;
    }
    return new RecordingExplorer(files);
  }

  close(): void {
    for (const f of this.files) f.store.close();
  }

  /** Every recording of every file, newest last, with its counts. */
  listRecordings(): unknown[] {
    return this.files.flatMap((f) => f.store.listRecordings().map((r) => recordingJson(f.label, r)));
  }

  /** The file and recording a reference names; a clear error naming what exists otherwise. */
  resolve(ref: RecordingRef): { file: OpenFile; recordingId: number } {
    const file = this.fileOf(ref.file);
    const recordingId = ref.recording ?? file.store.latestRecordingId();
    if (recordingId === undefined) throw new McptapError('MCPTAP_NO_RECORDING', `${file.label} holds no recordings`);
    if (!file.store.getRecording(recordingId)) {
      const ids = file.store.listRecordings().map((r) => r.id);
      throw new McptapError('MCPTAP_NO_RECORDING', `${file.label} has no recording ${recordingId} (it has ${ids.join(', ') || 'none'})`);
    }
    return { file, recordingId };
  }

  private fileOf(label: string | undefined): OpenFile {
    if (label === undefined) {
      if (this.files.length === 1) return this.files[0]!;
      throw new McptapError('MCPTAP_BAD_FLAG', `name the file: one of ${this.labels()}`);
    }
    const file = this.files.find((f) => f.label === label);
    if (!file) throw new McptapError('MCPTAP_BAD_FLAG', `no file ${JSON.stringify(label)} is open; the files are ${this.labels()}`);
    return file;
  }

  private labels(): string {
    return this.files.map((f) => JSON.stringify(f.label)).join(', ');
  }

  findExchanges(args: FindArgs): unknown {
    const { file, recordingId } = this.resolve(args);
    const limit = pageLimit(args.limit);
    const { cursor, limit: _l, file: _f, recording: _r, ...filters } = args;
    if (filters.slowest && cursor !== undefined)
      throw new McptapError('MCPTAP_BAD_FLAG', 'slowest gives one page: it takes no cursor (raise limit, or narrow with minLatencyMs)');
    const page = file.queries.findExchanges({ ...filters, recordingId, limit, ...(cursor !== undefined ? { afterRowid: parseCursor(cursor) } : {}) });
    const origin = file.store.getRecording(recordingId)!.startedUs;
    return {
      file: file.label,
      recording: recordingId,
      exchanges: page.items.map((e) => compactExchange(e, origin)),
      ...moreOf(page),
    };
  }

  getExchange(args: RecordingRef & { row: number } & DetailLimits): unknown {
    const { file, recordingId } = this.resolve(args);
    const e: StoredExchange | undefined = file.store.exchangeAt(args.row);
    if (!e || e.recordingId !== recordingId)
      throw new McptapError('MCPTAP_NO_EXCHANGE', `recording ${recordingId} of ${file.label} has no exchange in row #${args.row}`);
    const frames = file.store.framesOfExchange(recordingId, e.key);
    const anomalies = file.store.anomalies(recordingId, { exchangeKey: e.key });
    return { file: file.label, recording: recordingId, ...exchangeDetail(e, frames, anomalies, args) };
  }

  latencySummary(args: RecordingRef & { method?: string }): unknown {
    const { file, recordingId } = this.resolve(args);
    const rows = file.queries
      .latencySummary(recordingId)
      .filter((m) => args.method === undefined || m.method === args.method)
      .map(summaryRow);
    return { file: file.label, recording: recordingId, latencyUnit: 'ms', rows };
  }

  anomalies(args: RecordingRef & { kind?: string; cursor?: string; limit?: number }): unknown {
    const { file, recordingId } = this.resolve(args);
    const origin = file.store.getRecording(recordingId)!.startedUs;
    const page = file.queries.anomalies({
      recordingId,
      limit: pageLimit(args.limit),
      ...(args.kind !== undefined ? { kind: args.kind } : {}),
      ...(args.cursor !== undefined ? { afterRowid: parseCursor(args.cursor) } : {}),
    });
    return {
      file: file.label,
      recording: recordingId,
      kinds: page.kinds,
      anomalies: page.items.map((a) => ({
        kind: a.kind,
        atMs: msOf(a.timeUs - origin),
        connection: a.connectionId,
        ...(a.direction ? { direction: a.direction } : {}),
        detail: a.detail,
        ...(a.exchangeKey ? { exchangeKey: a.exchangeKey } : {}),
      })),
      ...moreOf(page),
    };
  }

  compareRecordings(args: { baseline: RecordingRef; candidate: RecordingRef }): unknown {
    const base = this.resolve(args.baseline);
    const cand = this.resolve(args.candidate);
    const rows: SummaryRow[][] = [base, cand].map((r) => r.file.queries.latencySummary(r.recordingId).map(summaryRow));
    return {
      baseline: { file: base.file.label, recording: base.recordingId },
      candidate: { file: cand.file.label, recording: cand.recordingId },
      latencyUnit: 'ms',
      rows: compareSummaries(rows[0]!, rows[1]!),
    };
  }
}

function recordingJson(label: string, r: RecordingListing): Record<string, unknown> {
  const incomplete = incompleteOf(r);
  return {
    file: label,
    recording: r.id,
    transport: r.transport,
    target: r.target,
    startedAt: new Date(Math.floor(r.startedUs / 1000)).toISOString(),
    durationMs: r.endedUs === undefined ? null : msOf(r.endedUs - r.startedUs),
    exchanges: r.exchanges,
    outcomes: r.outcomes,
    anomalies: r.anomalies,
    ...(r.endedUs === undefined ? { state: 'recording or ended abruptly' } : {}),
    ...(incomplete ? { incomplete } : {}),
    ...(r.droppedQueue + r.droppedWrite > 0 ? { dropped: r.droppedQueue + r.droppedWrite } : {}),
  };
}

function moreOf(page: { more: number; moreCapped: boolean; nextAfter?: number }): Record<string, unknown> {
  if (page.more === 0) return { more: 0 };
  if (page.nextAfter === undefined) return { more: page.more, note: `${page.moreCapped ? 'at least ' : ''}${page.more} more, not listed` };
  return {
    more: page.more,
    note: `${page.moreCapped ? 'at least ' : ''}${page.more} more; pass cursor ${JSON.stringify(String(page.nextAfter))} for the next page`,
    cursor: String(page.nextAfter),
  };
}

export function msOf(us: number): number {
  return Math.round(us) / 1000;
}

/** A page size asked for: a positive integer, at most MAX_PAGE. */
export function pageLimit(limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_PAGE;
  if (!Number.isInteger(limit) || limit < 1) throw new McptapError('MCPTAP_BAD_FLAG', `limit must be a positive integer, got ${JSON.stringify(limit)}`);
  return Math.min(limit, MAX_PAGE);
}

function parseCursor(cursor: string): number {
  if (!/^\d{1,15}$/.test(cursor)) throw new McptapError('MCPTAP_BAD_FLAG', `cursor must be one a previous page returned, got ${JSON.stringify(cursor)}`);
  return Number(cursor);
}
