/**
 * Start/stop churn of `mcptap stdio --record` (the bounded version of `npm run bench -- churn`):
 * 10 taps, one after another, each in front of a server for one call, all recording into one file;
 * then 6, three at a time (the bench's `--parallel`).
 * Afterwards every call was answered, every tap exited 0, the file holds 10 complete recordings,
 * and this process's descriptors, the processes below it (taps, servers, indexers) and the
 * recording's files (spools) are back to where they were.
 * Then one tap whose indexer is kept slow (stopped and let run in turns, as a niced process on a
 * loaded machine is): its close waits for it rather than giving up, and the recording is complete.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stdioChurn } from '../../bench/stdio-churn.js';
import { RecordingStore } from '../../src/store/recording-store.js';
import { MCPTAP, ROOT } from '../helpers/paths.js';

const CYCLES = 10;
const dir = mkdtempSync(join(tmpdir(), 'mcptap-churn-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.skipIf(process.platform !== 'linux')('stdio tap start/stop churn', () => {
  it.each([
    [CYCLES, 1],
    [6, 3],
  ])(
    '%i cycles, %i at a time: all answered and recorded, nothing left behind',
    async (cycles, concurrency) => {
      const server = [process.execPath, join(ROOT, 'bench', 'fixtures', 'echo-server.mjs')];
      const r = await stdioChurn(MCPTAP, server, join(dir, `churn-${concurrency}.db`), cycles, undefined, concurrency);
      const what = JSON.stringify({ ...r, cycleMs: undefined });
      expect(r.answered, what).toBe(cycles);
      expect(r.cleanExits, what).toBe(cycles);
      expect(r.recordings, what).toBe(cycles);
      expect(r.complete, what).toBe(cycles);
      expect(r.leftProcesses, what).toEqual([]);
      expect(r.leftFiles, what).toEqual([]);
      // Vitest's own descriptors may come and go; a leak would grow with every cycle.
      expect(r.fds.after, what).toBeLessThanOrEqual(r.fds.before + 2);
    },
    300_000,
  );
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Fields of /proc/PID/stat (or a thread's) after the command name: index 0 is field 3 (state). */
const statFields = (path: string) => {
  const stat = readFileSync(path, 'latin1');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
};

/** The tap's indexer child (Linux /proc): a child of any of its threads running indexer-process. */
function indexerOf(tapPid: number): number | undefined {
  try {
    for (const tid of readdirSync(`/proc/${tapPid}/task`)) {
      for (const kid of readFileSync(`/proc/${tapPid}/task/${tid}/children`, 'utf8').split(' ').filter(Boolean)) {
        if (readFileSync(`/proc/${kid}/cmdline`, 'utf8').includes('indexer-process')) return Number(kid);
      }
    }
  } catch {
    /* a thread or child came or went meanwhile: look again */
  }
  return undefined;
}

/** The niceness of each thread of `pid` (field 19 of its stat), main thread first; [] once it is gone. */
function niceness(pid: number): number[] {
  try {
    const tids = readdirSync(`/proc/${pid}/task`).sort((a, b) => (a === String(pid) ? -1 : b === String(pid) ? 1 : 0));
    return tids.flatMap((t) => {
      try {
        return [Number(statFields(`/proc/${pid}/task/${t}/stat`)[16])];
      } catch {
        return [];
      }
    });
  } catch {
    return [];
  }
}

describe.skipIf(process.platform !== 'linux')('a tap closing while its indexer is slow to start', () => {
  it('waits while the indexer moves (loading counts), raises all its threads, and the recording is complete', async () => {
    const db = join(dir, 'slow-indexer.db');
    const server = [process.execPath, join(ROOT, 'bench', 'fixtures', 'echo-server.mjs')];
    // 1.5 s without progress is given up on (30 s by default): the indexer below takes longer than that to load.
    const tap = spawn(process.execPath, [MCPTAP, 'stdio', '--record', db, '--', ...server], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, MCPTAP_INDEXER_STALL_MS: '1500' },
    });
    let stderr = '';
    tap.stderr.on('data', (b: Buffer) => (stderr += b));
    const exited = new Promise<number | null>((r) => tap.once('exit', r));
    let indexer: number | undefined;
    for (let i = 0; i < 2000 && indexer === undefined; i++) {
      indexer = indexerOf(tap.pid!);
      if (indexer === undefined) await sleep(5);
    }
    expect(indexer, stderr).toBeDefined();
    // Stopped before it has loaded: in the loaded machine's place, it gets the CPU in turns only.
    process.kill(indexer!, 'SIGSTOP');
    let exitCode: number | null | undefined;
    void exited.then((c) => (exitCode = c));
    try {
      const answered = new Promise<void>((resolve) => tap.stdout.on('data', (b: Buffer) => b.includes('"id":1') && resolve()));
      tap.stdin.write('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}\n');
      await answered;
      tap.stdin.end();
      // The tap closes: it raises the indexer's main thread at once (seen here), and every other thread with it.
      let raised = false;
      const seenAfter: number[] = [];
      for (const t0 = Date.now(); exitCode === undefined && Date.now() - t0 < 120_000;) {
        const nice = niceness(indexer!);
        if (raised) seenAfter.push(...nice);
        else if (nice[0] === 0) {
          raised = true;
          seenAfter.push(...nice);
        }
        process.kill(indexer!, 'SIGCONT');
        await sleep(30);
        try {
          process.kill(indexer!, 'SIGSTOP');
        } catch {
          break; // it has finished
        }
        await sleep(200);
      }
      expect(await exited, stderr).toBe(0);
      expect(raised, stderr).toBe(true);
      // Nothing of it went back to niceness 19 once the tap was closing (it read `start` only then).
      expect(Math.max(...seenAfter), stderr).toBe(0);
      expect(stderr).not.toMatch(/no progress|incomplete/);
      const store = RecordingStore.open(db);
      try {
        const recs = store.listRecordings();
        expect(recs).toHaveLength(1);
        expect(recs[0]!.endedUs, stderr).toBeDefined();
        expect(recs[0]!.meta?.incomplete, stderr).toBeUndefined();
        expect(recs[0]!.exchanges, stderr).toBe(1);
      } finally {
        store.close();
      }
    } finally {
      try {
        process.kill(indexer!, 'SIGCONT');
      } catch {
        /* gone */
      }
      tap.kill('SIGKILL');
    }
  }, 180_000);
});
