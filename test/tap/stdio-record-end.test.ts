/**
 * How a recording ends when the tap does not end it in order: the tap SIGKILLed under traffic,
 * and a host's SIGTERM while the tap still indexes a backlog after the server exited. The
 * recording indexer (a process of its own, holding the spool) completes the recording either way;
 * a recording the tap never closed says it is incomplete.
 */
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FIXTURES, MCPTAP } from '../helpers/paths.js';
import { RecordingStore } from '../../src/store/recording-store.js';

/** The first recording once it is closed (ended), polled for at most `ms`. */
async function closedRecording(db: string, ms = 20_000) {
  const until = Date.now() + ms;
  for (;;) {
    const store = RecordingStore.open(db);
    try {
      const r = store.listRecordings()[0];
      if (r?.endedUs !== undefined || Date.now() > until) return r ? { ...r, frames: [...store.frames(r.id)].length, exchanges: store.exchanges({ recordingId: r.id }) } : undefined;
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
    // Wait past the batching of what the tap hands its indexer (40 ms), not past its quiet time.
    await new Promise((r) => setTimeout(r, 80));
    tap.kill('SIGKILL');
    const rec = await closedRecording(db);
    expect(rec?.endedUs).toBeDefined();
    expect(rec!.exchanges.map((e) => e.outcome)).toEqual(Array(50).fill('ok'));
    expect(rec!.meta?.incomplete).toMatch(/the tap ended without closing the recording/);
  });

  it("SIGTERM while the tap indexes a backlog: it stops at once, the indexer completes the recording in the background", async () => {
    const db = join(mkdtempSync(join(tmpdir(), 'mcptap-term-')), 'rec.db');
    const lines = 300_000;
    const server = `const N = ${lines}; let i = 0; const go = () => { while (i < N) { i++; if (!process.stdout.write('{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":' + i + '}}\\n')) return void process.stdout.once('drain', go); } process.exit(0); }; go();`;
    const tap = spawn(process.execPath, [MCPTAP, 'stdio', '--record', db, '--', process.execPath, '-e', server], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    tap.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    let got = 0;
    const allOut = new Promise<void>((resolve) =>
      tap.stdout.on('data', (b: Buffer) => {
        for (const c of b) if (c === 10) got++;
        if (got >= lines) resolve();
      }),
    );
    const exited = new Promise<number | null>((resolve) => tap.once('exit', (code) => resolve(code)));
    await allOut;
    await new Promise((r) => setTimeout(r, 100));
    const sentAt = Date.now();
    tap.kill('SIGTERM');
    const code = await exited;
    const stoppedMs = Date.now() - sentAt;
    expect(code).toBe(0); // the server's own exit code
    expect(stderr).toMatch(/SIGTERM while closing: stopping now; the recording indexer completes .* in the background/);
    expect(stoppedMs).toBeLessThan(3000);
    const rec = await closedRecording(db, 60_000);
    expect(rec?.endedUs).toBeDefined();
    expect(rec!.frames).toBe(lines);
    expect(rec!.meta?.incomplete).toBeUndefined();
  });
});
