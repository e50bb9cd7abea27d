/** Looking at a recording a running tap writes. */
import { existsSync } from 'node:fs';
import { RecordingStore } from '../../src/store/recording-store.js';

/** The recording's row is in the file (its indexer is up); false while the file is missing or being created. */
export function recordingStarted(db: string): boolean {
  if (!existsSync(db)) return false;
  try {
    const store = RecordingStore.open(db);
    try {
      return store.listRecordings().length > 0;
    } finally {
      store.close();
    }
  } catch {
    return false;
  }
}
