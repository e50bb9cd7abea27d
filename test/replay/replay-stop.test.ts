/**
 * `mcptap replay` stopped by SIGINT: a recording spread over 20 s, replayed at its recorded pace
 * against the reference server, is stopped after about 2 s. It exits 130 at once, with the reports
 * of what was answered before the stop (JUnit: an erroring case), and no --update file.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import { beforeAll, describe, expect, it } from 'vitest';
import { MCPTAP } from '../helpers/paths.js';
import { mcptap } from './replay-helpers.js';
import { exitOf, signalAndWait } from '../helpers/signal-child.js';

const CALLS = 20;

/** The reference server over HTTP in a process of its own, so that a test can kill or stop it. */
/** The reference server over HTTP; `sessionOpened` resolves when a client's legacy session is open (its debug log). */
async function referenceOverHttp(): Promise<{ server: ChildProcess; url: string; sessionOpened: Promise<void> }> {
  const server = spawn(process.execPath, [MCPTAP, 'reference', '--http', '127.0.0.1:0', '--log-level', 'debug'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  let opened!: () => void;
  const sessionOpened = new Promise<void>((resolve) => (opened = resolve));
  const url = await new Promise<string>((resolve) => {
    server.stderr!.on('data', (b: Buffer) => {
      err += b.toString();
      const m = /(http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(err);
      if (m) resolve(m[1]!);
      if (/legacy session \S+ opened/.test(err)) opened();
    });
  });
  return { server, url, sessionOpened };
}

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

  it('SIGINT while a stdio server has not answered initialize: exits at once; a second signal leaves no server behind', async () => {
    // The "server" never answers and ignores its stdin's end: only a signal ends it.
    const marker = `${60 + Math.random()}`.slice(0, 9);
    const alive = () => spawnSync('pgrep', ['-f', `^sleep ${marker}`], { encoding: 'utf8' }).stdout.trim();
    for (const extra of [[], ['--method', 'ping']]) {
      // The recorded initialize replayed as a step, or (not selected) as the session's handshake.
      const child = spawn(process.execPath, [MCPTAP, 'replay', db, '--timeout', '60s', ...extra, '--', 'sleep', marker], { stdio: 'ignore' });
      const exited = exitOf(child);
      for (let i = 0; i < 100 && alive() === ''; i++) await new Promise((r) => setTimeout(r, 50));
      expect(alive(), 'the server started').not.toBe('');
      // It used to wait for initialize's 60 s timeout.
      expect(await signalAndWait(child, exited, 'SIGINT'), extra.join(' ')).toBe(130);
      for (let i = 0; i < 40 && alive() !== ''; i++) await new Promise((r) => setTimeout(r, 50));
      expect(alive(), 'the server was ended with the replay').toBe('');
    }
    const child = spawn(process.execPath, [MCPTAP, 'replay', db, '--timeout', '60s', '--', 'sleep', marker], { stdio: 'ignore' });
    const exited = exitOf(child);
    for (let i = 0; i < 100 && alive() === ''; i++) await new Promise((r) => setTimeout(r, 50));
    child.kill('SIGINT');
    await new Promise((r) => setTimeout(r, 20));
    expect(await signalAndWait(child, exited, 'SIGINT')).toBe(130);
    for (let i = 0; i < 40 && alive() !== ''; i++) await new Promise((r) => setTimeout(r, 50));
    expect(alive(), 'quitting at once still ends the server').toBe('');
  }, 60_000);

  it('an HTTP target that dies mid-replay: the rest is not sent, the reason said once (exit 1)', async () => {
    const { server, url, sessionOpened } = await referenceOverHttp();
    const json = join(dir, 'died.json');
    const replaying = mcptap(['replay', db, '--json', json, '--url', url], 60_000);
    // Mid-replay: once the session is open (on a loaded machine a fixed 3 s could end the server
    // before the replay reached it: exit 5, never reached), and a call or two later.
    await sessionOpened;
    await new Promise((r) => setTimeout(r, 1500));
    server.kill('SIGKILL');
    const r = await replaying;
    expect(r.code).toBe(1);
    const report = JSON.parse(readFileSync(json, 'utf8')) as {
      failure: string;
      counts: { exchanges: number; notSent: number; different: number };
      exchanges: { notSent?: true }[];
    };
    expect(report.failure).toMatch(/connection refused/);
    // Within the 20 s recorded, only the first few seconds were sent; one exchange at most met the dead server.
    expect(report.counts.notSent).toBeGreaterThan(CALLS / 2);
    expect(report.counts.different).toBeLessThanOrEqual(2); // the recorded initialize names another server, and one call at most
    expect(r.stdout.match(/target failed: .*connection refused/g)).toHaveLength(1);
    // Listed: the exchanges sent and different, not the ones never sent.
    expect(r.stdout.match(/✗ exchange/g)?.length ?? 0).toBe(report.counts.different);
    expect(r.stdout).toMatch(new RegExp(`\\d+ of ${CALLS + 1} exchanges replayed \\(${report.counts.notSent} not sent\\)`));
  }, 60_000);
  it('a session whose initialize fails now (answered when recorded) sends nothing more: the rest is not sent', async () => {
    // A server that refuses initialize and answers anything else: the pings would pass, on a session never opened.
    const refusing = [
      "require('readline').createInterface({ input: process.stdin }).on('line', (l) => { const m = JSON.parse(l); if (m.id === undefined) return;",
      "  const out = m.method === 'initialize' ? { error: { code: -32602, message: 'unsupported version' } } : { result: {} };",
      "  process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, ...out }) + '\\n'); });",
    ].join('\n');
    const json = join(dir, 'refused.json');
    const r = await mcptap(['replay', db, '--pace', 'fast', '--json', json, '--', process.execPath, '-e', refusing]);
    expect(r.code).toBe(1);
    const report = JSON.parse(readFileSync(json, 'utf8')) as { failure: string; counts: { notSent: number; same: number; different: number } };
    expect(report.counts).toMatchObject({ notSent: CALLS, same: 0, different: 1 });
    expect(report.failure).toBe('initialize failed: unsupported version (-32602)');
  }, 60_000);

  it('an HTTP target that hangs: after 3 requests in a row time out, the rest is not sent', async () => {
    const { server, url, sessionOpened } = await referenceOverHttp();
    try {
      const json = join(dir, 'hung.json');
      const replaying = mcptap(['replay', db, '--timeout', '1s', '--json', json, '--url', url], 60_000);
      await sessionOpened; // mid-replay, as in the test above
      await new Promise((r) => setTimeout(r, 1500));
      server.kill('SIGSTOP'); // still accepting connections (the kernel does), never answering
      const r = await replaying;
      expect(r.code).toBe(1);
      const report = JSON.parse(readFileSync(json, 'utf8')) as { failure: string; counts: { notSent: number; noResponse: number } };
      expect(report.failure).toMatch(/timeout/);
      // 3 in a row; one more may have gone out as the third timed out (one a second, 1 s timeout).
      expect(report.counts.noResponse).toBeGreaterThanOrEqual(3);
      expect(report.counts.noResponse).toBeLessThanOrEqual(5);
      expect(report.counts.notSent).toBeGreaterThan(CALLS / 2);
    } finally {
      server.kill('SIGKILL');
    }
  }, 60_000);
});
