/**
 * Issue 36: a tap exiting on a signal may do so before its event loop has heard that the same group
 * signal killed its recording indexer while it loaded (the child's 'exit' waits for the loop). The
 * close path looks first (RecordingIndexer.beforeExit, /proc): such a child is replaced on the same
 * spool and the replacement indexes everything. The death is made unheard on purpose: the test
 * kills the child right after its spawn and waits for it synchronously, never yielding to the loop.
 * One still loading as the tap exits (no stop signal caught yet: the group signal is killing it,
 * perhaps not visibly yet) is replaced too. Both ways: a live indexer is left alone; one SIGKILLed after it had opened the recording (not a
 * start-up death) is not replaced, and its loss is counted.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RecordingIndexer } from '../../src/pipeline/recording-indexer.js';
import type { SpoolWriter } from '../../src/pipeline/spool.js';
import { systemClockOrigin } from '../../src/util/clock.js';
import { unreapedExit } from '../../src/util/proc-exit.js';
import { RecordingStore } from '../../src/store/recording-store.js';
import { indexerOn, spoolOfCalls } from '../helpers/spooled-calls.js';

const dir = mkdtempSync(join(tmpdir(), 'mcptap-unheard-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A spool holding 50 answered calls, and an indexer spawned on it (told the spool's end). */
function spooledIndexer(name: string): { db: string; spool: SpoolWriter; indexer: RecordingIndexer } {
  const db = join(dir, `${name}.db`);
  const spool = spoolOfCalls(db, dir, 50);
  const indexer = indexerOn(spool, db);
  indexer.spooledNow(spool.end);
  return { db, spool, indexer };
}

/** Blocks (never yielding to the event loop, so that the exit stays unheard) until `pid` is a zombie; bounded at 10 s. */
function waitDeadUnheard(pid: number): ReturnType<typeof unreapedExit> {
  for (const end = Date.now() + 10_000; Date.now() < end;) {
    const gone = unreapedExit(pid);
    if (gone) return gone;
  }
  return undefined;
}

function calls(db: string): number {
  const store = RecordingStore.open(db);
  try {
    return store.exchanges({ method: 'tools/call' }).filter((e) => e.outcome === 'ok').length;
  } finally {
    store.close();
  }
}

/** The (replacement) indexer is alive, closes without a word and leaves all 50 calls in the recording. */
async function expectWholeSpoolIndexed(db: string, spool: SpoolWriter, indexer: RecordingIndexer): Promise<void> {
  expect(indexer.alive).toBe(true);
  expect(await indexer.close(spool.end, systemClockOrigin.epochUs + 1e6)).toEqual([]);
  spool.close();
  expect(calls(db)).toBe(50);
  expect(indexer.lostBytes()).toBe(0);
}

describe.skipIf(process.platform !== 'linux')('an indexer killed by a group signal, its death not yet heard', () => {
  it('is replaced when the close path looks: the replacement indexes the whole spool', async () => {
    const { db, spool, indexer } = spooledIndexer('replaced');
    const first = indexer.pid!;
    // A group signal while it loads: long before its handlers are up (a Node start-up takes tens of ms).
    process.kill(first, 'SIGTERM');
    expect(waitDeadUnheard(first)).toEqual({ code: null, signal: 'SIGTERM' });
    indexer.beforeExit();
    expect(indexer.pid).not.toBe(first);
    await expectWholeSpoolIndexed(db, spool, indexer);
  }, 60_000);

  it('one still loading as the tap exits on a signal is replaced: the group signal may be killing it unseen', async () => {
    const { db, spool, indexer } = spooledIndexer('loading');
    const first = indexer.pid!;
    // Right after its spawn it catches no stop signal yet: a group signal would kill it.
    indexer.beforeExit();
    expect(indexer.pid).not.toBe(first);
    expect(waitDeadUnheard(first)).toEqual({ code: null, signal: 'SIGKILL' });
    await expectWholeSpoolIndexed(db, spool, indexer);
  }, 60_000);

  it('a live indexer is left alone; one killed after it opened the recording is not replaced, its loss counted', async () => {
    const { spool, indexer } = spooledIndexer('not-replaced');
    await indexer.ready;
    const pid = indexer.pid!;
    indexer.beforeExit();
    expect(indexer.pid).toBe(pid);
    expect(indexer.alive).toBe(true);
    process.kill(pid, 'SIGKILL');
    expect(waitDeadUnheard(pid)).toEqual({ code: null, signal: 'SIGKILL' });
    indexer.beforeExit();
    expect(indexer.pid).toBe(pid);
    expect(indexer.alive).toBe(false);
    const lines = await indexer.close(spool.end, systemClockOrigin.epochUs + 1e6);
    spool.close();
    expect(lines.join('\n')).toMatch(/recording incomplete: recording indexer exited \(SIGKILL\)/);
  }, 60_000);
});
