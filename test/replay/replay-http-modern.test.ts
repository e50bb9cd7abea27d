/**
 * `mcptap replay` across transports and eras, with real peers: a legacy session recorded over
 * Streamable HTTP through `mcptap http` replays against a fresh server-everything (which mints
 * another Mcp-Session-Id) and over stdio; the stdio recording replays over HTTP; a 2026-07-28
 * session of the SDK 2.x client with the reference server replays over stdio and HTTP, and its
 * `clock` call passes only with a rule that ignores the time.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { MCPTAP } from '../helpers/paths.js';
import { startEverything, type ChildPeer } from '../helpers/http-peers.js';
import { recordOverHttp } from '../helpers/roots-session.js';
import { startReferenceHttpServer, type ReferenceHttpServer } from '../../src/reference/reference-server.js';
import { RecordingStore } from '../../src/store/recording-store.js';
import { EVERYTHING, everythingSession, mcptap, RECORDED, samplingSession, stdioTransport } from './replay-helpers.js';

describe('mcptap replay across transports (legacy era, server-everything)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-replay-http-'));
  const httpDb = join(dir, 'http.db');
  const stdioDb = join(dir, 'stdio.db');
  const samplingDb = join(dir, 'sampling.db');
  let peer: ChildPeer;

  beforeAll(async () => {
    await recordOverHttp(httpDb, everythingSession);
    await everythingSession(stdioTransport([MCPTAP, 'stdio', '--record', stdioDb, '--', EVERYTHING, 'stdio']));
    await samplingSession(samplingDb);
    peer = await startEverything('streamableHttp');
  }, 90_000);
  afterAll(async () => {
    await peer?.stop();
  });

  it('replays the HTTP recording against a new server that mints another session id', async () => {
    const json = join(dir, 'http.json');
    const r = await mcptap(['replay', httpDb, '--pace', 'fast', '--json', json, '--url', peer.url]);
    expect(r.stdout).toMatch(/no differences/);
    expect(r.code).toBe(0);
    const report = JSON.parse(readFileSync(json, 'utf8')) as {
      exchanges: { method: string; tool?: string }[];
      streams: { name: string; figure: string; recordedCount: number; replayedCount: number; recordedP50Us?: number; replayedP50Us?: number }[];
    };
    expect(report.exchanges.map((e) => e.tool ?? e.method)).toEqual(RECORDED);
    // server-everything answers over SSE both times: the streamed answers' figures, recorded beside replayed.
    const long = report.streams.filter((g) => g.name === 'tools/call trigger-long-running-operation');
    expect(long.map((g) => g.figure)).toEqual(expect.arrayContaining(['first_event', 'gap', 'progress', 'final']));
    const progress = long.find((g) => g.figure === 'progress')!;
    expect([progress.recordedCount, progress.replayedCount]).toEqual([2, 2]); // 3 progress notifications, 2 intervals
    expect(r.stdout).toMatch(/streamed answers \(SSE\)[^\n]*\n.*\n(.*\n)*tools\/call trigger-long-running-operation\s+progress\s+2 \/ 2/);
    const store = RecordingStore.open(httpDb);
    try {
      const recorded = store.exchanges({ method: 'initialize' })[0]!;
      expect(recorded.sessionId).toBeDefined();
      // The recorded figure is the gaps between the recorded progress notifications (not the
      // server's pacing, which a loaded machine stretches or squeezes), within histogram precision.
      const long = store.exchanges({ method: 'tools/call' }).find((e) => e.target === 'trigger-long-running-operation')!;
      const times = long.progress.map((p) => p.timeUs);
      const gaps = times.slice(1).map((t, i) => t - times[i]!);
      expect(gaps).toHaveLength(2);
      expect(progress.recordedP50Us).toBeGreaterThanOrEqual(Math.min(...gaps) * 0.99);
      expect(progress.recordedP50Us).toBeLessThanOrEqual(Math.max(...gaps) * 1.01);
      // Replayed: two gaps inside the replayed call (its 0.3 s of work, stretched by load).
      expect(progress.replayedP50Us).toBeGreaterThan(0);
    } finally {
      store.close();
    }
  }, 60_000);

  it('replays the HTTP recording over stdio', async () => {
    const r = await mcptap(['replay', httpDb, '--pace', 'fast', '--', EVERYTHING, 'stdio']);
    expect(r.stdout).toMatch(/8 exchanges replayed: 8 same/);
    expect(r.code).toBe(0);
  }, 60_000);

  it('replays the stdio recording over HTTP', async () => {
    const r = await mcptap(['replay', stdioDb, '--pace', 'fast', '--url', peer.url]);
    expect(r.stdout).toMatch(/8 exchanges replayed: 8 same/);
    expect(r.code).toBe(0);
  }, 60_000);

  it('replays a stdio client that pipelined its requests behind initialize over HTTP: each waits for its answer', async () => {
    // A raw stdio client writes initialize and its requests at once (stdio allows it); over HTTP
    // the requests need the session id that initialize's answer brings.
    const db = join(dir, 'pipelined.db');
    const tap = spawn(process.execPath, [MCPTAP, 'stdio', '--record', db, '--', EVERYTHING, 'stdio'], { stdio: ['pipe', 'pipe', 'ignore'] });
    const answered = new Promise<void>((resolve) => {
      let ids = 0;
      createInterface({ input: tap.stdout! }).on('line', (l) => {
        if ((JSON.parse(l) as { id?: number }).id !== undefined && ++ids === 3) resolve();
      });
    });
    tap.stdin!.write(
      [
        { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } },
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        { jsonrpc: '2.0', id: 2, method: 'tools/list' },
        { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'echo', arguments: { message: 'hi' } } },
      ]
        .map((m) => JSON.stringify(m) + '\n')
        .join(''),
    );
    await answered;
    tap.stdin!.end();
    await new Promise((resolve) => tap.once('exit', resolve));
    const store = RecordingStore.open(db);
    try {
      // Pipelined indeed: every request was sent before initialize was answered.
      const [init, ...rest] = store.exchanges({});
      expect(rest.map((e) => e.startUs < init!.endUs!)).toEqual([true, true]);
    } finally {
      store.close();
    }
    const r = await mcptap(['replay', db, '--url', peer.url]);
    expect(r.stdout).toMatch(/3 exchanges replayed: 3 same/);
    // The recording has no SSE to set beside the replay's: said in a line, not a table of empty cells.
    expect(r.stdout).toContain('streamed answers (SSE): only the replay has them (the recording is over stdio, or its answers were JSON): not compared');
    expect(r.code).toBe(0);
  }, 60_000);

  it('answers a sampling request arriving in an HTTP response stream from the recording', async () => {
    const r = await mcptap(['replay', samplingDb, '--pace', 'fast', '--url', peer.url]);
    expect(r.stdout).toMatch(/2 exchanges replayed: 2 same/);
    expect(r.code).toBe(0);
  }, 60_000);
});

/** A 2026-07-28 session of the SDK 2.x client with the reference server, deterministic tools and `clock`. */
async function modernSession(command: string, args: string[]): Promise<void> {
  const client = new Client({ name: 'mcptap-replay-modern', version: '2.0.0' }, { versionNegotiation: { mode: 'auto' } });
  await client.connect(new StdioClientTransport({ command, args, stderr: 'pipe' }));
  try {
    await client.listTools();
    await client.callTool({ name: 'echo', arguments: { text: 'modern ✓' } });
    await client.callTool({ name: 'progress', arguments: { steps: 3, intervalMs: 5 } }, { onprogress: () => {} });
    await client.callTool({ name: 'fail', arguments: { message: 'expected' } });
    await client.callTool({ name: 'rpc-error', arguments: { code: -32099 } }).catch(() => undefined);
    await client.callTool({ name: 'clock', arguments: {} });
  } finally {
    await client.close();
  }
}

