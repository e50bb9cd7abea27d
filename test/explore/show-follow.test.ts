/**
 * `mcptap show FILE --follow` with a real tap writing in the background (SDK 1.x client,
 * server-everything, `mcptap stdio --record --require-recording`): exchanges appear as they are
 * recorded, the follow ends with exit 0 when the recording ends, and on SIGTERM with nothing new.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, MCPTAP } from '../helpers/paths.js';
import { connectThroughTap } from '../helpers/tap-client.js';
import { processAlive } from '../helpers/signal-child.js';
import { RecordingStore } from '../../src/store/recording-store.js';

const EVERYTHING = join(BIN, 'mcp-server-everything');

interface Follower {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves once stdout matches `re`; rejects after `ms` (a bound on the wait, not a speed check). */
  waitFor(re: RegExp, ms?: number): Promise<void>;
  waitForStderr(re: RegExp, ms?: number): Promise<void>;
  exit: Promise<number | null>;
}

function follow(db: string, ...flags: string[]): Follower {
  const child = spawn(process.execPath, [MCPTAP, 'show', db, '--follow', ...flags], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const wakers = new Set<() => void>();
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
    for (const w of wakers) w();
  });
  child.stderr!.on('data', (d: Buffer) => {
    err += d.toString();
    for (const w of wakers) w();
  });
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exit,
    waitFor: (re, ms) => until(() => re.test(out), `stdout ${re}`, ms),
    waitForStderr: (re, ms) => until(() => re.test(err), `stderr ${re}`, ms),
  };
  function until(ok: () => boolean, what: string, ms = 20_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!ok()) return;
        wakers.delete(check);
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        wakers.delete(check);
        reject(new Error(`follow never printed ${what}; stdout: ${out}; stderr: ${err}`));
      }, ms);
      wakers.add(check);
      check();
    });
  }
}

function echoIndexed(db: string): boolean {
  const store = RecordingStore.open(db, { readOnly: true });
  try {
    return store.exchanges({ recordingId: 1, target: 'echo' }).some((e) => e.state !== 'started');
  } finally {
    store.close();
  }
}

describe('mcptap show --follow', () => {
  it('prints exchanges as a tap records them, and ends with the recording', async () => {
    const db = join(mkdtempSync(join(tmpdir(), 'mcptap-follow-')), 'live.db');
    // Started before the tap: it waits for the file and its recording.
    const f = follow(db);
    await f.waitForStderr(/waiting for a tap to begin recording into it/);
    const tapped = await connectThroughTap(['--record', db, '--require-recording'], [EVERYTHING, 'stdio']);
    try {
      await tapped.client.callTool({ name: 'echo', arguments: { message: 'first' } });
      await f.waitFor(/tools\/call\s+echo\s+ok/);
      expect(f.stdout()).not.toMatch(/get-sum/);
      await tapped.client.callTool({ name: 'get-sum', arguments: { a: 1, b: 2 } });
      await f.waitFor(/tools\/call\s+get-sum\s+ok/);
    } finally {
      await tapped.close();
    }
    expect(await f.exit).toBe(0);
    expect(f.stderr()).toMatch(/following recording 1 of .*live\.db/);
    expect(f.stderr()).toMatch(/the recording ended/);
    // Each exchange once, the header once.
    expect(f.stdout().match(/tools\/call\s+echo/g)).toHaveLength(1);
    expect(f.stdout().match(/^ROW/gm)).toHaveLength(1);
  }, 60_000);

  it('started on a recording in progress, gives only what comes after and says how many it skipped', async () => {
    const db = join(mkdtempSync(join(tmpdir(), 'mcptap-follow-')), 'midway.db');
    const tapped = await connectThroughTap(['--record', db, '--require-recording'], [EVERYTHING, 'stdio']);
    try {
      await tapped.client.callTool({ name: 'echo', arguments: { message: 'before' } });
      // Bounded wait until the tap's indexer has the echo in the file (what follow reads).
      for (let i = 0; i < 200 && !echoIndexed(db); i++) await new Promise((r) => setTimeout(r, 50));
      expect(echoIndexed(db)).toBe(true);
      const f = follow(db);
      await f.waitForStderr(/following recording 1 of .*midway\.db \(\d+ exchanges before now not shown\)/);
      await tapped.client.callTool({ name: 'get-sum', arguments: { a: 1, b: 2 } });
      await f.waitFor(/tools\/call\s+get-sum\s+ok/);
      expect(f.stdout()).not.toMatch(/tools\/call\s+echo/);
      f.child.kill('SIGTERM');
      expect(await f.exit).toBe(0);
    } finally {
      await tapped.close();
    }
  }, 60_000);

  it('stops on SIGTERM with exit 0, having printed nothing of an ended recording', async () => {
    const db = join(mkdtempSync(join(tmpdir(), 'mcptap-follow-')), 'done.db');
    const tapped = await connectThroughTap(['--record', db, '--require-recording'], [EVERYTHING, 'stdio']);
    await tapped.client.callTool({ name: 'echo', arguments: { message: 'before' } });
    const tapPid = tapped.transport.pid!;
    await tapped.close();
    // The tap ends its recording before it exits.
    for (let i = 0; i < 200 && processAlive(tapPid); i++) await new Promise((r) => setTimeout(r, 50));
    expect(processAlive(tapPid)).toBe(false);
    const f = follow(db, '--json');
    // It waits for the next recording to begin; the ended one is not printed.
    await f.waitForStderr(/waiting for a tap to begin the next recording/);
    f.child.kill('SIGTERM');
    expect(await f.exit).toBe(0);
    expect(f.stdout()).toBe('');
  }, 60_000);
});
