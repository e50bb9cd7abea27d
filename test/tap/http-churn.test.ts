/**
 * Connection churn through the HTTP tap (issue 22, item 5): 10,000 short connections (one request
 * each, then closed) and 1,000 legacy sessions (initialize, a tool call, DELETE), with the real
 * reference server (`mcptap reference --http`, its own process) upstream. Afterwards nothing the
 * tap tracks has grown: open file descriptors, the sessions it tracks, its open socket
 * connections, the correlator's tables, requests in flight; heap after GC stays within a bound of
 * its level after the first 2,000 connections. Prints the figures (docs/reliability.md).
 */
import { describe, expect, it } from 'vitest';
import { Agent, request } from 'undici';
import { Pipeline } from '../../src/pipeline/pipeline.js';
import { startHttpTap, type HttpTap } from '../../src/tap/http-tap.js';
import { connect } from 'node:net';
import { openFds, rawToolCall } from '../../bench/hostile-clients.js';
import { heapAfterGcMiB, modernToolCallHeaders, referenceChildPerSuite } from '../helpers/http-peers.js';

const heapMiB = heapAfterGcMiB;
const ref = referenceChildPerSuite();
/** Every table empty: what the tap tracks once all its clients are gone. */
const NOTHING_TRACKED = {
  inFlight: 0,
  openSessions: 0,
  openSocketConnections: 0,
  correlatorPending: 0,
  correlatorStreams: 0,
  correlatorConnections: 0,
  correlatorProgressTokens: 0,
};

/** What the tap and its pipeline track, by table. */
function tracked(tap: HttpTap, pipeline: Pipeline): Record<string, number> {
  const c = (pipeline as unknown as { correlator: Record<string, Map<string, unknown>> & { inFlight: number } }).correlator;
  const o = (tap as unknown as { observer: { openSocketConns: Set<string> } }).observer;
  return {
    inFlight: tap.stats().inFlight,
    openSessions: tap.stats().openSessions,
    openSocketConnections: o.openSocketConns.size,
    correlatorPending: c.inFlight,
    correlatorStreams: c.streams!.size,
    correlatorConnections: c.conns!.size,
    correlatorProgressTokens: c.progressTokens!.size,
  };
}

const settle = async (tap: HttpTap, pipeline: Pipeline) => {
  for (let i = 0; i < 100 && Object.values(tracked(tap, pipeline)).some((n) => n > 0); i++) await new Promise((r) => setTimeout(r, 50));
};

/** `n` requests, each on a TCP connection of its own that the client closes once answered, `width` at a time. */
async function shortConnections(url: string, n: number, width = 16): Promise<number> {
  const u = new URL(url);
  let ok = 0;
  let next = 0;
  const one = (id: number) =>
    new Promise<void>((resolve) => {
      const s = connect(Number(u.port), u.hostname);
      let text = '';
      s.on('error', () => undefined);
      s.on('data', (b: Buffer) => {
        text += b.toString('latin1');
        if (text.startsWith('HTTP/1.1 200') && text.includes(`c${id}"`)) {
          ok++;
          s.end();
        }
      });
      s.on('close', () => resolve());
      s.write(rawToolCall(u.host, u.pathname, id, 'echo', { text: `c${id}` }));
    });
  const worker = async () => {
    while (next < n) await one(next++);
  };
  await Promise.all(Array.from({ length: width }, worker));
  return ok;
}

/** `n` legacy sessions: initialize, initialized, tools/call echo, DELETE; `width` at a time over a keep-alive pool. */
async function sessions(url: string, n: number, width = 8): Promise<number> {
  const agent = new Agent({ connections: width });
  const post = async (body: object, session?: string) => {
    const res = await request(url, {
      method: 'POST',
      dispatcher: agent,
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...(session ? { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' } : {}),
      },
      body: JSON.stringify(body),
    });
    const text = await res.body.text();
    return { status: res.statusCode, session: res.headers['mcp-session-id'] as string | undefined, text };
  };
  let deleted = 0;
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      const init = await post({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'churn', version: '1' } },
      });
      const sid = init.session;
      if (!sid) continue;
      await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, sid);
      const call = await post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: `s${i}` } } }, sid);
      if (!call.text.includes(`s${i}`)) continue;
      const del = await request(url, { method: 'DELETE', dispatcher: agent, headers: { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' } });
      await del.body.text();
      if (del.statusCode === 200) deleted++;
    }
  };
  try {
    await Promise.all(Array.from({ length: width }, worker));
  } finally {
    await agent.destroy();
  }
  return deleted;
}

describe('HTTP tap connection churn (reference server upstream)', () => {
  it('10,000 short connections and 1,000 sessions opened and deleted: fds, sessions, tables and heap return to their baseline', async () => {
    const pipeline = new Pipeline();
    let exchanges = 0;
    pipeline.subscribe((e) => {
      if (e.type === 'exchange-completed') exchanges++;
    });
    const tap = await startHttpTap({ upstream: ref().url, port: 0, pipeline });
    try {
      const fds0 = openFds();
      expect(await shortConnections(tap.url, 2000)).toBe(2000);
      await settle(tap, pipeline);
      const heapAfterWarmup = heapMiB();
      const fdsAfterWarmup = openFds();
      expect(await shortConnections(tap.url, 8000)).toBe(8000);
      await settle(tap, pipeline);
      const heapAfterConnections = heapMiB();
      const fdsAfterConnections = openFds();
      expect(tracked(tap, pipeline)).toEqual(NOTHING_TRACKED);
      expect(await sessions(tap.url, 1000)).toBe(1000);
      await settle(tap, pipeline);
      const heapAfterSessions = heapMiB();
      const fdsAfterSessions = openFds();
      const after = tracked(tap, pipeline);
      process.stdout.write(
        `churn: fds ${fds0} at start, ${fdsAfterWarmup} after 2,000 connections, ${fdsAfterConnections} after 10,000, ${fdsAfterSessions} after 1,000 sessions; ` +
          `heap+buffers after GC ${heapAfterWarmup.toFixed(1)} MiB after 2,000 connections, ${heapAfterConnections.toFixed(1)} after 10,000, ${heapAfterSessions.toFixed(1)} after 1,000 sessions; ` +
          `${exchanges} exchanges completed; tracked after: ${JSON.stringify(after)}\n`,
      );
      expect(after).toEqual(NOTHING_TRACKED);
      // One exchange per short connection; initialize and the call per session (initialized is a notification).
      expect(exchanges).toBe(10_000 + 2 * 1000);
      // fds: what the first 2,000 connections opened for good (the runner's, undici's) stays; nothing more.
      expect(fdsAfterConnections).toBeLessThanOrEqual(fdsAfterWarmup + 4);
      // The sessions run 8 at a time: the tap's keep-alive pool to the upstream may keep up to 8 more
      // sockets than the short connections needed (a fixed bound; a leak per session would be 1,000).
      expect(fdsAfterSessions).toBeLessThanOrEqual(fdsAfterWarmup + 4 + 8);
      // Heap: 8,000 more connections and 1,000 sessions leave at most a few MiB (a leak of 1 KiB each would be 9 MiB).
      expect(heapAfterConnections - heapAfterWarmup).toBeLessThan(4);
      expect(heapAfterSessions - heapAfterWarmup).toBeLessThan(4);
    } finally {
      await tap.close();
      await pipeline.close();
    }
  }, 600_000);
});
