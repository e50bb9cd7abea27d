/**
 * Crash durability, the small version of `npm run bench -- crash`: the recording tap SIGKILLed
 * under saturating traffic, 3 times over stdio and 3 over HTTP, at a random moment once its
 * recording exists. Each time the file opens and passes `PRAGMA integrity_check`, `mcptap ls`
 * marks it incomplete, what it lacks of the traffic the host had answered is a tail (no hole) of
 * at most 100 ms (the bound the spool gives: a batch reaches it within milliseconds of being
 * forwarded, and the indexer reads every whole record of it after the tap is gone), and no
 * process (server, indexer) or file (spool, SQLite's -wal/-shm) is left behind. The same for a kill
 * in the tap's first moments, right after the host got its first answer: the spool exists from the
 * tap's start (the tap's thread writes it until the pipeline thread is up).
 */
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { descendants, driveStdio, killOnce, leftFiles, type KillOutcome } from '../../bench/crash-kill.js';
import { RecordingStore } from '../../src/store/recording-store.js';
import { MCPTAP, ROOT } from '../helpers/paths.js';

const KILLS = 3;
const dir = mkdtempSync(join(tmpdir(), 'mcptap-crash-'));
let upstream: { url: string; stop(): void };

beforeAll(async () => {
  // A fake upstream on purpose: it answers at once, so that the tap, not the server, is saturated.
  const child = spawn(process.execPath, [join(ROOT, 'bench', 'fixtures', 'http-echo-server.mjs')], { stdio: ['pipe', 'pipe', 'inherit'] });
  upstream = await new Promise((resolve) =>
    child.stdout.once('data', (b: Buffer) => resolve({ url: (JSON.parse(b.toString()) as { url: string }).url, stop: () => child.stdin.end() })),
  );
});
afterAll(() => {
  upstream.stop();
  rmSync(dir, { recursive: true, force: true });
});

function expectSurvived(o: KillOutcome): void {
  const what = JSON.stringify(o);
  expect(o.opens, what).toBe(true);
  expect(o.integrity, what).toBe('ok');
  expect(o.markedIncomplete, what).toBe(true);
  expect(o.answered, what).toBeGreaterThan(0);
  expect(o.holes, what).toBe(0);
  expect(o.lossMs, what).toBeLessThanOrEqual(100);
  expect(o.leftProcesses, what).toEqual([]);
  expect(o.leftFiles, what).toEqual([]);
}

describe.skipIf(process.platform !== 'linux')('SIGKILL of a recording tap under saturating traffic', () => {
  it(`stdio, ${KILLS} kills: the recording opens, checks, says it is incomplete, and lacks at most 100 ms of answered traffic`, async () => {
    const server = [process.execPath, join(ROOT, 'bench', 'fixtures', 'echo-server.mjs')];
    for (let i = 0; i < KILLS; i++) {
      const o = await killOnce({ transport: 'stdio', mcptap: MCPTAP, server, dir, name: `stdio-${i}.db`, killAtMs: 50 + Math.random() * 200, from: 'file' });
      expectSurvived(o);
    }
  }, 240_000);

  it(`HTTP, ${KILLS} kills: the same`, async () => {
    for (let i = 0; i < KILLS; i++) {
      const o = await killOnce({
        transport: 'http',
        mcptap: MCPTAP,
        server: upstream.url,
        dir,
        name: `http-${i}.db`,
        killAtMs: 50 + Math.random() * 200,
        from: 'file',
      });
      expectSurvived(o);
    }
  }, 240_000);
});

describe.skipIf(process.platform !== 'linux')('SIGKILL of a recording tap in its first moments, right after the first answer', () => {
  // Within 20 ms of the host's first answer: the pipeline thread, which boots at that answer, is not up yet.
  const early = (transport: 'stdio' | 'http', i: number) =>
    killOnce({
      transport,
      mcptap: MCPTAP,
      server: transport === 'stdio' ? [process.execPath, join(ROOT, 'bench', 'fixtures', 'echo-server.mjs')] : upstream.url,
      dir,
      name: `early-${transport}-${i}.db`,
      killAtMs: Math.random() * 20,
      from: 'first-answer',
    });

  it(`stdio, ${KILLS} kills: the recording opens, checks, says it is incomplete, and lacks at most 100 ms of answered traffic`, async () => {
    for (let i = 0; i < KILLS; i++) expectSurvived(await early('stdio', i));
  }, 240_000);

  it(`HTTP, ${KILLS} kills: the same`, async () => {
    for (let i = 0; i < KILLS; i++) expectSurvived(await early('http', i));
  }, 240_000);
});

