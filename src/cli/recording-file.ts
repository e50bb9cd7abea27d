/**
 * Opening a recording for the read-only commands (ls, show, and later replay/export): clear
 * one-line errors with exit code 4 for a missing file, a file that is not a recording, or a
 * recording number the file does not hold.
 */
import { RecordingStore } from '../store/recording-store.js';
import { McptapError } from '../errors.js';
import { deadTapJournals, deadTapVerdict, finishingTapJournals, settleDeadTap, unspooledLoss, type DeadTap, type FinishingTap } from '../store/tap-journal.js';
import { lineSafe } from '../report/format.js';

/**
 * Opens a recording file. A tap that was recording to it and was killed with its indexer (SIGKILL
 * to its process group) left a journal beside it (store/tap-journal.ts): said here on stderr, what
 * the recording lacks kept with it (`mcptap ls`: INCOMPLETE), the journal removed.
 */
export function openRecordingFile(file: string): RecordingStore {
  // First the indexers of taps that have ended: one that dies meanwhile is judged with the dead below.
  const finishing = waitForFinishingIndexers(file);
  const dead = deadTapJournals(file);
  let store: RecordingStore;
  try {
    store = RecordingStore.open(file, { create: false });
  } catch (err) {
    for (const d of dead)
      warn(`a tap (pid ${d.tapPid}) recording to ${file} was killed before its recording was opened: ${unspooledLoss(d.spooled, 'recorded')}`);
    const f = finishing[0];
    if (f && err instanceof McptapError && err.code === 'MCPTAP_RECORDING_NOT_FOUND')
      throw new McptapError('MCPTAP_RECORDING_IN_PROGRESS', `${file} is still being written: ${stillWriting(f)}; run this again once it has exited`);
    throw err;
  }
  for (const f of finishing) warn(`a recording in ${file} is still being written: ${stillWriting(f)}; what is shown may lack its last traffic`);
  for (const d of dead) sayDeadTap(store, file, d);
  return store;
}

const stillWriting = (f: FinishingTap) => `its tap (pid ${f.tapPid}) has ended and its indexer (pid ${f.indexerPid}) is completing it`;

/**
 * Waits, bounded, for the indexers of taps that have ended to complete their recordings (a tap may
 * exit before its indexer, which then indexes the rest of the spool): a command run right after
 * the tap sees the whole recording. Returns those still writing at the end of the wait.
 */
function waitForFinishingIndexers(file: string): FinishingTap[] {
  let finishing = finishingTapJournals(file);
  if (finishing.length === 0) return finishing;
  const waitMs = indexerWaitMs();
  const nap = new Int32Array(new SharedArrayBuffer(4));
  for (let waited = 0; finishing.length > 0 && waited < waitMs; waited += NAP_MS) {
    Atomics.wait(nap, 0, 0, NAP_MS);
    finishing = finishingTapJournals(file);
  }
  return finishing;
}

const NAP_MS = 50;

/** `MCPTAP_INDEXER_WAIT_MS`: how long a command waits for such an indexer (default 10 s). */
function indexerWaitMs(): number {
  const v = Number(process.env['MCPTAP_INDEXER_WAIT_MS']);
  return process.env['MCPTAP_INDEXER_WAIT_MS'] !== undefined && Number.isFinite(v) && v >= 0 ? v : 10_000;
}

function sayDeadTap(store: RecordingStore, file: string, d: DeadTap): void {
  const v = deadTapVerdict(store.db, d);
  const kept = settleDeadTap(store.db, d, v);
  if (v.ended) return;
  const which = v.recordingId === undefined ? `a recording in ${file} (its indexer had not opened it)` : `recording ${v.recordingId} in ${file}`;
  warn(
    `${which} was not closed: its tap (pid ${d.tapPid}) and its indexer were killed before they finished it; ${unspooledLoss(v.lost, 'indexed')}, and what it forwarded in its last milliseconds (not yet spooled) is missing too, lost with them ` +
      `(the spool was encrypted under a key only they held: nothing can recover it); the recording ends at its last event` +
      (v.recordingId === undefined ? '' : kept ? ', now marked INCOMPLETE' : ' (the file could not be written to mark it INCOMPLETE)'),
  );
}

function warn(line: string): void {
  process.stderr.write(`mcptap warn: ${lineSafe(line)}\n`);
}

/** `--recording N` when given, else the file's latest recording. */
export function pickRecording(store: RecordingStore, file: string, flag: string | undefined): number {
  if (flag === undefined) {
    const latest = store.latestRecordingId();
    if (latest === undefined) throw new McptapError('MCPTAP_NO_RECORDING', `${file} holds no recordings`);
    return latest;
  }
  const id = Number(flag);
  if (!/^\d+$/.test(flag) || !Number.isSafeInteger(id)) {
    throw new McptapError('MCPTAP_BAD_FLAG', `--recording must be a recording number (see mcptap ls), got ${JSON.stringify(flag)}`);
  }
  if (!store.getRecording(id)) {
    const ids = store.listRecordings().map((r) => r.id);
    throw new McptapError('MCPTAP_NO_RECORDING', `${file} has no recording ${id} (it has ${ids.length ? ids.join(', ') : 'none'})`);
  }
  return id;
}

/** Runs `fn` with the store open and always closes it. */
export function withRecordingFile<T>(file: string, fn: (store: RecordingStore) => T): T {
  const store = openRecordingFile(file);
  try {
    return fn(store);
  } finally {
    store.close();
  }
}
