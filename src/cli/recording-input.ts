/**
 * The recording `replay` and `mock` read: an SQLite recording, or a text baseline in mcptap JSONL
 * (docs/jsonl-format.md), imported into a temporary recording that is removed when closed.
 */
import { createReadStream, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileHead } from '../interchange/jsonl-baseline.js';
import { importJsonl } from '../interchange/jsonl-import.js';
import { isSqliteFile } from '../store/recording-file-precheck.js';
import type { RecordingStore } from '../store/recording-store.js';
import { VERSION } from '../version.js';
import { openRecordingFile } from './recording-file.js';

export interface RecordingInput {
  store: RecordingStore;
  /** Closes the store (and removes a JSONL file's temporary recording). */
  close(): void;
}

export async function openRecordingInput(file: string): Promise<RecordingInput> {
  if (!existsSync(file) || isSqliteFile(file) || !looksLikeJsonl(file)) {
    const store = openRecordingFile(file);
    return { store, close: () => store.close() };
  }
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-jsonl-'));
  try {
    const db = join(dir, 'baseline.db');
    const input = createReadStream(file, 'utf8');
    const lines = createInterface({ input, crlfDelay: Infinity });
    try {
      await importJsonl({ lines, file, outPath: db, mcptapVersion: VERSION });
    } finally {
      lines.close();
      input.destroy();
    }
    const store = openRecordingFile(db);
    return {
      store,
      close: () => {
        store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

/** A `.jsonl` name, or a file whose first non-blank byte opens a JSON object. */
function looksLikeJsonl(file: string): boolean {
  return /\.jsonl$/i.test(file) || fileHead(file, 64).trimStart().startsWith('{');
}
