/**
 * One recording file, several writers: taps recording into the same file at once each keep all of
 * their traffic (their indexers wait for one another instead of dropping "database is locked"),
 * and `--require-recording` exits 1 when the recording fails, even when it fails while the backlog
 * is indexed after the server has gone. Real CLI, reference server; the other writer in the second
 * test is a plain SQLite connection holding the write lock.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { RecordingStore } from '../../src/store/recording-store.js';
import { MCPTAP } from '../helpers/paths.js';
import { modernMeta } from '../reference/raw-stdio-peer.js';

const dir = mkdtempSync(join(tmpdir(), 'mcptap-shared-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A tap over the reference server; `calls(from, n)` sends n echo calls (32 in flight) and resolves when all are answered. */
function tap(db: string, flags: string[] = []) {
  const child = spawn(
    process.execPath,
    [MCPTAP, 'stdio', '--record', db, ...flags, '--', process.execPath, MCPTAP, 'reference', '--stdio', '--log-level', 'warn'],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => (stderr += b));
  let buf = '';
  let answered = 0;
  let onAnswer = () => {};
  child.stdout.setEncoding('utf8').on('data', (s: string) => {
    buf += s;
    const lines = buf.split('\n');
    buf = lines.pop()!;
    answered += lines.length;
    onAnswer();
  });
  const call = (id: number) =>
    child.stdin.write(
      JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text: `c${id}` }, _meta: modernMeta() } }) + '\n',
    );
  const calls = (from: number, n: number) =>
    new Promise<void>((resolve, reject) => {
      const base = answered;
      let sent = 0;
      const timer = setTimeout(() => reject(new Error(`${answered - base} of ${n} answered; stderr: ${stderr}`)), 60_000);
      onAnswer = () => {
        while (sent < n && sent - (answered - base) < 32) call(from + sent++);
        if (answered - base >= n) {
          clearTimeout(timer);
          resolve();
        }
      };
      onAnswer();
    });
  const closed = new Promise<number | null>((r) => child.once('close', r));
  /** Resolves once stderr matches `re`, or after `ms` (then the test's assertions say what was missing). */
  const said = async (re: RegExp, ms: number) => {
    for (let i = 0; i < ms / 50 && !re.test(stderr); i++) await new Promise((r) => setTimeout(r, 50));
  };
  return { child, calls, closed, said, stderr: () => stderr };
}

// The two tests share nothing (a file each): they run at once.
describe.concurrent('several writers of one recording file', () => {
  it('three taps recording into one file at once each keep every exchange', async () => {
    const db = join(dir, 'shared.db');
    const taps = [tap(db), tap(db), tap(db)];
    await Promise.all(taps.map((t) => t.calls(1, 3000)));
    for (const t of taps) t.child.stdin.end();
    expect(await Promise.all(taps.map((t) => t.closed))).toEqual([0, 0, 0]);
    for (const t of taps) expect(t.stderr()).not.toMatch(/locked|could not|drop|incomplete/i);
    const store = RecordingStore.open(db);
    try {
      const recordings = store.listRecordings();
      expect(recordings).toHaveLength(3);
      for (const r of recordings) {
        expect([r.exchanges, r.droppedQueue, r.droppedWrite]).toEqual([3000, 0, 0]);
        expect(r.outcomes).toEqual({ ok: 3000 });
      }
    } finally {
      store.close();
    }
  });

  it('--require-recording: a recording that fails while its backlog is indexed, after the server is gone, exits 1', async () => {
    const db = join(dir, 'required.db');
    const t = tap(db, ['--require-recording']);
    await t.calls(1, 20);
    // Indexed as it flows under --require-recording: the recording exists with its first calls.
    for (let i = 0; i < 100; i++) {
      const store = RecordingStore.open(db);
      const n = store.listRecordings()[0]?.exchanges ?? 0;
      store.close();
      if (n === 20) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    // Another writer takes the file and keeps it past the indexer's patience (10 s): until the tap
    // says its recording failed, while it indexes the backlog after the server is gone. Released
    // then (it used to be held to the end, each later batch waiting out the patience again): the
    // batches written after the failure must not turn the exit code back to 0.
    const other = new BetterSqlite3(db);
    other.exec('BEGIN EXCLUSIVE');
    try {
      await t.calls(21, 20);
      t.child.stdin.end();
      await t.said(/recording failed and --require-recording is set/, 40_000);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    expect(await t.closed).toBe(1);
    expect(t.stderr()).toMatch(/recording failed and --require-recording is set/);
  }, 60_000);
});
