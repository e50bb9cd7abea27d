/**
 * Opening a recording for the read-only commands (ls, show, and later replay/export): clear
 * one-line errors with exit code 4 for a missing file, a file that is not a recording, or a
 * recording number the file does not hold.
 */
import { RecordingStore } from '../store/recording-store.js';
import { McptapError } from '../errors.js';

export function openRecordingFile(file: string): RecordingStore {
  return RecordingStore.open(file, { create: false });
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
