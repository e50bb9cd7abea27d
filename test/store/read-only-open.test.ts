/**
 * `RecordingStore.open(file, { readOnly: true })`, what `mcptap mcp` and `show --follow` use: it reads
 * a recording and cannot write it; a file of an older schema is refused rather than migrated.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { RecordingStore } from '../../src/store/recording-store.js';

const recording = { transport: 'stdio' as const, target: 'server', startedUs: 1_000_000, mcptapVersion: 'test' };

function newFile(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'mcptap-ro-')), 'r.db');
  const store = RecordingStore.open(file, { create: true });
  store.beginRecording(recording);
  store.close();
  return file;
}

describe('RecordingStore read-only', () => {
  it('reads the recording and refuses a write; a normal open writes', () => {
    const file = newFile();
    const ro = RecordingStore.open(file, { readOnly: true });
    try {
      expect(ro.listRecordings().map((r) => r.id)).toEqual([1]);
      expect(() => ro.beginRecording(recording)).toThrow(/readonly/i);
    } finally {
      ro.close();
    }
    const rw = RecordingStore.open(file);
    try {
      expect(rw.beginRecording(recording)).toBe(2);
    } finally {
      rw.close();
    }
  });

  it('refuses a file of an older schema instead of migrating it', () => {
    const file = newFile();
    const db = new BetterSqlite3(file);
    db.pragma('user_version = 3');
    db.close();
    expect(() => RecordingStore.open(file, { readOnly: true })).toThrow(/older schema; open it once with `mcptap ls/);
    const db2 = new BetterSqlite3(file, { readonly: true });
    expect(db2.pragma('user_version', { simple: true })).toBe(3);
    db2.close();
  });
});
