/**
 * `replay --update`'s file: checked again when it is moved into place, since the replay may take
 * minutes. A file that appeared meanwhile is kept unless replacing was asked for; what it held is said.
 */
import { lstatSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openUpdateRecording } from '../../src/replay/update-recording.js';
import { RecordingStore } from '../../src/store/recording-store.js';

describe('openUpdateRecording', () => {
  it('keeps a file that appeared during the replay unless asked to replace it; says what a replaced one held', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcptap-update-'));
    const file = join(dir, 'next.db');
    const update = openUpdateRecording(file, { transport: 'stdio', target: 'server', overwrite: false });
    writeFileSync(file, 'my notes\n'); // written by someone else while the replay ran
    const err = await update.commit().catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'MCPTAP_BAD_FLAG' });
    expect((err as Error).message).toBe(`--update ${file} appeared during the replay; not replaced (pass --force to replace it)`);
    expect(readFileSync(file, 'utf8')).toBe('my notes\n');
    expect(readdirSync(dir)).toEqual(['next.db']); // no temporary file left

    // A recording of two, replaced when asked: the replacement is a recording of one.
    const two = join(dir, 'two.db');
    const store = RecordingStore.open(two, { create: true });
    for (const target of ['a', 'b']) store.beginRecording({ transport: 'stdio', target, startedUs: 1, mcptapVersion: 'test' });
    store.close();
    const replacing = openUpdateRecording(two, { transport: 'stdio', target: 'server', overwrite: true });
    await replacing.commit();
    expect(replacing.replaced).toEqual({ recordings: 2 });
    const after = RecordingStore.open(two);
    try {
      expect(after.listRecordings().map((r) => r.target)).toEqual(['server']);
    } finally {
      after.close();
    }
    // Through a symlink: the recording it points to is replaced, the link stays.
    const link = join(dir, 'baseline.db');
    symlinkSync(two, link);
    const viaLink = openUpdateRecording(link, { transport: 'stdio', target: 'via link', overwrite: true });
    await viaLink.commit();
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    const linked = RecordingStore.open(two);
    try {
      expect(linked.listRecordings().map((r) => r.target)).toEqual(['via link']);
    } finally {
      linked.close();
    }
  });
});
