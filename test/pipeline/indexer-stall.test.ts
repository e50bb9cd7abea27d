/**
 * When a closing tap gives up on its indexer (IndexerStallWatch): pure, on made-up looks. The case
 * that lost recordings under load: an indexer that took longer than the stall limit to load and open
 * the recording, and had not indexed yet at the first look after opening.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { IndexerStallWatch, OPEN_LIMIT_MS, processCpuTicks, type IndexerLook } from '../../src/pipeline/indexer-stall.js';

const STALL = 30_000;
const at = (now: number, l: Partial<IndexerLook> = {}): IndexerLook => ({ now, opened: false, indexed: 0, cpu: 0, ...l });

describe('IndexerStallWatch', () => {
  it('loading that uses CPU is progress; opening restarts the clock', () => {
    const w = new IndexerStallWatch(STALL, at(0));
    // 40 s of loading at the lowest priority, the CPU time creeping up.
    for (let s = 1; s <= 40; s++) expect(w.look(at(s * 1000, { cpu: s }), true)).toBeUndefined();
    // Open, nothing indexed yet: not a stall (the old clock counted from the close and gave up here).
    expect(w.look(at(41_000, { opened: true, cpu: 41 }), true)).toBeUndefined();
    expect(w.look(at(41_000 + STALL, { opened: true, cpu: 90 }), true)).toBeUndefined();
    // Open and indexing nothing: CPU no longer counts, 30 s without indexing does.
    expect(w.look(at(42_000 + STALL, { opened: true, cpu: 99 }), true)).toMatch(/made no progress for 30 s/);
  });

  it('indexing further is progress; nothing left to index is never a stall', () => {
    const w = new IndexerStallWatch(STALL, at(0, { opened: true }));
    expect(w.look(at(STALL - 1, { opened: true, indexed: 10 }), true)).toBeUndefined();
    expect(w.look(at(2 * STALL - 2, { opened: true, indexed: 20 }), true)).toBeUndefined();
    // All indexed (the recording is being closed): however long that takes.
    expect(w.look(at(10 * STALL, { opened: true, indexed: 20 }), false)).toBeUndefined();
    expect(w.look(at(11 * STALL + 1, { opened: true, indexed: 20 }), true)).toMatch(/no progress/);
  });

  it('a loading indexer that uses no CPU (stopped) is given up on after the stall limit', () => {
    const w = new IndexerStallWatch(STALL, at(0, { cpu: 5 }));
    expect(w.look(at(STALL, { cpu: 5 }), true)).toBeUndefined();
    expect(w.look(at(STALL + 1, { cpu: 5 }), true)).toMatch(/no progress for 30 s/);
  });

  it('the opening is bounded however it moves; where CPU time cannot be read, by that bound alone', () => {
    const moving = new IndexerStallWatch(STALL, at(0));
    const blind = new IndexerStallWatch(STALL, at(0, { cpu: undefined }));
    for (let s = 1; s * 1000 <= OPEN_LIMIT_MS; s++) {
      expect(moving.look(at(s * 1000, { cpu: s }), true)).toBeUndefined();
      expect(blind.look(at(s * 1000, { cpu: undefined }), true)).toBeUndefined();
    }
    expect(moving.look(at(OPEN_LIMIT_MS + 1, { cpu: 1e6 }), true)).toMatch(/had not opened the recording 5 min after the close/);
    expect(blind.look(at(OPEN_LIMIT_MS + 1, { cpu: undefined }), true)).toMatch(/had not opened/);
  });

  it.skipIf(process.platform !== 'linux')('reads a process CPU time from /proc; undefined once it is gone', () => {
    const mine = processCpuTicks(process.pid);
    expect(mine).toBeGreaterThan(0);
    const done = spawnSync(process.execPath, ['-e', '0']);
    expect(processCpuTicks(done.pid!)).toBeUndefined();
  });
});
