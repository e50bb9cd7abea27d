/**
 * Issue 36: a signal to the tap's whole process group (a terminal's Ctrl-C, GNU `timeout`,
 * systemd's control-group kill) at any moment from start-up on loses nothing the tap forwarded.
 * The recording indexer is in that group and dies of such a signal while it is still loading (nice
 * 19, a busy machine): it is replaced, out of the group's reach, and the replacement indexes the
 * spool. Real processes, loopback, two spinning children keeping the CPUs busy; each request id
 * the server logged as answered must be in the recording, and the exit code is the signal's (stdio:
 * the server's death; http: 0), never 0 with a loss.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { constants } from 'node:os';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runGroupSignal, type GroupSignalRun } from '../helpers/group-signal-run.js';

const dir = mkdtempSync(join(tmpdir(), 'mcptap-group-signal-'));
let spinners: ChildProcess[] = [];

beforeAll(() => {
  // Bounded on their own too (2 min), should the test process die without its afterAll.
  const spin = 'const end = Date.now() + 120000; while (Date.now() < end);';
  spinners = [0, 1].map(() => spawn(process.execPath, ['-e', spin], { stdio: 'ignore' }));
});
afterAll(() => {
  for (const s of spinners) s.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

type Case = Pick<GroupSignalRun, 'atMs' | 'from' | 'signals'>;
const TERM: NodeJS.Signals[] = ['SIGTERM'];
const INT: NodeJS.Signals[] = ['SIGINT'];
const HUP: NodeJS.Signals[] = ['SIGHUP'];
const TERM2: NodeJS.Signals[] = ['SIGTERM', 'SIGTERM'];
const MIXED: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** Moments from the spawn (start-up) and from the server's first answer (the indexer still loading, traffic at stake). */
const STDIO: Case[] = [
  { atMs: 0, signals: TERM },
  { atMs: 50, signals: INT },
  { atMs: 200, signals: HUP },
  { atMs: 800, signals: TERM2 },
  { atMs: 0, from: 'first-answer', signals: TERM },
  { atMs: 20, from: 'first-answer', signals: INT },
  { atMs: 100, from: 'first-answer', signals: HUP },
  { atMs: 200, from: 'first-answer', signals: TERM2 },
  { atMs: 400, from: 'first-answer', signals: MIXED },
  { atMs: 800, from: 'first-answer', signals: TERM },
];
const HTTP: Case[] = [
  { atMs: 100, signals: TERM },
  { atMs: 20, from: 'first-answer', signals: INT },
  { atMs: 200, from: 'first-answer', signals: TERM2 },
  { atMs: 500, from: 'first-answer', signals: HUP },
];

/** What the tap may exit with: the signal's convention (killed by it, or for stdio the server's death by it), or 0 for http. */
function allowedCodes(transport: 'stdio' | 'http', signals: NodeJS.Signals[]): (number | null)[] {
  const bySignal = signals.map((s) => 128 + constants.signals[s]);
  return transport === 'http' ? [null, 0, ...bySignal] : [null, ...bySignal];
}

describe('a signal to the whole process group loses nothing the tap forwarded', () => {
  for (const transport of ['stdio', 'http'] as const) {
    it(`${transport}: every answered request id is in the recording`, async () => {
      const cases = transport === 'stdio' ? STDIO : HTTP;
      const seen: string[] = [];
      for (const [i, c] of cases.entries()) {
        const o = await runGroupSignal({ transport, dir, name: `${transport}-${i}`, ...c });
        const what = `${transport} ${c.signals.join('+')} at ${c.atMs} ms from ${c.from ?? 'spawn'}: ${o.stderr}`;
        seen.push(`${c.atMs}/${c.from ?? 'spawn'} ${c.signals.join('+')}: ${o.logged} answered, ${o.missing.length} missing, exit ${o.code ?? o.signal}`);
        expect(o.missing, what).toEqual([]);
        if (o.code !== null) expect(allowedCodes(transport, c.signals), what).toContain(o.code);
      }
      console.log(seen.join('\n'));
    }, 240_000);
  }
});
