/**
 * The 2026-07-28 era through the HTTP tap, with real peers: the reference server (the SDK 2.x
 * `createMcpHandler` with `@modelcontextprotocol/node`) and the SDK 2.x client. Answers through
 * the tap deep-equal the direct run; a request whose `Mcp-Method` header disagrees with its body
 * gets the upstream's 400 / -32020 unchanged, recorded as HTTP 400 + JSON-RPC -32020, and the
 * tap's own header check flags it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { startReferenceHttpServer, type ReferenceHttpServer } from '../../src/reference/reference-server.js';
import { Pipeline } from '../../src/pipeline/pipeline.js';
import { startHttpTap, type HttpTap } from '../../src/tap/http-tap.js';
import type { TapEvent } from '../../src/model/events.js';
import type { Exchange } from '../../src/model/exchange.js';
import { silentLogger } from '../../src/util/logger.js';

const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };

/** A Standard Schema accepting anything: the result schema `request()` wants for a non-spec method. */
const ANY_RESULT = { '~standard': { version: 1, vendor: 'mcptap-test', validate: (value: unknown) => ({ value }) } };

async function converse(url: string): Promise<{ answers: unknown[]; progress: number[] }> {
  const client = new Client({ name: 'tap-test-v2', version: '2.0.0' }, { versionNegotiation: { mode: 'auto' } });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const answers: unknown[] = [client.getNegotiatedProtocolVersion()];
  const progress: number[] = [];
  answers.push((await client.listTools()).tools.map((t) => t.name));
  answers.push(await client.callTool({ name: 'echo', arguments: { text: 'héllo ✓' } }));
  answers.push(await client.callTool({ name: 'progress', arguments: { steps: 4, intervalMs: 20 } }, { onprogress: (p) => progress.push(p.progress) }));
  answers.push(await client.callTool({ name: 'fail', arguments: { message: 'nope' } }));
  answers.push(await client.callTool({ name: 'echo', arguments: { text: 42 } }));
  answers.push(
    await client
      .request({ method: 'no/such-method', params: {} } as never, ANY_RESULT as never)
      .catch((e: { code?: number; message?: string }) => ({ code: e.code, message: e.message })),
  );
  await client.close();
  return { answers, progress };
}

async function mismatched(url: string): Promise<{ status: number; contentType: string | null; body: string }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/list',
      'mcp-name': 'echo',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 'mm-1', method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' }, _meta: META } }),
  });
  return { status: res.status, contentType: res.headers.get('content-type'), body: await res.text() };
}

