/**
 * `mcptap probe-cancel` through the CLI, against real peers: server-everything's
 * trigger-long-running-operation (its progress goes on after notifications/cancelled) over stdio,
 * and the reference server over HTTP in honour and ignore mode, both eras.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReferenceHttpServer, type ReferenceHttpServer } from '../../../src/reference/reference-server.js';
import { EVERYTHING_BIN, ROOT } from '../../client/peers.js';

const run = promisify(execFile);
const BIN = path.join(ROOT, 'bin/mcptap.js');

async function mcptap(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], { timeout: 90_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

// The tests run at once: each call has its own progress token, which the in-flight probe reads by.
describe.concurrent('mcptap probe-cancel', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mcptap-probe-cancel-'));
  let honour: ReferenceHttpServer;
  let ignore: ReferenceHttpServer;
  beforeAll(async () => {
    honour = await startReferenceHttpServer({ host: '127.0.0.1', port: 0 });
    ignore = await startReferenceHttpServer({ host: '127.0.0.1', port: 0, honorCancel: false });
  });
  afterAll(async () => {
    await honour?.close();
    await ignore?.close();
  });

  it('server-everything over stdio: ignored (exit 1), with how long its work went on', async () => {
    const json = path.join(dir, 'everything.json');
    const r = await mcptap([
      'probe-cancel',
      '--tool',
      'trigger-long-running-operation',
      '--args',
      '{"duration": 2, "steps": 10}',
      '--times',
      '2',
      '--json',
      json,
      '--',
      process.execPath,
      EVERYTHING_BIN,
      'stdio',
    ]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^trigger-long-running-operation on .* \(legacy era, stdio\): ignored\n/);
    expect(r.stdout).toMatch(/IGNORED: work went on after the cancel in 2 of 2: for at least p50 \S+/);
    expect(r.stdout).toMatch(/evidence: ignored: notifications\/cancelled: \d+ progress notification\(s\) after the cancel/);
    const out = JSON.parse(readFileSync(json, 'utf8')) as { verdict: string; figures: { ignored: number; progressAfterCancel: number } };
    expect(out.verdict).toBe('ignored');
    expect(out.figures.ignored).toBe(2);
    expect(out.figures.progressAfterCancel).toBeGreaterThanOrEqual(2 * 5);
  });

  for (const era of ['legacy', '2026-07-28'] as const) {
    it(`the reference server over HTTP, ${era} era: honoured (exit 0) with the stop delay; ignored (exit 1) with --ignore-cancel`, async () => {
      const args = (url: string) => [
        'probe-cancel',
        '--tool',
        'progress',
        '--args',
        '{"steps": 20, "intervalMs": 50}',
        '--url',
        url,
        '--probe',
        'in-flight',
        '--era',
        era,
        '--observe',
        '1s',
        '--times',
        '2',
      ];
      const [h, i] = await Promise.all([mcptap(args(honour.url)), mcptap([...args(ignore.url), '--json', '-'])]);
      expect(h.stderr).toBe('');
      expect(h.stdout).toMatch(new RegExp(`\\(${era} era, http\\): honoured\\n  progress: HONOURED: stop delay p50 \\S+ p99 \\S+`));
      expect(h.code).toBe(0);
      expect(i.code).toBe(1);
      expect(JSON.parse(i.stdout)).toMatchObject({
        verdict: 'ignored',
        transport: 'http',
        era: era === 'legacy' ? 'legacy' : 'modern',
        figures: { ignored: 2 },
      });
    });
  }

  it('a tool the server lacks exits 4 naming the nearest; no server given exits 2', async () => {
    const r = await mcptap(['probe-cancel', '--tool', 'progres', '--url', honour.url]);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/^mcptap: --tool "progres": .* has no such tool; the nearest is "progress"\..* give --tool one of them/);
    expect(r.stderr).not.toMatch(/scenario|preflight/);
    const p = await mcptap(['probe-cancel', '--tool', 'progress', '--probe', 'in-fligt', '--url', honour.url]);
    expect(p.code).toBe(4);
    expect(p.stderr).toMatch(/^mcptap: --probe "in-fligt": .* the nearest is "in-flight"\..* give --probe one of them/);
    const u = await mcptap(['probe-cancel', '--tool', 'progress']);
    expect(u.code).toBe(2);
    expect(u.stderr).toMatch(/give the server as --url URL or as a command after --/);
  });

  it('a bad duration is a usage error (exit 2) naming its flag, before any call', async () => {
    const bare = await mcptap(['probe-cancel', '--tool', 'progress', '--observe', '2', '--url', honour.url]);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toBe('mcptap: --observe: 2 has no unit; write 2s or 2ms\n');
    const bad = await mcptap(['probe-cancel', '--tool', 'progress', '--after', '5x', '--url', honour.url]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('mcptap: --after: a duration like 300ms, 2s or 1m, got 5x\n');
  });

  it('a tool that ends before the cancel is due: unknown (exit 1), with what to change', async () => {
    const r = await mcptap(['probe-cancel', '--tool', 'echo', '--args', '{"text": "hi"}', '--times', '2', '--url', honour.url]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/: unknown\n/);
    expect(r.stdout).toMatch(/2 ended before the cancel/);
    expect(r.stdout).toMatch(/hint: every call ended before the cancel was due .*: give the tool longer work \(--args\) or cancel sooner \(--after 100ms\)/);
  });
});
