/**
 * A tap that ends before its indexer (killed alone, or exiting while the indexer completes the
 * recording): a command run meanwhile must not call the recording lost. The tap names its indexer
 * in its journal when it spawns it, so the journal is a live one until the indexer exits; the
 * command waits for it (bounded), then says the recording is still being written. Both ways: a tap
 * and an indexer that are both dead with traffic unindexed are still reported. Real processes: the
 * built CLI in front of the logging server; the indexer is held stopped (SIGSTOP) from its start so
 * that it is still loading when the tap goes, whatever the machine's load.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/group-signal-run.js';
import { exitOf, processAlive } from '../helpers/signal-child.js';
import { FIXTURES, MCPTAP } from '../helpers/paths.js';

const dir = mkdtempSync(join(tmpdir(), 'mcptap-indexer-outlives-'));
const stopped: number[] = [];
afterAll(() => {
  for (const pid of stopped) if (processAlive(pid)) process.kill(pid, 'SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const LOGGER = join(FIXTURES, 'logging-server.mjs');
const mcptap = (waitMs: number, ...args: string[]) =>
  spawnSync(process.execPath, [MCPTAP, ...args], { encoding: 'utf8', timeout: 90_000, env: { ...process.env, MCPTAP_INDEXER_WAIT_MS: String(waitMs) } });
const journals = (name: string) => readdirSync(dir).filter((f) => f.startsWith(`.${name}.tap-`));

/** Process `pid` has exited (reaped, or a zombie nobody reaped yet). */
function gone(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return /^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2));
  } catch {
    return true;
  }
}

/** The recording indexer among `pid`'s children (/proc), if spawned yet. */
function indexerOf(pid: number): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid && readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('indexer-process')) return Number(entry);
    } catch {
      /* gone meanwhile */
    }
  }
  return undefined;
}

/** `mcptap stdio --record` with its indexer stopped as soon as it is spawned; then one call answered, and the tap SIGKILLed alone. */
async function tapKilledBeforeItsIndexer(name: string): Promise<{ db: string; indexer: number }> {
  const db = join(dir, name);
  const tap = spawn(process.execPath, [MCPTAP, 'stdio', '--record', db, '--', process.execPath, LOGGER, join(dir, `${name}.log`)], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const exited = exitOf(tap);
  let indexer: number | undefined;
  expect(await waitFor(() => (indexer = indexerOf(tap.pid!)) !== undefined, 30_000)).toBe(true);
  process.kill(indexer!, 'SIGSTOP');
  stopped.push(indexer!);
  await answeredOnce(tap);
  // A kill may lose up to 100 ms of answered traffic: an answer forwarded after the pipeline thread
  // booted (on a loaded machine its 2 s boot deadline can come first) reaches the spool a flush
  // later. This test is about the indexer, not that bound: the kill comes well past it.
  await new Promise((r) => setTimeout(r, 1000));
  tap.kill('SIGKILL');
  await exited;
  return { db, indexer: indexer! };
}

async function answeredOnce(tap: ChildProcess): Promise<void> {
  let out = '';
  tap.stdout!.on('data', (b: Buffer) => (out += b.toString()));
  tap.stdin!.on('error', () => {});
  const init = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } };
  tap.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: init })}\n`);
  expect(await waitFor(() => out.includes('"id":0'), 30_000)).toBe(true);
}

describe.skipIf(process.platform !== 'linux')('a tap that ends before its indexer', () => {
  it('is not called lost while its indexer runs: the command says the recording is still being written, then shows it', async () => {
    const { db, indexer } = await tapKilledBeforeItsIndexer('outlived.db');
    // The indexer is held stopped: the command waits its bound, then says so (no claim of loss).
    const during = mcptap(200, 'ls', db);
    expect(during.stderr).not.toMatch(/killed|never recorded|not closed/);
    expect(during.stderr).toMatch(/is still being written: its tap \(pid \d+\) has ended and its indexer \(pid \d+\) is completing it/);
    // No file yet (the indexer stopped while loading, as is usual): nothing to show; else shown, with the warning.
    expect(during.status, during.stderr).toBe(existsSync(db) ? 0 : 4);
    expect(journals('outlived.db')).toHaveLength(1);
    // Let it go: the next command waits for it and sees the recording it completed.
    process.kill(indexer, 'SIGCONT');
    const after = mcptap(60_000, 'ls', db);
    expect(after.status, after.stderr).toBe(0);
    expect(after.stderr).toBe('');
    expect(after.stdout, after.stdout).toMatch(/exchanges 1 \(ok 1\)/);
    // The tap was killed: its indexer says so (the traffic after what reached it is missing).
    expect(after.stdout).toMatch(/INCOMPLETE: the tap ended without closing the recording/);
    expect(journals('outlived.db')).toEqual([]);
  }, 120_000);

  it('both ways: a tap and an indexer both killed with traffic unindexed are still reported', async () => {
    const { db, indexer } = await tapKilledBeforeItsIndexer('both-dead.db');
    process.kill(indexer, 'SIGKILL');
    expect(await waitFor(() => gone(indexer), 15_000)).toBe(true);
    const opened = existsSync(db);
    const ls = mcptap(60_000, 'ls', db);
    // Said either way, whether or not the indexer had created the file before it was stopped.
    expect(ls.stderr).toMatch(
      opened
        ? /recording (1 )?in \S+both-dead\.db( \(its indexer had not opened it\))? was not closed: its tap \(pid \d+\) and its indexer were killed/
        : /a tap \(pid \d+\) recording to \S+both-dead\.db was killed before its recording was opened: (at least \d+ bytes of spooled traffic were never recorded|spooled traffic may not have been recorded)/,
    );
    expect(ls.status, ls.stderr).toBe(opened ? 0 : 4);
  }, 120_000);
});
