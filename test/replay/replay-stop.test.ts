/**
 * `mcptap replay` stopped by SIGINT: a recording spread over 20 s, replayed at its recorded pace
 * against the reference server, is stopped after about 2 s. It exits 130 at once, with the reports
 * of what was answered before the stop (JUnit: an erroring case), and no --update file.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import { beforeAll, describe, expect, it } from 'vitest';
import { MCPTAP } from '../helpers/paths.js';
import { mcptap } from './replay-helpers.js';
import { exitOf, signalAndWait } from '../helpers/signal-child.js';

const CALLS = 20;

describe('mcptap replay stopped by a signal', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-replay-stop-'));
  const db = join(dir, 'spread.db');

  beforeAll(async () => {
    // initialize, then a tools/list every second: 21 exchanges over 20 s.
    const t0 = Date.parse('2026-12-04T10:00:00Z') * 1000;
    const line = (us: number, dir: 'c2s' | 's2c', message: object) => JSON.stringify({ t: t0 + us, dir, message });
    const lines = [
      JSON.stringify({ mcptap: 'jsonl', version: 1, recording: { transport: 'stdio', target: 'reference' } }),
      line(0, 'c2s', {
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      }),
      line(1000, 's2c', {
        jsonrpc: '2.0',
        id: 0,
        result: { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'r', version: '1' } },
      }),
      line(2000, 'c2s', { jsonrpc: '2.0', method: 'notifications/initialized' }),
    ];
    for (let i = 1; i <= CALLS; i++) {
      lines.push(line(i * 1_000_000, 'c2s', { jsonrpc: '2.0', id: i, method: 'ping' }));
      lines.push(line(i * 1_000_000 + 500, 's2c', { jsonrpc: '2.0', id: i, result: {} }));
    }
    writeFileSync(join(dir, 'spread.jsonl'), lines.join('\n') + '\n');
    const r = await mcptap(['import', join(dir, 'spread.jsonl'), '--into', db]);
    expect(r.code, r.stderr).toBe(0);
  }, 60_000);

  it('SIGINT: exit 130 at once, the reports cover what was answered, --update is not written', async () => {
    const json = join(dir, 'r.json');
    const junit = join(dir, 'r.xml');
    const update = join(dir, 'next.db');
    const child = spawn(
      process.execPath,
      [MCPTAP, 'replay', db, '--json', json, '--junit', junit, '--update', update, '--', process.execPath, MCPTAP, 'reference', '--stdio'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const exited = exitOf(child);
    await new Promise((r) => setTimeout(r, 2000));
    // Bounded well under the 18 s the rest of the recording would take.
    const code = await signalAndWait(child, exited, 'SIGINT');
    expect(code).toBe(130);
    expect(stderr).toContain('mcptap: SIGINT: stopping the replay (requests in flight are cancelled; send it again to quit now)');
    expect(stderr).toContain(`mcptap: --update ${update} not written: the replay was stopped`);
    expect(existsSync(update)).toBe(false);
    const report = JSON.parse(readFileSync(json, 'utf8')) as {
      stopped: { signal: string; planned: number };
      counts: { exchanges: number };
      exchanges: { method: string; differences: unknown[] }[];
    };
    expect(report.stopped).toEqual({ signal: 'SIGINT', planned: CALLS + 1 });
    // At most the first 2 s of 20 were replayed; the pings among them answered the same (the
    // recorded initialize names another server).
    expect(report.counts.exchanges).toBeLessThan(CALLS / 2);
    expect(report.exchanges).toHaveLength(report.counts.exchanges);
    expect(report.exchanges.filter((e) => e.method === 'ping' && e.differences.length > 0)).toEqual([]);
    // JUnit: the exchanges not replayed are one erroring case, so a stopped replay never reads as passed.
    const xml = new XMLParser({ ignoreAttributes: false }).parse(readFileSync(junit, 'utf8')) as {
      testsuites: { '@_errors': string; testsuite: { '@_name': string; testcase: unknown } | { '@_name': string; testcase: unknown }[] };
    };
    expect(xml.testsuites['@_errors']).toBe('1');
    const stoppedSuite = [xml.testsuites.testsuite].flat().find((s) => s['@_name'] === 'mcptap replay')!;
    expect(stoppedSuite.testcase).toMatchObject({
      '@_name': 'stopped',
      error: { '@_type': 'stopped', '@_message': `stopped by SIGINT: ${CALLS + 1 - report.counts.exchanges} of ${CALLS + 1} exchanges not replayed` },
    });
    expect(stdout).toMatch(new RegExp(`${report.counts.exchanges} of ${CALLS + 1} exchanges replayed \\(stopped by SIGINT\\): .*before the stop`));
  }, 60_000);
});
