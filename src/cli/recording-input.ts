/**
 * The recording `replay` and `mock` read: an SQLite recording, or a text baseline in mcptap JSONL
 * (docs/jsonl-format.md), imported into a temporary recording that is removed when closed.
 */
import { closeSync, createReadStream, existsSync, mkdtempSync, openSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
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
  if (/\.jsonl$/i.test(file)) return true;
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const head = Buffer.alloc(64);
    const n = readSync(fd, head, 0, head.length, 0);
    return head.subarray(0, n).toString('utf8').trimStart().startsWith('{');
  } catch {
    return false; // missing or unreadable: the recording's own open says why
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
