/**
 * Issue 36: where traffic is lost all the same (SIGKILL to the tap's whole process group: tap,
 * indexer and server die at once, the spool's key with them), the next command that opens the
 * file says what is missing, keeps it with the recording (`mcptap ls`: INCOMPLETE) and says it
 * once. Both ways: a command run while the tap still records says nothing of the sort, and a
 * recording closed normally leaves no journal and nothing to say. Real processes in a process
 * group of their own (as `setsid` makes it), the built CLI, loopback.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { RecordingStore } from '../../src/store/recording-store.js';
import { groupAlive, waitFor } from '../helpers/group-signal-run.js';
import { FIXTURES, MCPTAP } from '../helpers/paths.js';

const dir = mkdtempSync(join(tmpdir(), 'mcptap-group-kill-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const LOGGER = join(FIXTURES, 'logging-server.mjs');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
// The loss as the journal tells it: `at least N bytes ... never indexed`, or, when it shows none left, that it may lag.
const NOT_CLOSED =
  /was not closed: its tap \(pid \d+\) and its indexer were killed before they finished it; (at least (\d+) bytes of spooled traffic were never indexed|spooled traffic may not have been indexed \(the journal, tens of ms behind the spool, shows none left\))/;

const mcptap = (...args: string[]) => spawnSync(process.execPath, [MCPTAP, ...args], { encoding: 'utf8', timeout: 60_000 });
const journals = (name: string) => readdirSync(dir).filter((f) => f.startsWith(`.${name}.tap-`));
const logged = (log: string) => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean).length : 0);

/** `mcptap stdio --record` in a group of its own, a call every 10 ms once initialized. */
function startTap(name: string) {
  const db = join(dir, name);
  const log = join(dir, `${name}.log`);
  const tap = spawn(process.execPath, [MCPTAP, 'stdio', '--record', db, '--', process.execPath, LOGGER, log], {
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  tap.stdout!.resume();
  let stderr = '';
  tap.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
  tap.stdin!.on('error', () => {});
  const send = (m: object) => tap.stdin!.write(`${JSON.stringify(m)}\n`);
  send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
  let n = 0;
  const pace = setInterval(() => send({ jsonrpc: '2.0', id: ++n, method: 'tools/call', params: { name: 'echo', arguments: { n } } }), 10);
  const exited = new Promise<number | null>((r) => tap.once('exit', (code) => r(code)));
  return { db, log, tap, exited, stop: () => clearInterval(pace), stderr: () => stderr };
}

describe.skipIf(process.platform !== 'linux')('SIGKILL to the tap’s whole process group', () => {
  it('the next command that opens the file says what is missing, once; one run while the tap records says nothing', async () => {
    const t = startTap('killed.db');
    try {
      // The indexer has opened the recording, and traffic flows (it lags behind, waiting for a lull).
      expect(await waitFor(() => RecordingStore.hasRecording(t.db) && logged(t.log) >= 20, 30_000), t.stderr()).toBe(true);
      await sleep(1000);
      // While the tap records: its journal is a live one, nothing to say.
      expect(journals('killed.db')).toHaveLength(1);
      const during = mcptap('show', t.db);
      expect(during.stderr).not.toMatch(/was not closed/);
      process.kill(-t.tap.pid!, 'SIGKILL');
    } finally {
      t.stop();
    }
    await t.exited;
    expect(await waitFor(() => !groupAlive(t.tap.pid!), 15_000)).toBe(true);
    const answered = logged(t.log);
    expect(journals('killed.db')).toHaveLength(1);
    const first = mcptap('show', t.db);
    const lost = NOT_CLOSED.exec(first.stderr);
    expect(lost, first.stderr).not.toBeNull();
    expect(first.stderr).toMatch(/recording 1 in \S+killed\.db was not closed/);
    expect(first.stderr).toMatch(/nothing can recover it.*now marked INCOMPLETE/);
    expect(first.status).toBe(0);
    const store = RecordingStore.open(t.db);
    const recorded = store.exchanges({ method: 'tools/call', limit: 100_000 }).length;
    store.close();
    console.log(`group SIGKILL: ${answered} calls answered, ${recorded} recorded; the next show said: ${lost![1]}`);
    // Said once: kept with the recording from then on, the journal gone.
    expect(journals('killed.db')).toEqual([]);
    expect(mcptap('show', t.db).stderr).not.toMatch(/was not closed/);
    const ls = mcptap('ls', t.db);
    expect(ls.stdout).toMatch(/INCOMPLETE: the tap \(pid \d+\) and its indexer were killed before they finished the recording/);
    expect(ls.stdout).toContain(lost![1]);
  }, 120_000);

  it('a recording closed normally: no journal left, nothing said', async () => {
    const t = startTap('closed.db');
    expect(await waitFor(() => logged(t.log) >= 20, 30_000), t.stderr()).toBe(true);
    t.stop();
    t.tap.stdin!.end();
    expect(await t.exited, t.stderr()).toBe(0);
    expect(await waitFor(() => !groupAlive(t.tap.pid!), 15_000)).toBe(true);
    expect(journals('closed.db')).toEqual([]);
    const show = mcptap('show', t.db);
    expect(show.status, show.stderr).toBe(0);
    expect(show.stderr).not.toMatch(/was not closed|warn/);
    expect(mcptap('ls', t.db).stdout).not.toMatch(/INCOMPLETE/);
  }, 120_000);
});
