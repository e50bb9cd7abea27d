/**
 * `mcptap mock` of the built CLI: bad input and usage (exit codes, one-paragraph messages, nothing
 * on stdout), the legacy HTTP session rules on the wire, and `--on-miss passthrough` to the real
 * reference server with what it forwarded recorded through the HTTP tap.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MCPTAP } from '../../helpers/paths.js';
import { runMock, startMockHttp, type MockChild } from '../../helpers/mock-cli.js';
import { RawStdioPeer } from '../../reference/raw-stdio-peer.js';
import { RecordingStore } from '../../../src/store/recording-store.js';
import { startReferenceHttpServer, type ReferenceHttpServer } from '../../../src/reference/reference-server.js';
import { MOCK_MISS_CODE } from '../../../src/mock/mock-responder.js';

const dir = mkdtempSync(join(tmpdir(), 'mcptap-mock-cli-'));
const INIT = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } };

/** A legacy session with the reference server, recorded through the stdio tap: initialize + one echo. */
async function recordEcho(db: string): Promise<void> {
  const peer = new RawStdioPeer([], ['stdio', '--record', db, '--', process.execPath, MCPTAP, 'reference', '--stdio']);
  peer.send({ id: 1, method: 'initialize', params: INIT });
  await peer.response(1);
  peer.send({ method: 'notifications/initialized' });
  peer.send({ id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'recorded' } } });
  await peer.response(2);
  expect(await peer.close()).toBe(0);
}

describe('mcptap mock: bad input and usage', () => {
  it('refuses a file that is not a recording, and a recording without exchanges: exit 4, one paragraph', async () => {
    const text = join(dir, 'notes.db');
    writeFileSync(text, 'not a database\n');
    const empty = join(dir, 'empty.db');
    const store = RecordingStore.open(empty, { create: true });
    const id = store.beginRecording({ transport: 'stdio', target: 'server', startedUs: Date.now() * 1000, mcptapVersion: 'test' });
    store.endRecording(id, { endedUs: Date.now() * 1000, droppedQueue: 0, droppedWrite: 0 });
    store.close();
    const cases: Array<[string, RegExp]> = [
      [text, /is not an mcptap recording/],
      [empty, /holds no answered requests to serve.*Record a session first/],
    ];
    for (const [file, message] of cases) {
      const run = await runMock([file, '--stdio']);
      expect(run.code, run.stderr).toBe(4);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(message);
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
    }
  });

  it('exits 2 on usage errors, before reading the recording', async () => {
    const usage = [
      ['x.db'],
      ['x.db', '--stdio', '--http', '127.0.0.1:0'],
      ['x.db', '--stdio', '--pace', 'slow'],
      ['x.db', '--stdio', '--on-miss', 'passthrough'],
      ['x.db', '--stdio', '--upstream', 'http://127.0.0.1:9/mcp'],
      ['x.db', '--http', 'host:port'],
    ];
    const runs = await Promise.all(usage.map((args) => runMock(args)));
    runs.forEach((run, i) => {
      expect(run.code, `${usage[i]!.join(' ')}: ${run.stderr}`).toBe(2);
      expect(run.stdout).toBe('');
    });
  });
});

