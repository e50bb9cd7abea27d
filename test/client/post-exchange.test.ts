/**
 * How a POST ends when it does not end normally (src/client/post-exchange.ts): the caller's abort
 * signal before and during an SSE answer, the inactivity timeout, and a throwing onMessage
 * callback, each a TransportError of the right class; the connection pool stays usable after.
 * Peer: a real 2026-07-28 SDK server whose `progress` tool streams one event per 5 ms; for the
 * timeout, a FAKE server (raw TCP, in process) that accepts and never answers, a fault no real
 * MCP server produces on demand.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpChannel, McpHttpClient, McpSession, TransportError } from '../../src/client/index.js';
import { startModernSdkServer, type RunningPeer } from './peers.js';

const slowStream = (steps: number) => ({ name: 'progress', arguments: { steps }, _meta: { progressToken: 1 } });

async function failure(p: Promise<unknown>): Promise<TransportError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TransportError);
  return err as TransportError;
}

describe('POST that does not end normally (SDK server, SSE answers)', () => {
  let peer: RunningPeer;
  let ch: HttpChannel;
  let s: McpSession;
  beforeAll(async () => {
    peer = await startModernSdkServer();
    ch = new HttpChannel({ url: peer.url, connections: 2 });
    s = new McpSession(ch, { era: 'modern' });
  });
  afterAll(async () => {
    await ch?.close();
    await peer?.close();
  });

  it('an already aborted signal fails before any answer', async () => {
    const err = await failure(s.request('tools/call', slowStream(1), { signal: AbortSignal.abort() }));
    expect(err.errorClass).toBe('aborted');
    expect(err.message).toMatch(/^POST /);
  });

  it('aborting in the middle of the stream stops reading it', async () => {
    const ac = new AbortController();
    let events = 0;
    const onMessage = () => {
      if (++events === 2) ac.abort();
    };
    const err = await failure(s.request('tools/call', slowStream(40), { signal: ac.signal, onMessage }));
    expect(err.errorClass).toBe('aborted');
    expect(err.message).toMatch(/^reading the response of POST /);
    expect(events).toBe(2);
  });

  it('FAKE silent server: no answer within the timeout is a timeout', async () => {
    const sockets: net.Socket[] = [];
    const silent = net.createServer((sock) => void sockets.push(sock));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const c = new McpHttpClient({ url: `http://127.0.0.1:${(silent.address() as net.AddressInfo).port}/mcp`, timeoutMs: 50 });
    try {
      // undici checks these timeouts on a coarse (~0.5 s) tick: this takes up to about a second.
      const err = await failure(c.post({ jsonrpc: '2.0', id: 1, method: 'ping' }));
      expect(err.errorClass).toBe('timeout');
      expect(err.message).toMatch(/^POST /);
    } finally {
      await c.close();
      for (const sock of sockets) sock.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it('an onMessage callback that throws ends the request as a transport error', async () => {
    const onMessage = () => {
      throw new Error('callback broke');
    };
    const err = await failure(s.request('tools/call', slowStream(3), { onMessage }));
    expect(err.errorClass).toBe('other');
    expect(err.message).toContain('callback broke');
  });

  it('the pool still works afterwards, for JSON and SSE answers', async () => {
    const json = await s.request('tools/call', { name: 'echo', arguments: { text: 'after' } });
    expect(json.contentType).toBe('json');
    expect(json.response?.result).toMatchObject({ content: [{ text: 'after' }] });
    const sse = await s.request('tools/call', slowStream(2));
    expect(sse.contentType).toBe('sse');
    expect(sse.messages).toHaveLength(2);
    expect(sse.response?.result).toMatchObject({ content: [{ text: 'done 2' }] });
  });
});
