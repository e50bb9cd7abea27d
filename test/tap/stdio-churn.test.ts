/**
 * Start/stop churn of `mcptap stdio --record` (the bounded version of `npm run bench -- churn`):
 * 10 taps, one after another, each in front of a server for one call, all recording into one file;
 * then 6, three at a time (the bench's `--parallel`).
 * Afterwards every call was answered, every tap exited 0, the file holds 10 complete recordings,
 * and this process's descriptors, the processes below it (taps, servers, indexers) and the
 * recording's files (spools) are back to where they were.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stdioChurn } from '../../bench/stdio-churn.js';
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
