/**
 * A stateless SDK 1.x server (no session id) through the HTTP tap, driven by the SDK 1.x client:
 * every exchange is of the legacy era, also on TCP connections that did not carry the initialize
 * (each one is a connection of its own to the tap). Real peers: the notes server and the SDK client.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, fetch as undiciFetch } from 'undici';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Pipeline } from '../../src/pipeline/pipeline.js';
import { startHttpTap, type HttpTap } from '../../src/tap/http-tap.js';
import type { Exchange } from '../../src/model/exchange.js';
import { silentLogger } from '../../src/util/logger.js';
import { startNotesHttp, type NotesHttp } from '../helpers/notes-peer.js';

describe('HTTP tap, stateless legacy server', () => {
  let peer: NotesHttp;
  beforeAll(async () => {
    peer = await startNotesHttp(['--stateless']);
  });
  afterAll(async () => {
    await peer?.stop();
  });

  it('says legacy for every exchange, whichever TCP connection it came on', async () => {
    const pipeline = new Pipeline({ logger: silentLogger });
    const done: Exchange[] = [];
    pipeline.subscribe((e) => e.type === 'exchange-completed' && done.push(e.exchange));
    const tap: HttpTap = await startHttpTap({ upstream: peer.url, port: 0, pipeline });
    // No keep-alive: every request opens a TCP connection of its own, as clients behind proxies often do.
    const agent = new Agent({ pipelining: 0 });
    const fetchOwnConnection = ((url: string | URL, init?: RequestInit) =>
      undiciFetch(url, { ...(init as object), dispatcher: agent })) as unknown as typeof fetch;
    const client = new Client({ name: 'era-test', version: '1.0.0' });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(tap.url), { fetch: fetchOwnConnection }));
      await client.listTools();
      await client.callTool({ name: 'create_note', arguments: { title: 't', body: 'b' } });
      await client.close();
    } finally {
      await tap.close();
      await pipeline.close();
      await agent.close();
    }
    const calls = done.filter((e) => e.method !== 'initialize');
    expect(calls.map((e) => e.method).sort()).toEqual(['tools/call', 'tools/list']);
    expect(new Set(done.map((e) => e.connectionId)).size).toBeGreaterThan(1);
    expect(done.map((e) => [e.method, e.era, e.protocolVersion])).toEqual(done.map((e) => [e.method, 'legacy', expect.any(String)]));
  });
});
