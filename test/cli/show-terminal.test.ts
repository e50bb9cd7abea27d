/**
 * `mcptap show` on a terminal lists at most 1,000 exchanges unless --limit says otherwise (a big
 * recording's list is held in memory to be printed); piped, it lists them all. The terminal is a
 * real pseudo-terminal (util-linux `script`), through the built CLI.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteRecorder } from '../../src/sinks/sqlite-recorder.js';
import { silentLogger } from '../../src/util/logger.js';
import { MCPTAP } from '../helpers/paths.js';
import { T0, TrafficScript } from '../sinks/traffic-script.js';

const dir = mkdtempSync(join(tmpdir(), 'mcptap-show-tty-'));
const file = join(dir, 'rec.db');
const hasScript = spawnSync('script', ['--version']).status === 0;

beforeAll(async () => {
  const s = new TrafficScript('c1').open({ transport: 'stdio', target: 'srv' }, 0);
  for (let i = 1; i <= 1001; i++) {
    s.request(i, 'tools/call', { name: 'echo', arguments: { text: `hello ${i}` } }, i);
    s.result(i, { content: [] }, i + 0.5);
  }
  const rec = new SqliteRecorder({
    path: file,
    recording: { transport: 'stdio', target: 'srv', startedUs: T0, mcptapVersion: '0.1.0-test' },
    logger: silentLogger,
    clock: { nowUs: () => T0 + 2_000_000 },
  });
  for (const e of s.events) rec.onEvent(e);
  await rec.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const rows = (out: string) => out.split(/\r?\n/).filter((l) => /tools\/call/.test(l)).length;

describe('mcptap show on a terminal', () => {
  it.skipIf(!hasScript)(
    'lists the first 1,000 and says so; --limit and a pipe list what they ask',
    () => {
      const onTty = (...args: string[]) => {
        const command = [process.execPath, MCPTAP, 'show', file, ...args].map((a) => `'${a}'`).join(' ');
        const r = spawnSync('script', ['-qec', command, '/dev/null'], { encoding: 'utf8', timeout: 30_000 });
        expect(r.status).toBe(0);
        return r.stdout;
      };
      const tty = onTty();
      expect(rows(tty)).toBe(1000);
      expect(tty).toMatch(/the first 1000 shown; --limit N for more/);
      const more = onTty('--limit', '1001');
      expect(rows(more)).toBe(1001);
      expect(more).not.toMatch(/the first/);
      const piped = spawnSync(process.execPath, [MCPTAP, 'show', file], { encoding: 'utf8', timeout: 30_000 });
      expect(piped.status).toBe(0);
      expect(rows(piped.stdout)).toBe(1001);
      expect(piped.stdout).not.toMatch(/the first/);
    },
    90_000,
  );
});