describe.skipIf(process.platform !== 'linux')('the recording indexer killed alone, and a machine-wide crash (simulated)', () => {
  const server = [process.execPath, join(ROOT, 'bench', 'fixtures', 'echo-server.mjs')];
  const waitFor = async (cond: () => boolean) => {
    for (let i = 0; i < 3000 && !cond(); i++) await new Promise((r) => setTimeout(r, 20));
  };

  it('SIGKILL of the indexer: traffic flows on, the loss is said once, the file opens, checks and is not complete; exit 1 (the tap knows it lost recorded traffic)', async () => {
    for (const required of [false, true]) {
      const db = join(dir, `indexer-killed-${required}.db`);
      const { tap, driver } = driveStdio(MCPTAP, server, db, process.env, required ? ['--require-recording'] : []);
      let stderr = '';
      tap.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
      await waitFor(() => RecordingStore.hasRecording(db) && descendants(tap.pid!).some((p) => p.cmd.includes('indexer-process')));
      // Its recording row exists a moment before it says it is ready: give it that moment.
      await new Promise((r) => setTimeout(r, 1000));
      const indexer = descendants(tap.pid!).find((p) => p.cmd.includes('indexer-process'))!;
      const before = driver.answeredAt.size;
      process.kill(indexer.pid, 'SIGKILL');
      const exited = new Promise<number | null>((r) => tap.once('exit', (code) => r(code)));
      if (!required) {
        // Traffic goes on: as many answers again after the kill, then the host ends it.
        await waitFor(() => driver.answeredAt.size > before + 1000);
        expect(driver.answeredAt.size).toBeGreaterThan(before + 1000);
        driver.stop();
        tap.stdin!.end();
      }
      const code = await exited;
      driver.stop();
      expect(code, stderr).toBe(1);
      // Said once when it happens; the close summary counts what it had not indexed.
      expect(stderr.split('\n').filter((l) => /^mcptap error: recording indexer exited \(SIGKILL\)/.test(l)).length, stderr).toBe(1);
      if (!required)
        expect(stderr).toMatch(/recording incomplete: recording indexer exited \(SIGKILL\); \d+ bytes of traffic spooled before then were dropped/);
      if (!required) expect(stderr).toMatch(/recording \S+ lacks \d+ bytes of the traffic the tap forwarded; exit code 1/);
      expect(stderr).not.toMatch(/still indexing/);
      const d = new Database(db, { readonly: true });
      expect(d.pragma('integrity_check', { simple: true })).toBe('ok');
      d.close();
      const store = RecordingStore.open(db);
      try {
        expect(store.listRecordings()[0]!.endedUs).toBeUndefined(); // `mcptap ls` says it is not complete
      } finally {
        store.close();
      }
      expect(leftFiles(dir, `indexer-killed-${required}.db`).filter((f) => !/-(wal|shm)$/.test(f))).toEqual([]);
    }
  }, 240_000);

  it('a copy of the file taken mid-write (as a power cut leaves it, WAL first) opens and passes integrity_check, 5 of 5', async () => {
    const db = join(dir, 'copied.db');
    // --require-recording indexes at once (no lag): the file is written all along.
    const { tap, driver } = driveStdio(MCPTAP, server, db, process.env, ['--require-recording']);
    tap.stderr!.resume();
    try {
      await waitFor(() => RecordingStore.hasRecording(db));
      for (let i = 0; i < 5; i++) {
        await new Promise((r) => setTimeout(r, 300));
        const copy = join(dir, `copy-${i}.db`);
        if (existsSync(`${db}-wal`)) copyFileSync(`${db}-wal`, `${copy}-wal`);
        copyFileSync(db, copy);
        const d = new Database(copy);
        expect(d.pragma('integrity_check', { simple: true })).toBe('ok');
        expect((d.prepare('SELECT count(*) AS n FROM recordings').get() as { n: number }).n).toBe(1);
        d.close();
      }
    } finally {
      driver.stop();
      tap.kill('SIGKILL');
    }
  }, 240_000);
});
