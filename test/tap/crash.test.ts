/**
 * Crash durability, the small version of `npm run bench -- crash`: the recording tap SIGKILLed
 * under saturating traffic, 3 times over stdio and 3 over HTTP, at a random moment once its
 * recording exists. Each time the file opens and passes `PRAGMA integrity_check`, `mcptap ls`
 * marks it incomplete, what it lacks of the traffic the host had answered is a tail (no hole) of
 * at most 100 ms (the bound the spool gives: a batch reaches it within milliseconds of being
 * forwarded, and the indexer reads every whole record of it after the tap is gone), and no
 * process (server, indexer) or file (spool, SQLite's -wal/-shm) is left behind.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killOnce, type KillOutcome } from '../../bench/crash-kill.js';
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
      const o = await killOnce({ transport: 'stdio', mcptap: MCPTAP, server, dir, name: `stdio-${i}.db`, killAtMs: 50 + Math.random() * 200, afterFile: true });
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
        afterFile: true,
      });
      expectSurvived(o);
    }
  }, 240_000);
});
