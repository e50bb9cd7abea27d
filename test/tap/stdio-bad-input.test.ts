/**
 * Faults no real server produces on demand, from a scripted fake (test/fixtures/misbehaving-server.mjs):
 * the host must receive exactly what the server wrote, mcptap must not crash, and each fault must be
 * a classified anomaly or outcome in the recording and in `mcptap show`.
 */
import { describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
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

  it('fails clearly, on stderr only, when the command does not exist', () => {
    const r = spawnSync(process.execPath, [MCPTAP, 'stdio', '--', 'definitely-not-a-command-xyz'], { encoding: 'utf8', input: '' });
    expect(r.status).toBe(5);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/cannot start server "definitely-not-a-command-xyz": command not found/);
  });
});