describe('mcptap mock --http', () => {
  const db = join(dir, 'echo.db');
  let mock: MockChild;
  let upstream: ReferenceHttpServer;
  let passthrough: MockChild;
  const forwarded = join(dir, 'forwarded.db');

  beforeAll(async () => {
    await recordEcho(db);
    mock = await startMockHttp(db);
    upstream = await startReferenceHttpServer();
    passthrough = await startMockHttp(db, ['--on-miss', 'passthrough', '--upstream', upstream.url, '--record', forwarded]);
  });
  afterAll(async () => {
    await Promise.allSettled([mock?.stop(), passthrough?.stop(), upstream?.close()]);
  });

  it('a port in use: exit 2, one line saying what to do, no hit/miss counts of a mock that never served', async () => {
    const { host } = new URL(mock.url);
    const run = await runMock([db, '--http', host]);
    expect(run.code, run.stderr).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(
      /^mcptap: cannot listen on 127\.0\.0\.1:\d+: .*EADDRINUSE.* \(another process has the port: pick another, or port 0 for a free one\)\n$/,
    );
  });

  const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  it('mints a session on initialize, requires it after, and ends it on DELETE', async () => {
    const echo = { jsonrpc: '2.0', id: 'e', method: 'tools/call', params: { name: 'echo', arguments: { text: 'recorded' } } };
    expect((await post(mock.url, echo)).status).toBe(400);
    const init = await post(mock.url, { jsonrpc: '2.0', id: 'i', method: 'initialize', params: INIT });
    expect(init.status).toBe(200);
    const session = init.headers.get('mcp-session-id')!;
    expect(session).toMatch(/\S/);
    expect(((await init.json()) as { id: string; result: { protocolVersion: string } }).result.protocolVersion).toBe('2025-06-18');
    expect((await post(mock.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-session-id': session })).status).toBe(202);
    expect((await post(mock.url, echo, { 'mcp-session-id': 'unknown' })).status).toBe(404);
    const answered = await post(mock.url, echo, { 'mcp-session-id': session });
    expect(answered.status).toBe(200);
    expect(await answered.json()).toMatchObject({ id: 'e', result: { content: [{ type: 'text' }] } });
    expect((await fetch(mock.url, { method: 'GET', headers: { accept: 'text/event-stream', 'mcp-session-id': session } })).status).toBe(405);
    expect((await fetch(mock.url, { method: 'DELETE', headers: { 'mcp-session-id': session } })).status).toBe(200);
    expect((await post(mock.url, echo, { 'mcp-session-id': session })).status).toBe(404);
    const bad = await post(mock.url, '{not json');
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: number } }).error.code).toBe(-32700);
  });

  it('--rules: a request matches once the rules normalise what differs', async () => {
    const rules = join(dir, 'rules.yaml');
    writeFileSync(rules, ['rules:', '  - tool: echo', '    ignore: /params/arguments/text', ''].join('\n'));
    const peer = new RawStdioPeer([], ['mock', db, '--stdio', '--rules', rules]);
    try {
      peer.send({ id: 1, method: 'initialize', params: INIT });
      peer.send({ id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'anything else' } } });
      peer.send({ id: 3, method: 'tools/call', params: { name: 'other', arguments: { text: 'x' } } });
      expect(await peer.response(2)).toMatchObject({ result: { content: [{ type: 'text' }] } });
      expect(await peer.response(3)).toMatchObject({
        error: { code: MOCK_MISS_CODE, message: expect.stringContaining('tools/call {"arguments":{"text":"x"},"name":"other"}') },
      });
    } finally {
      expect(await peer.close()).toBe(0);
    }
    expect(peer.stderr.join('')).toMatch(/2 requests answered from the recording, 1 missed/);
  });

  it('--on-miss passthrough answers a miss from the upstream and records what it forwarded', async () => {
    const client = new Client({ name: 'passthrough', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(passthrough.url)));
    const direct = new Client({ name: 'direct', version: '1' });
    await direct.connect(new StreamableHTTPClientTransport(new URL(upstream.url)));
    try {
      const args = { name: 'echo', arguments: { text: 'not in the recording' } };
      expect(await client.callTool(args)).toEqual(await direct.callTool(args));
      // The recorded call is still answered from the recording.
      expect(await client.callTool({ name: 'echo', arguments: { text: 'recorded' } })).toMatchObject({ content: [{ type: 'text' }] });
    } finally {
      await Promise.allSettled([client.close(), direct.close()]);
    }
    const { code, stderr } = await passthrough.stop();
    expect(code).toBe(0);
    expect(stderr).toMatch(/2 requests answered from the recording, 1 missed \(1 passed through to the upstream\)/);
    const store = RecordingStore.open(forwarded);
    try {
      const calls = store.exchanges({ method: 'tools/call' });
      expect(calls.map((e) => [e.target, e.outcome, (e.request as { params: { arguments: unknown } }).params.arguments])).toEqual([
        ['echo', 'ok', { text: 'not in the recording' }],
      ]);
    } finally {
      store.close();
    }
  });
});
