/**
 * The tap's journal (src/store/tap-journal.ts): a journal is a dead tap's only when every process it
 * names is gone, a pid now held by another process (another start time) counting as gone. Real
 * processes: this one (alive) and a finished child (gone).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { deadTapJournals, finishingTapJournals, JournalSlot, selfFields, tapJournalPath } from '../../src/store/tap-journal.js';

const dir = mkdtempSync(join(tmpdir(), 'mcptap-journal-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A pid no process holds any more: a child that has exited and been reaped. */
const gonePid = () => spawnSync(process.execPath, ['-e', '0']).pid!;

function journal(db: string, tapPid: number, tap: string, indexer?: string): string {
  const path = tapJournalPath(db, tapPid);
  const t = JournalSlot.open(path, 'tap', true)!;
  t.write(`${tap} started 1000 spooled 5000`);
  t.close(false);
  if (indexer) {
    const i = JournalSlot.open(path, 'indexer', false)!;
    i.write(`${indexer} indexed 1200`);
    i.close(false);
  }
  return path;
}

describe.skipIf(process.platform !== 'linux')('deadTapJournals', () => {
  it('a journal whose tap runs is left alone; one whose processes are gone is a dead tap, with its figures', () => {
    const db = join(dir, 'a.db');
    journal(db, process.pid, selfFields('tap'));
    expect(deadTapJournals(db)).toEqual([]);
    const gone = gonePid();
    const path = journal(db, gone, `tap ${gone} 0`, `indexer ${gonePid()} 0`);
    expect(deadTapJournals(db)).toEqual([{ path, tapPid: gone, startedUs: 1000, spooled: 5000, indexed: 1200 }]);
  });

  it('a live indexer keeps a journal alive; a reused pid (another start time) does not', () => {
    const db = join(dir, 'b.db');
    const gone = gonePid();
    const path = journal(db, gone, `tap ${gone} 0`, selfFields('indexer'));
    expect(deadTapJournals(db)).toEqual([]);
    // Its tap gone, its indexer running: the recording is being completed.
    expect(finishingTapJournals(db)).toEqual([{ path, tapPid: gone, indexerPid: process.pid }]);
    // This process's pid, with a start time that is not its own: another process had that pid.
    rmSync(path);
    const reused = journal(db, process.pid, `tap ${process.pid} 1`);
    expect(deadTapJournals(db).map((d) => d.path)).toEqual([reused]);
  });

  it('closing a slot with `remove` removes the journal; journals of another file are not this one’s', () => {
    const db = join(dir, 'c.db');
    journal(join(dir, 'c.db.other'), gonePid(), 'tap 1 0');
    expect(deadTapJournals(db)).toEqual([]);
    const slot = JournalSlot.open(tapJournalPath(db, process.pid), 'tap', true)!;
    // The tap names its indexer before that indexer runs: a live indexer, a journal that is not dead.
    slot.write(`tap ${gonePid()} 0 started 1 spooled 10`);
    slot.nameIndexer(process.pid);
    expect(deadTapJournals(db)).toEqual([]);
    expect(finishingTapJournals(db).map((f) => f.indexerPid)).toEqual([process.pid]);
    slot.close(true);
    expect(existsSync(tapJournalPath(db, process.pid))).toBe(false);
  });
});
