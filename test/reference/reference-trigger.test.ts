/**
 * The reference server's `trigger` tool reaches every listener, stamped with when it fired:
 * a 2026-07-28 `subscriptions/listen` stream and a legacy GET stream over HTTP, and the stdio
 * connection (legacy: on stdout; modern: on its open listen). Real SDK 2.x serving underneath;
 * raw wire reads so the stamp and the subscription id are seen as sent.
 * Requires the build for the stdio part (`npx tsc -p .`).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { HttpChannel } from '../../src/client/mcp-channel.js';
import { McpSession } from '../../src/client/mcp-session.js';
import { SseDecoder } from '../../src/parse/sse-decoder.js';
import { startReferenceHttpServer, type ReferenceHttpServer } from '../../src/reference/reference-server.js';
import { RawStdioPeer, modernMeta, type Message } from './raw-stdio-peer.js';

const FIRED = 'io.mcptap/firedAtUs';

/** Reads SSE messages from a fetch body until `pred` matches one (bounded by `timeoutMs`). */
async function readUntil(body: ReadableStream<Uint8Array>, pred: (m: Message) => boolean, timeoutMs = 5_000): Promise<Message[]> {
  const reader = body.getReader();
  const decoder = new SseDecoder();
  const seen: Message[] = [];
  const timer = setTimeout(() => void reader.cancel(), timeoutMs);
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`stream ended without a match; saw ${JSON.stringify(seen)}`);
      for (const ev of decoder.push(Buffer.from(value))) {
        if (!ev.data) continue;
        const m = JSON.parse(ev.data) as Message;
        seen.push(m);
        if (pred(m)) return seen;
      }
    }
  } finally {
    clearTimeout(timer);
    reader.releaseLock();
  }
}

describe('trigger over HTTP', () => {
  let server: ReferenceHttpServer;
  beforeAll(async () => {
    server = await startReferenceHttpServer({ port: 0 });
  });
  afterAll(async () => {
    await server?.close();
  });

  const modernHeaders = (method: string, name?: string) => ({
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': method,
    ...(name ? { 'mcp-name': name } : {}),
  });

  const callTrigger = async (notification: string) => {
    const res = await fetch(server.url, {
      method: 'POST',
      headers: modernHeaders('tools/call', 'trigger'),
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'trigger', arguments: { notification }, _meta: modernMeta() } }),
    });
    const text = await res.text();
    const data = text.startsWith('{')
      ? text
      : text
          .split('\n')
          .find((l) => l.startsWith('data: {'))!
          .slice(6);
    return (JSON.parse(data) as { result: { structuredContent: { fired: { firedAtUs: number; seq: number }[] } } }).result.structuredContent;
  };

  it('2026-07-28: a subscriptions/listen stream gets tools/list_changed with the stamp the tool answered', async () => {
    const controller = new AbortController();
    const listen = await fetch(server.url, {
      method: 'POST',
      headers: modernHeaders('subscriptions/listen'),
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 'L1',
        method: 'subscriptions/listen',
        params: { notifications: { toolsListChanged: true }, _meta: modernMeta() },
      }),
      signal: controller.signal,
    });
    expect(listen.headers.get('content-type')).toMatch(/text\/event-stream/);
    const body = listen.body!;
    const acked = readUntil(body, (m) => m.method === 'notifications/subscriptions/acknowledged');
    await acked;
    const fired = await callTrigger('tools');
    const seen = await readUntil(body, (m) => m.method === 'notifications/tools/list_changed');
    controller.abort();
    const n = seen[seen.length - 1]! as { params: { _meta: Record<string, unknown> } };
    expect(n.params._meta[FIRED]).toBe(fired.fired[0]!.firedAtUs);
    expect(n.params._meta['io.modelcontextprotocol/subscriptionId']).toBe('L1');
  });

  it('legacy: the session GET stream gets resources/updated for the uri, stamped', async () => {
    const channel = new HttpChannel({ url: server.url });
    const session = new McpSession(channel, { era: 'legacy' });
    try {
      await session.initialize();
      const controller = new AbortController();
      const headers = { accept: 'text/event-stream', 'mcp-session-id': session.sessionId!, 'mcp-protocol-version': session.protocolVersion! };
      const get = await fetch(server.url, { method: 'GET', headers, signal: controller.signal });
      expect(get.status).toBe(200);
      const fired = await callTrigger('resource');
      const seen = await readUntil(get.body!, (m) => m.method === 'notifications/resources/updated');
      controller.abort();
      const n = seen[seen.length - 1]! as { params: { uri: string; _meta: Record<string, unknown> } };
      expect(n.params.uri).toBe('mcptap://reference/info');
      expect(n.params._meta[FIRED]).toBe(fired.fired[0]!.firedAtUs);
    } finally {
      await session.close();
      await channel.close();
    }
  });
});

describe('trigger over stdio', () => {
  let peer: RawStdioPeer | undefined;
  afterEach(async () => {
    await peer?.close();
    peer = undefined;
  });

  it('legacy: count 3 every 20 ms: three stamped notifications on stdout, in order, before the answer', async () => {
    peer = new RawStdioPeer();
    peer.send({ id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } });
    peer.send({ method: 'notifications/initialized' });
    await peer.response(0);
    peer.send({ id: 1, method: 'tools/call', params: { name: 'trigger', arguments: { notification: 'prompts', count: 3, intervalMs: 20 } } });
    const answer = (await peer.response(1)) as { result: { structuredContent: { fired: { firedAtUs: number; seq: number }[] } } };
    const notes = peer.lines.filter((m) => m.method === 'notifications/prompts/list_changed') as { params: { _meta: Record<string, number> } }[];
    expect(notes.map((n) => n.params._meta[FIRED])).toEqual(answer.result.structuredContent.fired.map((f) => f.firedAtUs));
    expect(notes.map((n) => n.params._meta['io.mcptap/seq'])).toEqual([1, 2, 3]);
  });

  it('2026-07-28: the notification arrives on the open subscriptions/listen, with its subscription id', async () => {
    peer = new RawStdioPeer();
    peer.send({ id: 'L', method: 'subscriptions/listen', params: { notifications: { toolsListChanged: true }, _meta: modernMeta() } });
    await peer.waitFor((m) => m.method === 'notifications/subscriptions/acknowledged');
    peer.send({ id: 2, method: 'tools/call', params: { name: 'trigger', arguments: { notification: 'tools' }, _meta: modernMeta() } });
    await peer.response(2);
    const n = (await peer.waitFor((m) => m.method === 'notifications/tools/list_changed')) as { params: { _meta: Record<string, unknown> } };
    expect(n.params._meta['io.modelcontextprotocol/subscriptionId']).toBe('L');
    expect(typeof n.params._meta[FIRED]).toBe('number');
  });
});
