/**
 * The raw MCP client against real peers: server-everything (legacy, HTTP + stdio), a
 * 2026-07-28 SDK server (createMcpHandler), and, for faults no real server produces on demand
 * (stdout pollution, an answer to an unknown id, a crash), a FAKE stdio server written inline.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectEra, encodeHeaderValue, HttpChannel, McpHttpClient, McpSession, McpStdioClient, StdioChannel, TransportError } from '../../src/client/index.js';
import { EVERYTHING_BIN, startEverythingHttp, startModernSdkServer, type RunningPeer } from './peers.js';
import { MCPTAP } from '../helpers/paths.js';
import { modernMeta } from '../reference/raw-stdio-peer.js';

describe('HTTP, legacy era (server-everything)', () => {
  let peer: RunningPeer;
  beforeAll(async () => {
    peer = await startEverythingHttp();
  });
  afterAll(async () => {
    await peer?.close();
  });

  it('detects the legacy era, keeps the session id, and counts layers apart', async () => {
    const ch = new HttpChannel({ url: peer.url });
    expect((await detectEra(ch)).era).toBe('legacy');
    const s = new McpSession(ch, { era: 'legacy' });
    const init = await s.initialize();
    expect(init.contentType).toBe('sse');
    expect(s.sessionId).toMatch(/.+/);
    expect(s.protocolVersion).toBe('2025-11-25');
    const ok = await s.request('tools/call', { name: 'echo', arguments: { message: 'hi' } });
    expect(ok.response?.result).toMatchObject({ content: [{ type: 'text' }] });
    expect(ok.timing.firstEventUs).toBeGreaterThanOrEqual(ok.timing.sentUs);
    const bad = await s.request('tools/call', { name: 'get-sum', arguments: { a: 'x', b: 1 } });
    expect(bad.response?.result).toMatchObject({ isError: true });
    const missing = await s.request('no/such');
    expect(missing.response?.error?.code).toBe(-32601);
    // a wrong session id: HTTP 400 with an error object that lacks `id` (counted as a violation)
    const foreign = await s.request('tools/list', {}, { headers: { 'mcp-session-id': 'bogus' } });
    expect(foreign.httpStatus).toBe(400);
    expect(foreign.response?.error?.code).toBe(-32000);
    expect(foreign.violations).toContain('not_jsonrpc');
    await s.close();
    expect(s.sessionId).toBeUndefined();
    await ch.close();
  });
});

describe('HTTP, 2026-07-28 (SDK createMcpHandler)', () => {
  let peer: RunningPeer;
  beforeAll(async () => {
    peer = await startModernSdkServer();
  });
  afterAll(async () => {
    await peer?.close();
  });

  it('sends _meta and Mcp-Method/Mcp-Name; an overridden header is HTTP 400 + -32020', async () => {
    const ch = new HttpChannel({ url: peer.url });
    const probe = await detectEra(ch);
    expect(probe).toMatchObject({ era: 'modern', protocolVersion: '2026-07-28' });
    const s = new McpSession(ch, { era: 'modern' });
    const ok = await s.request('tools/call', { name: 'echo', arguments: { text: 'hi' } });
    expect(ok.httpStatus).toBe(200);
    expect(ok.response?.result).toMatchObject({ content: [{ text: 'hi' }], resultType: 'complete' });
    const wrong = await s.request('tools/call', { name: 'echo', arguments: { text: 'hi' } }, { headers: { 'mcp-method': 'tools/list' } });
    expect(wrong.httpStatus).toBe(400);
    expect(wrong.response?.error?.code).toBe(-32020);
    const noHeader = await s.request('tools/call', { name: 'echo', arguments: { text: 'hi' } }, { headers: { 'mcp-name': null } });
    expect(noHeader.httpStatus).toBe(400);
    await ch.close();
  });

  it('times an SSE answer event by event', async () => {
    const ch = new HttpChannel({ url: peer.url });
    const s = new McpSession(ch, { era: 'modern' });
    const seen: string[] = [];
    const r = await s.request(
      'tools/call',
      { name: 'progress', arguments: { steps: 3 }, _meta: { progressToken: 7 } },
      { onMessage: (m) => seen.push('method' in m ? m.method : 'response') },
    );
    expect(r.contentType).toBe('sse');
    expect(seen).toEqual(['notifications/progress', 'notifications/progress', 'notifications/progress', 'response']);
    expect(r.messages).toHaveLength(3);
    const t = r.timing.eventTimesUs!;
    expect(t).toHaveLength(4);
    expect([...t].sort((a, b) => a - b)).toEqual(t);
    expect(r.timing.responseUs).toBe(t[3]);
    await ch.close();
  });

  it('encodes non-ASCII header values with the base64 sentinel', () => {
    expect(encodeHeaderValue('echo')).toBe('echo');
    expect(encodeHeaderValue('héllo')).toBe(`=?base64?${Buffer.from('héllo').toString('base64')}?=`);
    expect(encodeHeaderValue(' padded')).toMatch(/^=\?base64\?/);
    expect(encodeHeaderValue('=?base64?abc?=')).toMatch(/^=\?base64\?PT9iYXNl/);
  });
});

describe('transport errors', () => {
  it('classifies a refused connection', async () => {
    const c = new McpHttpClient({ url: 'http://127.0.0.1:9/mcp' });
    const err = await c.post({ jsonrpc: '2.0', id: 1, method: 'ping' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).errorClass).toBe('connection_refused');
    await c.close();
  });
});

describe('stdio', () => {
  it('multiplexes concurrent requests by id over server-everything', async () => {
    const client = await McpStdioClient.spawn({ command: EVERYTHING_BIN, args: ['stdio'] });
    const s = new McpSession(new StdioChannel(client), { era: 'legacy' });
    await s.initialize();
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => s.request('tools/call', { name: 'echo', arguments: { message: `m${i}` } })));
    results.forEach((r, i) => expect(JSON.stringify(r.response?.result)).toContain(`m${i}`));
    await client.close();
  });

  const FAKE = `
const rl = require('node:readline').createInterface({ input: process.stdin });
rl.on('line', (l) => {
  const m = JSON.parse(l);
  if (m.method === 'crash') process.exit(3);
  if (m.method === 'slow') return;
  process.stdout.write('this is not JSON\\n');
  process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: 'nobody', result: {} }) + '\\n');
  process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { idType: typeof m.id } }) + '\\n');
});`;

  it('FAKE server: keeps 1 and "1" apart, reports pollution and orphans, times out, survives a crash', async () => {
    const violations: string[] = [];
    const client = await McpStdioClient.spawn({ command: process.execPath, args: ['-e', FAKE], onViolation: (k) => violations.push(k) });
    const [num, str] = await Promise.all([client.request({ jsonrpc: '2.0', id: 1, method: 'a' }), client.request({ jsonrpc: '2.0', id: '1', method: 'a' })]);
    expect(num.response).toMatchObject({ id: 1, result: { idType: 'number' } });
    expect(str.response).toMatchObject({ id: '1', result: { idType: 'string' } });
    expect(violations.filter((v) => v === 'stdout_pollution')).toHaveLength(2);
    expect(violations.filter((v) => v === 'orphan_response')).toHaveLength(2);
    const slow = await client.request({ jsonrpc: '2.0', id: 2, method: 'slow' }, { timeoutMs: 150 }).catch((e: unknown) => e);
    expect((slow as TransportError).errorClass).toBe('timeout');
    const pending = client.request({ jsonrpc: '2.0', id: 3, method: 'slow' });
    const crash = await client.request({ jsonrpc: '2.0', id: 4, method: 'crash' }).catch((e: unknown) => e);
    expect((crash as TransportError).errorClass).toBe('child_exit');
    expect(((await pending.catch((e: unknown) => e)) as TransportError).errorClass).toBe('child_exit');
    await client.close();
  });

  it('a request whose signal is already aborted is refused at once and never sent', async () => {
    const violations: string[] = [];
    const client = await McpStdioClient.spawn({ command: process.execPath, args: ['-e', FAKE], onViolation: (k) => violations.push(k) });
    try {
      const err = await client.request({ jsonrpc: '2.0', id: 1, method: 'a' }, { signal: AbortSignal.abort(), timeoutMs: 60_000 }).catch((e: unknown) => e);
      expect((err as TransportError).errorClass).toBe('aborted');
      // The FAKE server answers every line it gets with a polluting line: none came for id 1.
      expect((await client.request({ jsonrpc: '2.0', id: 2, method: 'a' })).response).toMatchObject({ id: 2 });
      expect(violations.filter((v) => v === 'stdout_pollution')).toHaveLength(1);
    } finally {
      await client.close();
    }
  });

  it('onExit says whether the exit was asked for, decided at the exit; close() resolves after it', async () => {
    const exits: [string, string | undefined, boolean][] = [];
    const onExit = (reason: string, last: string | undefined, asked: boolean) => exits.push([reason, last, asked]);
    const crashing = await McpStdioClient.spawn({ command: process.execPath, args: ['-e', `console.error('dying now'); ${FAKE}`], onExit });
    const crash = await crashing.request({ jsonrpc: '2.0', id: 1, method: 'crash' }).catch((e: unknown) => e);
    expect((crash as TransportError).errorClass).toBe('child_exit');
    // Closed right after the crash was seen, as a load run ending at once does: still not asked for.
    await crashing.close();
    expect(exits).toEqual([['server process exited (code 3)', 'dying now', false]]);
    const closed = await McpStdioClient.spawn({ command: process.execPath, args: ['-e', FAKE], onExit });
    await closed.close();
    expect(exits[1]).toEqual(['server process exited (code 0)', undefined, true]);
  });

  it('a timeout is a deadline of its own: the reference server answering 60 ms after a 30 ms timeout is too late', async () => {
    const violations: string[] = [];
    const client = await McpStdioClient.spawn({
      command: process.execPath,
      args: [MCPTAP, 'reference', '--stdio', '--log-level', 'warn'],
      onViolation: (k) => violations.push(k),
    });
    const delay = (id: number, ms: number) => ({
      jsonrpc: '2.0' as const,
      id,
      method: 'tools/call',
      params: { name: 'delay', arguments: { ms, honorCancel: false }, _meta: modernMeta() },
    });
    try {
      // The process is up and answering before anything is timed.
      expect((await client.request(delay(1, 0))).response).toMatchObject({ id: 1, result: {} });
      // The answer comes at 60 ms. A shared sweeper ticking every 100 ms let it in; a deadline does not.
      const late = await client.request(delay(2, 60), { timeoutMs: 30 }).catch((e: unknown) => e);
      expect(late).toBeInstanceOf(TransportError);
      expect((late as TransportError).errorClass).toBe('timeout');
      expect((late as TransportError).message).toBe('no response within 30 ms');
      // Its late answer is expected (not an orphan), and the client goes on.
      expect((await client.request(delay(3, 100))).response).toMatchObject({ id: 3, result: {} });
      expect(violations).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it('a command that does not exist is a transport error at spawn', async () => {
    const err = await McpStdioClient.spawn({ command: '/nonexistent/mcp-server' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).message).toMatch(/cannot start \/nonexistent\/mcp-server/);
  });
});
