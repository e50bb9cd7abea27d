/**
 * How a recording ends when the tap does not end it in order: the tap SIGKILLed under traffic,
 * and a host's SIGTERM while the tap still indexes a backlog after the server exited. The
 * recording indexer (a process of its own, holding the spool) completes the recording either way;
 * a recording the tap never closed says it is incomplete.
 */
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FIXTURES, MCPTAP } from '../helpers/paths.js';
import { RecordingStore } from '../../src/store/recording-store.js';

/** The processes whose parent is `pid` (Linux /proc). */
function childrenOf(pid: number): { pid: number; cmdline: string }[] {
  const out: { pid: number; cmdline: string }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push({ pid: Number(entry), cmdline: readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ') });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** The first recording once it is closed (ended), polled for at most `ms` (the indexer may not have created the file yet). */
async function closedRecording(db: string, ms = 20_000) {
  const until = Date.now() + ms;
  for (;;) {
    if (!existsSync(db)) {
      if (Date.now() > until) return undefined;
      await new Promise((res) => setTimeout(res, 100));
      continue;
    }
    const store = RecordingStore.open(db);
    try {
      const r = store.listRecordings()[0];
      if (r?.endedUs !== undefined || Date.now() > until)
        return r ? { ...r, frames: [...store.frames(r.id)].length, exchanges: store.exchanges({ recordingId: r.id }) } : undefined;
    } finally {
      store.close();
    }
    await new Promise((res) => setTimeout(res, 100));
  }
}

describe('a recording the tap does not end in order', () => {
  it('SIGKILL of the tap under traffic: the indexer still records what was spooled, and the recording says it is incomplete', async () => {
    const db = join(mkdtempSync(join(tmpdir(), 'mcptap-kill-')), 'rec.db');
    const tap = spawn(process.execPath, [MCPTAP, 'stdio', '--record', db, '--', process.execPath, join(FIXTURES, 'misbehaving-server.mjs')], {
      env: { ...process.env, WROTE: '/dev/null' },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    let answered = 0;
    tap.stdout.on('data', (b: Buffer) => (answered += b.toString().split('\n').length - 1));
    for (let id = 1; id <= 50; id++) tap.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' })}\n`);
    for (let i = 0; i < 200 && answered < 50; i++) await new Promise((r) => setTimeout(r, 25));
    expect(answered).toBe(50);
    // The sinks boot after the server's first answer: a tap killed before they are up keeps nothing
    // (a documented bound). Wait for the indexer, then past the batching of what the tap hands it
    // (40 ms), with room for a loaded machine.
    for (let i = 0; i < 500 && !RecordingStore.hasRecording(db); i++) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 500));
    tap.kill('SIGKILL');
    const rec = await closedRecording(db);
    expect(rec?.endedUs).toBeDefined();
    expect(rec!.exchanges.map((e) => e.outcome)).toEqual(Array(50).fill('ok'));
    expect(rec!.meta?.incomplete).toMatch(/the tap ended without closing the recording/);
  });

  it.skipIf(process.platform !== 'linux')(
    'SIGTERM while the tap waits for its indexer: it stops at once, the indexer completes the recording in the background',
    async () => {
      const db = join(mkdtempSync(join(tmpdir(), 'mcptap-term-')), 'rec.db');
      const lines = 2000;
      // Writes its lines, then exits when its stdin ends (the host's EOF).
      const server = `for (let i = 1; i <= ${lines}; i++) process.stdout.write('{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":' + i + '}}\\n'); process.stdin.on('end', () => process.exit(0)).resume();`;
      const tap = spawn(process.execPath, [MCPTAP, 'stdio', '--record', db, '--', process.execPath, '-e', server], { stdio: ['pipe', 'pipe', 'pipe'] });
      let stderr = '';
      tap.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
      let got = 0;
      await new Promise<void>((resolve) =>
        tap.stdout.on('data', (b: Buffer) => {
          for (const c of b) if (c === 10) got++;
          if (got >= lines) resolve();
        }),
      );
      // Hold the indexer (as a machine too busy for a niced process would), so that closing waits for it.
      // It boots beside the traffic: wait until it is up (its recording row exists) before holding it.
      for (let i = 0; i < 500 && !RecordingStore.hasRecording(db); i++) await new Promise((r) => setTimeout(r, 20));
      const indexer = childrenOf(tap.pid!).find((p) => p.cmdline.includes('indexer-process'));
      expect(indexer, 'the recording indexer process').toBeDefined();
      process.kill(indexer!.pid, 'SIGSTOP');
      try {
        const exited = new Promise<number | null>((resolve) => tap.once('exit', (code) => resolve(code)));
        tap.stdin.end(); // the server exits; the tap starts closing and waits for the indexer
        await new Promise((r) => setTimeout(r, 500));
        expect(tap.exitCode).toBeNull();
        const sentAt = Date.now();
        tap.kill('SIGTERM');
        const code = await exited;
        expect(Date.now() - sentAt).toBeLessThan(3000);
        expect(code).toBe(0); // the server's own exit code
        expect(stderr).toMatch(/SIGTERM while closing: stopping now; the recording indexer completes .* in the background/);
      } finally {
        process.kill(indexer!.pid, 'SIGCONT');
      }
      const rec = await closedRecording(db);
      expect(rec?.endedUs).toBeDefined();
      expect(rec!.frames).toBe(lines);
      expect(rec!.meta?.incomplete).toBeUndefined();
    },
  );
});