describe('mcptap replay of a 2026-07-28 recording (reference server, SDK 2.x client)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-replay-modern-'));
  const db = join(dir, 'modern.db');
  const rules = join(dir, 'clock.yaml');
  const reference = [process.execPath, MCPTAP, 'reference', '--stdio'];
  let server: ReferenceHttpServer;

  beforeAll(async () => {
    await modernSession(process.execPath, [MCPTAP, 'stdio', '--record', db, '--', ...reference]);
    writeFileSync(rules, 'rules:\n  - tool: clock\n    normalise: timestamp\n    path: /result/content/*/text\n');
    server = await startReferenceHttpServer({ port: 0 });
  }, 60_000);
  afterAll(async () => {
    await server?.close();
  });

  it('fails on the clock call without a rule (exit 1) and passes with one (exit 0), over stdio and HTTP', async () => {
    const without = await mcptap(['replay', db, '--pace', 'fast', '--', ...reference]);
    expect(without.code).toBe(1);
    expect(without.stdout).toMatch(/✗ exchange #\d+ \(id \d+\) tools\/call clock\n {4}\/result\/content\/0\/text: changed/);
    // Every other exchange (deterministic tools, a tool error, a JSON-RPC error, progress) is the same.
    expect(without.stdout).toMatch(/(\d+) exchanges replayed: \d+ same, 1 different, 0 without response; 1 difference\n/);
    const withRules = await mcptap(['replay', db, '--pace', 'fast', '--rules', rules, '--', ...reference]);
    expect(withRules.stdout).toMatch(/no differences/);
    expect(withRules.code).toBe(0);
    const overHttp = await mcptap(['replay', db, '--pace', 'fast', '--rules', rules, '--url', server.url]);
    expect(overHttp.stdout).toMatch(/no differences/);
    expect(overHttp.code).toBe(0);
  }, 60_000);
});
