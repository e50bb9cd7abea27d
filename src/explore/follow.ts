/**
 * `show --follow`: tails a recording another tap is writing. Polls the file read-only for exchange
 * rows past a cursor; an exchange still in flight is held (bounded) and given once it completes,
 * so each exchange is given once, complete. Ends when the recording is closed (its end is stored)
 * and every row of it was given, or when `signal` aborts. The tap's indexer writes the file: rows
 * appear as it indexes (at once under --require-recording, else within MCPTAP_INDEX_LAG_MS).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { McptapError } from '../errors.js';
import { RecordingStore } from '../store/recording-store.js';
import { RecordingQueries } from '../store/recording-queries.js';
import type { StoredExchange } from '../store/types.js';

export interface FollowOptions {
  path: string;
  /** The recording to follow; default: the latest one still being recorded, or the next to begin. */
  recordingId?: number;
  signal: AbortSignal;
  /** Poll interval (ms). */
  intervalMs?: number;
  /** Exchanges in flight held until they complete, at most this many (the oldest are given as they are beyond it). */
  maxPending?: number;
  /** Completed exchanges, in the order they were recorded (held ones when they complete). */
  onExchanges(exchanges: StoredExchange[]): void;
  /** Once, when it begins waiting for the file, its first recording, or the next recording. */
  onWaiting?(what: string): void;
  /** Once, when the followed recording is known. */
  onStart?(info: { recordingId: number; existing: number }): void;
}

export type FollowEnd = 'ended' | 'stopped';

const PAGE = 500;

export async function followRecording(opts: FollowOptions): Promise<FollowEnd> {
  const interval = opts.intervalMs ?? 200;
  let said = false;
  const waitFor = (what: string) => {
    if (!said) opts.onWaiting?.(what);
    said = true;
    return wait();
  };
  const wait = () =>
    sleep(interval, undefined, { signal: opts.signal }).then(
      () => true,
      () => false,
    );
  let store: RecordingStore | undefined;
  try {
    // The file and its first recording may not exist yet: the tap creates them.
    let waited = false;
    while (!(store = openWithRecording(opts.path))) {
      waited = true;
      if (!(await waitFor('a tap to begin recording into it'))) return 'stopped';
    }
    const queries = new RecordingQueries(store);
    const picked = await pickRecording(store, opts.recordingId, () => waitFor('a tap to begin the next recording in it'));
    if (picked === undefined) return 'stopped';
    const { recordingId } = picked;
    // A recording that began after the follow did is given whole, however fast the tap indexed it.
    const fromStart = picked.fromStart || waited;
    let cursor = fromStart ? 0 : queries.lastExchangeRowid(recordingId);
    opts.onStart?.({ recordingId, existing: fromStart ? 0 : (store.listRecordings().find((r) => r.id === recordingId)?.exchanges ?? 0) });
    const pending = new Map<number, StoredExchange>();
    for (;;) {
      const ended = store.getRecording(recordingId)?.endedUs !== undefined;
      const out: StoredExchange[] = [];
      for (const rowid of [...pending.keys()]) {
        const now = store.exchangeAt(rowid);
        if (now && now.state === 'started' && !ended) continue;
        pending.delete(rowid);
        out.push(now ?? pending.get(rowid)!);
      }
      let rows: StoredExchange[];
      do {
        rows = queries.exchangesAfter(recordingId, cursor, PAGE);
        for (const e of rows) {
          cursor = e.rowid;
          if (e.state === 'started' && !ended) pending.set(e.rowid, e);
          else out.push(e);
        }
      } while (rows.length === PAGE);
      for (const [rowid, e] of pending) {
        if (pending.size <= (opts.maxPending ?? 10_000)) break;
        pending.delete(rowid);
        out.push(e);
      }
      if (out.length > 0) opts.onExchanges(out);
      if (ended) return 'ended';
      if (!(await wait())) return 'stopped';
    }
  } finally {
    store?.close();
  }
}

/** The file open read-only once it holds a recording; undefined while it is missing, being created, or empty. */
export function openWithRecording(path: string): RecordingStore | undefined {
  let store: RecordingStore | undefined;
  try {
    store = RecordingStore.open(path, { readOnly: true });
    if (store.latestRecordingId() !== undefined) return store;
  } catch (err) {
    // Not there yet, or still empty: the tap is creating it. Anything else (another kind of file) is said.
    const waiting = err instanceof McptapError && (err.code === 'MCPTAP_RECORDING_NOT_FOUND' || /empty database/.test(err.message));
    if (!waiting) throw err;
  }
  store?.close();
  return undefined;
}

/** The recording asked for, or the latest still open, or (all ended) the next one to begin. */
async function pickRecording(
  store: RecordingStore,
  asked: number | undefined,
  wait: () => Promise<boolean>,
): Promise<{ recordingId: number; fromStart: boolean } | undefined> {
  if (asked !== undefined) return { recordingId: asked, fromStart: false };
  const latest = store.latestRecordingId()!;
  if (store.getRecording(latest)?.endedUs === undefined) return { recordingId: latest, fromStart: false };
  for (;;) {
    const next = store.latestRecordingId()!;
    if (next > latest) return { recordingId: next, fromStart: true };
    if (!(await wait())) return undefined;
  }
}