describe('HTTP tap, 2026-07-28 era, SDK 2.x server and client', () => {
  let server: ReferenceHttpServer;
  let tap: HttpTap;
  let pipeline: Pipeline;
  const events: TapEvent[] = [];
  const completed = () => events.filter((e) => e.type === 'exchange-completed').map((e) => (e as { exchange: Exchange }).exchange);

  beforeAll(async () => {
    server = await startReferenceHttpServer({ port: 0 });
    pipeline = new Pipeline({ logger: silentLogger });
    pipeline.subscribe((e) => events.push(e));
    tap = await startHttpTap({ upstream: server.url, port: 0, pipeline });
  });
  afterAll(async () => {
    await tap?.close();
    await pipeline?.close();
    await server?.close();
  });

  it('answers deep-equal the direct run; each exchange classified apart', async () => {
    const direct = await converse(server.url);
    const before = completed().length;
    const viaTap = await converse(tap.url);
    expect(viaTap).toEqual(direct);
    expect(direct.answers[0]).toBe('2026-07-28');

    const done = completed().slice(before);
    const of = (m: string, t?: string) => done.filter((e) => e.method === m && (t === undefined || e.target === t));
    expect(of('server/discover')[0]).toMatchObject({ outcome: 'ok', era: 'modern' });
    expect(of('tools/list')[0]).toMatchObject({ outcome: 'ok', era: 'modern', protocolVersion: '2026-07-28' });
    const echoes = of('tools/call', 'echo');
    expect(echoes.map((e) => e.outcome)).toEqual(['ok', 'tool_error']);
    const prog = of('tools/call', 'progress')[0]!;
    expect(prog.outcome).toBe('ok');
    expect(prog.progress.map((p) => p.progress)).toEqual([1, 2, 3, 4]);
    expect(prog.transport?.eventTimesUs).toHaveLength(5); // 4 progress events and the response
    expect(prog.transport?.httpStatus).toBe(200);
    expect(of('tools/call', 'fail')[0]).toMatchObject({ outcome: 'tool_error', isError: true });
    const unknown = of('no/such-method')[0]!;
    expect(unknown).toMatchObject({ outcome: 'jsonrpc_error', errorCode: -32601 });
    expect(unknown.transport?.httpStatus).toBe(404);
    // Stateless: no session; exchanges live on the client's TCP connection(s).
    for (const e of done) expect(e.connectionId).toMatch(/^http:conn-\d+$/);
    for (const e of done) expect(e.sessionId).toBeUndefined();
    const opened = new Set(
      events.filter((e) => e.type === 'connection-opened').map((e) => (e as { connection: { connectionId: string } }).connection.connectionId),
    );
    for (const e of done) expect(opened.has(e.connectionId)).toBe(true);
    expect(events.filter((e) => e.type === 'anomaly')).toEqual([]);
  });

  it('Mcp-Method disagreeing with the body: 400/-32020 passes unchanged, recorded as such, flagged', async () => {
    const direct = await mismatched(server.url);
    expect(direct.status).toBe(400);
    const mark = events.length;
    const viaTap = await mismatched(tap.url);
    expect(viaTap).toEqual(direct);
    const fresh = events.slice(mark);
    const ex = fresh.find((e) => e.type === 'exchange-completed')!;
    expect(ex).toBeDefined();
    const exchange = (ex as { exchange: Exchange }).exchange;
    expect(exchange).toMatchObject({ method: 'tools/call', outcome: 'jsonrpc_error', errorCode: -32020 });
    expect(exchange.transport?.httpStatus).toBe(400);
    const flagged = fresh.filter((e) => e.type === 'anomaly' && e.kind === 'header_mismatch');
    expect(flagged.length).toBeGreaterThanOrEqual(1);
    expect(flagged.map((e) => (e as { detail: string }).detail).join('\n')).toMatch(/Mcp-Method "tools\/list" != method "tools\/call"/);
    expect((flagged[0] as { exchangeKey?: string }).exchangeKey).toBe(exchange.key);
    expect(tap.stats().inFlight).toBe(0);
  });

  it('a 404 for a session id ends that session', async () => {
    const mark = events.length;
    const res = await fetch(tap.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': 'no-such-session',
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 'gone-1', method: 'tools/list', params: {} }),
    });
    expect(res.status).toBe(404);
    await res.text();
    const fresh = events.slice(mark);
    expect(fresh.find((e) => e.type === 'connection-opened')).toMatchObject({
      connection: { connectionId: 'http:no-such-session', sessionId: 'no-such-session' },
    });
    expect(fresh.find((e) => e.type === 'connection-closed')).toMatchObject({ connectionId: 'http:no-such-session', reason: 'session_not_found' });
    const ex = fresh.find((e) => e.type === 'exchange-completed');
    expect(ex?.type === 'exchange-completed' && ex.exchange.transport?.httpStatus).toBe(404);
  });

  it('closing the tap closes every connection it opened', async () => {
    await tap.close();
    const opened = events.filter((e) => e.type === 'connection-opened').map((e) => (e as { connection: { connectionId: string } }).connection.connectionId);
    await new Promise((r) => setTimeout(r, 20));
    const closed = new Set(events.filter((e) => e.type === 'connection-closed').map((e) => (e as { connectionId: string }).connectionId));
    expect(opened.length).toBeGreaterThan(0);
    for (const id of opened) expect(closed.has(id)).toBe(true);
  });
});
