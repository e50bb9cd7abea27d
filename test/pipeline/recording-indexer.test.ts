/**
 * Recording through the spool and the indexer process, end to end with the real CLI and the
 * reference server: a burst far faster than the indexer is recorded whole (nothing dropped for
 * being slow), the spool leaves no file, and the indexer never outlives the tap.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SHM_DIR } from '../../src/pipeline/spool.js';
import { systemClockOrigin } from '../../src/util/clock.js';
import { RecordingStore } from '../../src/store/recording-store.js';
import { MCPTAP } from '../helpers/paths.js';
import { indexerOn, spoolOfCalls } from '../helpers/spooled-calls.js';
import { modernMeta } from '../reference/raw-stdio-peer.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tap(db: string, env: Record<string, string> = {}, tapArgs: string[] = []) {
  const child = spawn(
    process.execPath,
    [MCPTAP, 'stdio', '--record', db, ...tapArgs, '--', process.execPath, MCPTAP, 'reference', '--stdio', '--log-level', 'warn'],
    { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...env } },
  );
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => (stderr += b));
  let buf = '';
  const answered = new Set<number>();
  let onAnswer: () => void = () => {};
  child.stdout.setEncoding('utf8').on('data', (s: string) => {
    buf += s;
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const m = JSON.parse(buf.slice(0, nl)) as { id?: number };
      buf = buf.slice(nl + 1);
      if (typeof m.id === 'number') answered.add(m.id);
      onAnswer();
    }
  });
  const call = (id: number) =>
    child.stdin.write(
      JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text: `burst ${id}` }, _meta: modernMeta() } }) + '\n',
    );
  /** Sends `n` calls with `window` in flight; resolves when all are answered (bounded by `ms`). */
  const burst = (n: number, window: number, ms: number) =>
    new Promise<void>((resolve, reject) => {
      let sent = 0;
      const timer = setTimeout(() => reject(new Error(`${answered.size} of ${n} answered within ${ms} ms; stderr: ${stderr}`)), ms);
      onAnswer = () => {
        while (sent < n && sent - answered.size < window) call(++sent);
        if (answered.size >= n) {
          clearTimeout(timer);
          resolve();
        }
      };
      onAnswer();
    });
  const closed = new Promise<number | null>((r) => child.once('close', r));
  return { child, burst, closed, stderr: () => stderr };
}

/** The tap's indexer child, found through /proc (Linux): children of any of its threads, by command line. */
/** The tap's indexer process once it has opened the recording: it boots beside the traffic, so it is waited for (up to 10 s). */
async function startedIndexerOf(tapPid: number, db: string): Promise<number | undefined> {
  for (let i = 0; i < 500; i++) {
    const pid = indexerOf(tapPid);
    if (pid && RecordingStore.hasRecording(db)) return pid;
    await new Promise((r) => setTimeout(r, 20));
  }
  return undefined;
}

function indexerOf(tapPid: number): number | undefined {
  for (const tid of readdirSync(`/proc/${tapPid}/task`)) {
    for (const kid of readFileSync(`/proc/${tapPid}/task/${tid}/children`, 'utf8').split(' ').filter(Boolean)) {
      if (readFileSync(`/proc/${kid}/cmdline`, 'utf8').includes('indexer-process')) return Number(kid);
    }
  }
  return undefined;
}

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-indexer-'));
  dirs.push(dir);
  return dir;
}

