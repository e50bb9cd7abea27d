/**
 * `startReferenceHttpServer` on 127.0.0.1 (ephemeral port) against the official clients: SDK 1.x
 * `StreamableHTTPClientTransport` (legacy, stateful session) and SDK 2.x with negotiation
 * (2026-07-28, stateless), both on the same endpoint; plus raw requests for what clients hide.
 * The clients get a recording `fetch` (a pass-through to the real one) so the test can see the
 * HTTP exchanges they make.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyHttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernHttpTransport } from '@modelcontextprotocol/client';
import { startReferenceHttpServer, type ReferenceHttpServer } from '../../src/reference/reference-server.js';
import { createLogger } from '../../src/util/logger.js';

interface Seen {
  method: string;
  status: number;
  contentType: string;
  body: string;
  sessionId: string | null;
}

function recordingFetch(log: Seen[]): typeof fetch {
  return async (input, init) => {
    const res = await fetch(input, init);
    log.push({
      method: init?.method ?? 'GET',
      status: res.status,
      contentType: res.headers.get('content-type') ?? '',
      body: typeof init?.body === 'string' ? init.body : '',
      sessionId: res.headers.get('mcp-session-id'),
    });
    return res;
  };
}

const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};

let server: ReferenceHttpServer;
beforeAll(async () => {
  server = await startReferenceHttpServer({ port: 0 });
});
afterAll(async () => {
  await server.close();
});

describe('reference HTTP server, legacy era (SDK 1.x client)', () => {
  it('assigns a session, answers over SSE, streams progress and ends the session with DELETE', async () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const log: Seen[] = [];
    const transport = new LegacyHttpTransport(new URL(server.url), { fetch: recordingFetch(log) });
    const client = new LegacyClient({ name: 'ref-http-v1', version: '1.0.0' });
    await client.connect(transport);
    const sessionId = transport.sessionId;
    expect(sessionId).toMatch(/[0-9a-f-]{36}/);
    expect(transport.protocolVersion).toBe('2025-11-25');

    const progress: number[] = [];
    const result = await client.callTool({ name: 'progress', arguments: { steps: 3, intervalMs: 20 } }, undefined, {
      onprogress: (p) => progress.push(p.progress),
    });
    expect(result.content).toEqual([{ type: 'text', text: 'progress: 3 steps every 20 ms' }]);
    expect(progress.length).toBeGreaterThanOrEqual(2); // see reference-stdio.test.ts: 1.x may drop the last
    const call = log.find((s) => s.body.includes('"progress"'));
    expect(call).toMatchObject({ method: 'POST', status: 200, contentType: 'text/event-stream' });

    const err = await client.callTool({ name: 'rpc-error', arguments: { code: -32042 } }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: -32042 });

    await transport.terminateSession();
    await client.close();
    expect(log.find((s) => s.method === 'DELETE')).toMatchObject({ status: 200 });
    const after = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sessionId! },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
    });
    expect(after.status).toBe(404);
  });

  it('serves the standalone GET stream of a session (headers at once; a second one gets 409) and DELETE', async () => {
    const init = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
      }),
    });
    const session = { 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-06-18' };
    await init.text();
    const get = () => fetch(server.url, { headers: { accept: 'text/event-stream', ...session }, signal: AbortSignal.timeout(5_000) });
    const first = await get(); // resolves only because the SSE headers are flushed before any event
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toBe('text/event-stream');
    expect((await get()).status).toBe(409);
    await first.body?.cancel();
    expect((await fetch(server.url, { method: 'DELETE', headers: session })).status).toBe(200);
  });

  it('notifications/cancelled in a session: a non-honouring call still answers; an honouring one ends its stream unanswered', async () => {
    const post = (body: object, sessionId?: string) =>
      fetch(server.url, {
        method: 'POST',
        signal: AbortSignal.timeout(5_000),
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(sessionId ? { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' } : {}),
        },
        body: JSON.stringify({ jsonrpc: '2.0', ...body }),
      });
    const init = await post({
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
    });
    const sid = init.headers.get('mcp-session-id')!;
    await init.text();
    await post({ method: 'notifications/initialized' }, sid);
    const kept = post({ id: 'keep', method: 'tools/call', params: { name: 'delay', arguments: { ms: 200, honorCancel: false } } }, sid);
    const stopped = post({ id: 'stop', method: 'tools/call', params: { name: 'delay', arguments: { ms: 200 } } }, sid);
    const [keptRes, stoppedRes] = await Promise.all([kept, stopped]); // SSE headers arrive at once
    for (const requestId of ['keep', 'stop']) {
      expect((await post({ method: 'notifications/cancelled', params: { requestId } }, sid)).status).toBe(202);
    }
    expect(await keptRes.text()).toContain('delayed 200 ms (cancellation ignored)');
    expect(await stoppedRes.text()).not.toContain('"result"');
  });
});

describe('reference HTTP server, 2026-07-28 era (SDK 2.x client)', () => {
  it('negotiates 2026-07-28 with server/discover, stays stateless, streams progress as SSE events', async () => {
    const log: Seen[] = [];
    const transport = new ModernHttpTransport(new URL(server.url), { fetch: recordingFetch(log) });
    const client = new ModernClient({ name: 'ref-http-v2', version: '2.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(transport);
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    expect(log[0]?.body).toContain('"server/discover"');
    expect(log.every((s) => s.sessionId === null)).toBe(true);

    const progress: number[] = [];
    await client.callTool({ name: 'progress', arguments: { steps: 10, intervalMs: 20 } }, { onprogress: (p) => progress.push(p.progress) });
    expect(progress).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    const call = log.find((s) => s.body.includes('"progress"'));
    expect(call).toMatchObject({ method: 'POST', status: 200, contentType: 'text/event-stream' });

    expect(await client.callTool({ name: 'fail', arguments: {} })).toMatchObject({ isError: true });
    const read = await client.readResource({ uri: 'mcptap://reference/info' });
    expect(JSON.parse((read.contents[0] as { text: string }).text)).toMatchObject({ era: 'modern', transport: 'http' });
    await client.close();
    expect(log.some((s) => s.method === 'DELETE' || s.method === 'GET')).toBe(false);
  });

  it('answers a Mcp-Name header that disagrees with the body with 400 and -32020', async () => {
    const res = await fetch(server.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'delay',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' }, _meta: MODERN_META } }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: number } }).error.code).toBe(-32020);
  });

  it('closing the response stream cancels the call (2026-07-28); the server keeps serving', async () => {
    const ac = new AbortController();
    const pending = fetch(server.url, {
      method: 'POST',
      signal: ac.signal,
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'progress',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 'c1',
        method: 'tools/call',
        params: { name: 'progress', arguments: { steps: 50, intervalMs: 20 }, _meta: { ...MODERN_META, progressToken: 'c1' } },
      }),
    });
    const res = await pending;
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toContain('notifications/progress');
    ac.abort();
    await reader.cancel().catch(() => undefined);
    const v2 = new ModernClient({ name: 'after-cancel', version: '1' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await v2.connect(new ModernHttpTransport(new URL(server.url)));
    expect(await v2.callTool({ name: 'echo', arguments: { text: 'still here' } })).toMatchObject({ content: [{ text: 'still here' }] });
    await v2.close();
  });

  it('a stream close stops an honouring call; a non-honouring one runs to its end (server log)', async () => {
    const lines: string[] = [];
    const logged = createLogger('debug', (l) => lines.push(l));
    const own = await startReferenceHttpServer({ port: 0, logger: logged });
    try {
      for (const [id, honorCancel] of [
        ['h', true],
        ['n', false],
      ] as const) {
        const ac = new AbortController();
        const res = await fetch(own.url, {
          method: 'POST',
          signal: ac.signal,
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': '2026-07-28',
            'mcp-method': 'tools/call',
            'mcp-name': 'progress',
          },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id,
            method: 'tools/call',
            params: { name: 'progress', arguments: { steps: 4, intervalMs: 50, honorCancel }, _meta: { ...MODERN_META, progressToken: id } },
          }),
        });
        await res.body!.getReader().read(); // the first progress event: the call is running
        ac.abort();
      }
      await until(() => lines.some((l) => l.includes('(request "n") ran on after its stream closed')));
      expect(lines.some((l) => l.includes('(request "h") stopped: cancelled'))).toBe(true);
    } finally {
      await own.close();
    }
  });

  it('a call running on after its stream closed keeps its instance: later requests with its id get only their own answer', async () => {
    const post = (params: Record<string, unknown>, signal?: AbortSignal) =>
      fetch(server.url, {
        method: 'POST',
        ...(signal ? { signal } : {}),
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': 'tools/call',
          'mcp-name': String(params.name),
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 'same',
          method: 'tools/call',
          params: { ...params, _meta: { ...MODERN_META, ...(params._meta as object) } },
        }),
      });
    const ac = new AbortController();
    const running = await post({ name: 'progress', arguments: { steps: 8, intervalMs: 25, honorCancel: false }, _meta: { progressToken: 'bg' } }, ac.signal);
    await running.body!.getReader().read(); // the first progress event: the call is running
    ac.abort();
    // While it sends its remaining progress (to nowhere), same-id calls must stay plain JSON answers of their own.
    for (let i = 0; i < 8; i++) {
      const res = await post({ name: 'delay', arguments: { ms: 20 } });
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await res.json()).toMatchObject({ id: 'same', result: { content: [{ type: 'text', text: 'delayed 20 ms' }] } });
    }
  });
});

/** Polls `cond` every 20 ms for at most 5 s. */
async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 250 && !cond(); i++) await new Promise((r) => setTimeout(r, 20));
  expect(cond()).toBe(true);
}
