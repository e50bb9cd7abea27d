/**
 * Faults no real server produces on demand, from a scripted fake (test/fixtures/misbehaving-server.mjs):
 * the host must receive exactly what the server wrote, mcptap must not crash, and each fault must be
 * a classified anomaly or outcome in the recording and in `mcptap show`.
 */
import { describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FIXTURES, MCPTAP } from '../helpers/paths.js';
import { RecordingStore } from '../../src/store/recording-store.js';

async function session(lines: string[], waitMs = 150) {
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-bad-'));
  const wrote = join(dir, 'wrote.bin');
  writeFileSync(wrote, '');
  const db = join(dir, 'rec.db');
  const child = spawn(process.execPath, [MCPTAP, 'stdio', '--record', db, '--', process.execPath, join(FIXTURES, 'misbehaving-server.mjs')], {
    env: { ...process.env, WROTE: wrote },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const got: Buffer[] = [];
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => got.push(b));
  child.stderr.on('data', (b: Buffer) => (stderr += b));
  for (const l of lines) {
    child.stdin.write(l + '\n');
    await new Promise((r) => setTimeout(r, 20));
  }
  await new Promise((r) => setTimeout(r, waitMs));
  child.stdin.end();
  const code = await new Promise<number | null>((r) => child.on('close', r));
  const store = RecordingStore.open(db);
  const rec = store.listRecordings()[0]!;
  const result = {
    code,
    stderr,
    db,
    sameBytes: Buffer.concat(got).equals(readFileSync(wrote)),
    exchanges: store.exchanges({ recordingId: rec.id }),
    anomalies: store.anomalies(rec.id).map((a) => a.kind),
  };
  store.close();
  return result;
}

const req = (id: unknown, method: string) => JSON.stringify({ jsonrpc: '2.0', id, method });

describe('stdio tap with a misbehaving server', () => {
  it('passes stdout pollution, orphan responses and reused ids through and classifies them', async () => {
    const r = await session([req(1, 'pollute'), req(2, 'orphan'), req(3, 'hold'), req(3, 'again'), req('3', 'ok')]);
    expect(r.code).toBe(0);
    expect(r.sameBytes).toBe(true);
    expect(r.stderr).toContain('misbehaving server ready');
    expect(r.anomalies.sort()).toEqual(['duplicate_id', 'orphan_response', 'stdout_pollution']);
    const by = (m: string) => r.exchanges.find((e) => e.method === m)!;
    expect([by('pollute').outcome, by('orphan').outcome, by('again').outcome, by('ok').outcome]).toEqual(['ok', 'ok', 'ok', 'ok']);
    expect([by('hold').outcome, by('hold').transport?.errorClass]).toEqual(['unanswered', 'superseded_by_duplicate_id']);
    expect(r.exchanges.filter((e) => e.outcome === 'orphan_response').map((e) => e.id)).toEqual(['never-asked']);

    const show = spawnSync(process.execPath, [MCPTAP, 'show', r.db, '--anomalies'], { encoding: 'utf8' });
    expect(show.status).toBe(0);
    for (const kind of ['duplicate_id', 'orphan_response', 'stdout_pollution']) expect(show.stdout).toContain(kind);
  });

  it('records truncated JSON at EOF', async () => {
    const r = await session([req(1, 'truncate')]);
    expect(r.code).toBe(0);
    expect(r.sameBytes).toBe(true);
    expect(r.anomalies).toContain('truncated_at_eof');
    expect(r.exchanges.find((e) => e.method === 'truncate')?.outcome).toBe('unanswered');
  });

  it('passes the exit code through when the server dies mid-request, leaving the request unanswered', async () => {
    const r = await session([req(1, 'ping'), req(2, 'die')]);
    expect(r.code).toBe(3);
    expect(r.sameBytes).toBe(true);
    const die = r.exchanges.find((e) => e.method === 'die')!;
    expect([die.outcome, die.transport?.errorClass]).toEqual(['unanswered', 'child_exit']);
  });

  it('kills the server when the tap itself is killed: a host SIGKILL after its grace period reaches the tap, not the server', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcptap-reap-'));
    const child = spawn(process.execPath, [MCPTAP, 'stdio', '--', process.execPath, join(FIXTURES, 'misbehaving-server.mjs')], {
      env: { ...process.env, WROTE: join(dir, 'wrote.bin') },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    child.stdin.write(req(1, 'stubborn') + '\n');
    const line = await new Promise<string>((resolve) => child.stdout.once('data', (b: Buffer) => resolve(b.toString())));
    const pid = (JSON.parse(line) as { result: { pid: number } }).result.pid;
    const alive = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    expect(alive()).toBe(true);
    child.kill('SIGKILL');
    for (let i = 0; i < 100 && alive(); i++) await new Promise((r) => setTimeout(r, 50));
    const survived = alive();
    if (survived) process.kill(pid, 'SIGKILL');
    expect(survived).toBe(false);
  });

  it('an unknown --log-level is a usage error (it used to silence every message, errors included)', () => {
    const r = spawnSync(process.execPath, [MCPTAP, 'stdio', '--log-level', 'warning', '--', process.execPath, '-e', ''], { encoding: 'utf8', input: '' });
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/'warning' is invalid\. Allowed choices are debug, info, warn, error, silent/);
  });

  it.skipIf(!existsSync('/dev/full'))('says so on stderr when stdout cannot be written (ENOSPC), and keeps the server unblocked', () => {
    const full = openSync('/dev/full', 'w');
    try {
      const server = `for (let i = 0; i < 200; i++) process.stdout.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { i } }) + '\\n')`;
      const r = spawnSync(process.execPath, [MCPTAP, 'stdio', '--', process.execPath, '-e', server], {
        encoding: 'utf8',
        input: '',
        stdio: ['pipe', full, 'pipe'],
        timeout: 20_000,
      });
      expect(r.status).toBe(0);
      expect(r.stderr).toMatch(/writing the server's output to stdout failed \(ENOSPC\)/);
      expect(r.stderr.match(/stdout failed/g)).toHaveLength(1);
    } finally {
      closeSync(full);
    }
  });

  it('an empty command is a one-line error with exit 5, not an internal error', () => {
    const r = spawnSync(process.execPath, [MCPTAP, 'stdio', '--', ''], { encoding: 'utf8', input: '' });
    expect(r.status).toBe(5);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim()).toBe('mcptap: cannot start server "": the command is empty');
  });

  it('with --record, a server that cannot start leaves a recording that says so, not a clean empty run', () => {
    const db = join(mkdtempSync(join(tmpdir(), 'mcptap-nostart-')), 'rec.db');
    const r = spawnSync(process.execPath, [MCPTAP, 'stdio', '--record', db, '--', 'definitely-not-a-command-xyz'], { encoding: 'utf8', input: '' });
    expect(r.status).toBe(5);
    const store = RecordingStore.open(db);
    try {
      const [rec] = store.listRecordings();
      expect(rec?.endedUs).toBeDefined();
      expect(rec?.meta?.incomplete).toBe('the server did not start: cannot start server "definitely-not-a-command-xyz": command not found');
    } finally {
      store.close();
    }
  });

  it('fails clearly, on stderr only, when the command does not exist', () => {
    const r = spawnSync(process.execPath, [MCPTAP, 'stdio', '--', 'definitely-not-a-command-xyz'], { encoding: 'utf8', input: '' });
    expect(r.status).toBe(5);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/cannot start server "definitely-not-a-command-xyz": command not found/);
  });
});