describe('recording through the spool', () => {
  it.each([
    ['the default spool', {}],
    // 64 KiB: the indexer laps it many times; batches wait for room, and the tap's queue holds the rest.
    ['a spool far smaller than the burst', { MCPTAP_SPOOL_BYTES: String(64 * 1024) }],
    // On Linux the default spool is in RAM (/dev/shm) where there is room: this one is on a disk, encrypted.
    ['a spool in MCPTAP_SPOOL_DIR', { MCPTAP_SPOOL_DIR: 'spool-dir' }],
  ])('records a burst whole, in order, and leaves only the recording behind (%s)', async (_name, env) => {
    const dir = tempDir();
    const db = join(dir, 'rec.db');
    const spoolDir = env.MCPTAP_SPOOL_DIR !== undefined ? join(dir, env.MCPTAP_SPOOL_DIR) : undefined;
    if (spoolDir) mkdirSync(spoolDir);
    const t = spoolDir ? tap(db, { ...env, MCPTAP_SPOOL_DIR: spoolDir }, ['--log-level', 'debug']) : tap(db, env);
    await t.burst(4000, 64, 60_000);
    t.child.stdin.end();
    expect(await t.closed).toBe(0);
    expect(t.stderr()).not.toMatch(/drop|could not|incomplete/i);
    if (spoolDir) expect(t.stderr()).toContain(`recording spool: ${2 ** 30} bytes at most, on disk (${spoolDir}), encrypted`);
    expect(readdirSync(dir).filter((f) => !/^(rec\.db(-wal|-shm)?|spool-dir)$/.test(f))).toEqual([]);
    for (const d of [spoolDir, SHM_DIR]) if (d && existsSync(d)) expect(readdirSync(d).filter((f) => f.includes(`.spool-${t.child.pid}-`))).toEqual([]);
    const store = RecordingStore.open(db);
    try {
      const rec = store.listRecordings()[0]!;
      const calls = store.exchanges({ recordingId: rec.id }).filter((e) => e.method === 'tools/call');
      expect(calls).toHaveLength(4000);
      expect(calls.every((e) => e.outcome === 'ok' && e.target === 'echo')).toBe(true);
      expect(new Set(calls.map((e) => e.id)).size).toBe(4000);
      expect(rec.endedUs).toBeGreaterThan(rec.startedUs);
    } finally {
      store.close();
    }
  });

  it('a spool directory that does not exist: the tap does not start, says where the spool was to go, exits 4', async () => {
    const dir = tempDir();
    const missing = join(dir, 'no-such-dir');
    const t = tap(join(dir, 'rec.db'), { MCPTAP_SPOOL_DIR: missing });
    expect(await t.closed).toBe(4);
    expect(t.stderr()).toContain(`cannot record to ${join(dir, 'rec.db')} (its spool goes to ${missing}; MCPTAP_SPOOL_DIR picks another place)`);
    expect(t.stderr()).toMatch(/ENOENT/);
  });

  it('indexing catches up in a lull, while the tap still runs', async () => {
    const dir = tempDir();
    const db = join(dir, 'rec.db');
    const t = tap(db);
    await t.burst(500, 32, 30_000);
    const indexed = () => {
      if (!RecordingStore.hasRecording(db)) return 0; // its indexer is still starting
      const store = RecordingStore.open(db);
      try {
        return store.exchanges({ recordingId: store.listRecordings()[0]!.id }).filter((e) => e.method === 'tools/call').length;
      } finally {
        store.close();
      }
    };
    let n = indexed();
    for (let i = 0; i < 100 && n < 500; i++) {
      await new Promise((r) => setTimeout(r, 100));
      n = indexed();
    }
    expect(n).toBe(500);
    t.child.stdin.end();
    expect(await t.closed).toBe(0);
  });

  it('a full spool: the indexer works through traffic that never lulls; otherwise it waits for a lull', async () => {
    // The worker's side, played by the test: records in a real spool, the real indexer process, and a
    // "spooled" message every 20 ms, so the traffic never looks quiet. What waits is never old enough
    // either (MCPTAP_INDEX_LAG_MS 10 min): only `waitingForRoom` can start the indexing.
    const dir = tempDir();
    const db = join(dir, 'rec.db');
    const spool = spoolOfCalls(db, dir, 200);
    let indexed = 0;
    const indexer = indexerOn(spool, db, { maxLagMs: 600_000, onIndexed: (position) => (indexed = position) });
    await indexer.ready;
    /** Says "spooled" every 20 ms for `ms` or until all is indexed; how far indexing got. */
    const flowing = async (ms: number, waitingForRoom: boolean) => {
      for (const t0 = performance.now(); performance.now() - t0 < ms && indexed < spool.end;) {
        indexer.spooled(spool.end, waitingForRoom);
        await new Promise((r) => setTimeout(r, 20));
      }
      return indexed;
    };
    try {
      // Nothing waits for room: traffic flows, so the indexer holds off (nothing indexed in 1.5 s).
      expect(await flowing(1500, false)).toBe(0);
      // Pressed: it indexes everything while the messages keep coming.
      expect(await flowing(30_000, true)).toBe(spool.end);
      expect(await indexer.close(spool.end, systemClockOrigin.epochUs + 1e6)).toEqual([]);
    } finally {
      spool.close();
    }
    const store = RecordingStore.open(db);
    try {
      const calls = store.exchanges({ recordingId: store.listRecordings()[0]!.id });
      expect(calls).toHaveLength(200);
      expect(calls.every((e) => e.outcome === 'ok')).toBe(true);
    } finally {
      store.close();
    }
  });

  it('an indexer that dies mid-run: traffic goes on, the tap exits 1 and says what the recording lacks', async () => {
    const dir = tempDir();
    const t = tap(join(dir, 'rec.db'));
    await t.burst(20, 4, 30_000);
    const pid = await startedIndexerOf(t.child.pid!, join(dir, 'rec.db'));
    expect(pid).toBeGreaterThan(0);
    process.kill(pid!, 'SIGKILL');
    await t.burst(200, 8, 30_000);
    t.child.stdin.end();
    // A tap that knows its recording lacks forwarded traffic never exits 0 (issue 36).
    expect(await t.closed).toBe(1);
    expect(t.stderr()).toMatch(/recording \S+ lacks \d+ bytes of the traffic the tap forwarded; exit code 1/);
    // Whichever the tap hears first: the child's exit, or the failed send to it.
    expect(t.stderr()).toMatch(/recording indexer (exited \(SIGKILL\)|failed)/);
    // Killed after it opened the file but before the tap heard it ready (a loaded machine), it is
    // a start that failed: said so, and the traffic goes on unobserved.
    expect(t.stderr()).toMatch(/of traffic dropped: they could not be spooled|recording incomplete|cannot start the recording indexer/);
  });

  it('the indexer process ends when the tap is killed', async () => {
    const dir = tempDir();
    const t = tap(join(dir, 'rec.db'));
    await t.burst(20, 4, 30_000);
    const pid = await startedIndexerOf(t.child.pid!, join(dir, 'rec.db'));
    expect(pid).toBeGreaterThan(0);
    t.child.kill('SIGKILL');
    await t.closed;
    const alive = () => {
      try {
        process.kill(pid!, 0);
        return true;
      } catch {
        return false;
      }
    };
    for (let i = 0; i < 50 && alive(); i++) await new Promise((r) => setTimeout(r, 100));
    expect(alive()).toBe(false);
  });
});
