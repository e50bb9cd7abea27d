/**
 * The stdio demo summarises its recording only once the tap's indexer has ended it: the SDK's
 * close sends SIGTERM to a tap still closing after 2 s, and the tap then leaves the rest of the
 * file to its indexer (on a busy machine the demo printed 36 of its 52 exchanges, "not closed").
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { recordingEnd } from '../../src/demo/stdio-demo.js';
import { RecordingStore } from '../../src/store/recording-store.js';

const file = () => join(mkdtempSync(join(tmpdir(), 'mcptap-demo-end-')), 'demo.db');
const begin = (store: RecordingStore) => store.beginRecording({ transport: 'stdio', target: 'demo', startedUs: 1, mcptapVersion: 'test' });
const end = (store: RecordingStore, id: number) => store.endRecording(id, { endedUs: 2, droppedQueue: 0, droppedWrite: 0 });

describe('the stdio demo waits for its recording to end', () => {
  it('waits while the indexer still writes, and gives the recording once it has ended', async () => {
    const db = file();
    const store = RecordingStore.open(db, { create: true });
    const id = begin(store);
    let waiting = 0;
    const ended = recordingEnd(db, undefined, { intervalMs: 20, onWaiting: () => waiting++ });
    await new Promise((r) => setTimeout(r, 200));
    end(store, id);
    expect(await ended).toEqual({ id, ended: true });
    expect(waiting).toBe(1);
    store.close();
  });

  it('does not take an earlier, ended recording of the same file for its own', async () => {
    const db = file();
    const store = RecordingStore.open(db, { create: true });
    const earlier = begin(store);
    end(store, earlier);
    const ended = recordingEnd(db, earlier, { intervalMs: 20 });
    await new Promise((r) => setTimeout(r, 200));
    const ours = begin(store);
    await new Promise((r) => setTimeout(r, 100));
    end(store, ours);
    expect(await ended).toEqual({ id: ours, ended: true });
    store.close();
  });

  it('gives up at its bound with the recording as it is, and waits not at all for one already ended', async () => {
    const db = file();
    const store = RecordingStore.open(db, { create: true });
    const id = begin(store);
    expect(await recordingEnd(db, undefined, { timeoutMs: 150, intervalMs: 20 })).toEqual({ id, ended: false });
    end(store, id);
    let waiting = 0;
    expect(await recordingEnd(db, undefined, { onWaiting: () => waiting++ })).toEqual({ id, ended: true });
    expect(waiting).toBe(0);
    expect(await recordingEnd(join(db, '..', 'missing.db'), undefined, { timeoutMs: 50, intervalMs: 20 })).toBeUndefined();
    store.close();
  });
});
