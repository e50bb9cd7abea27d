/**
 * Hostile and broken clients against the HTTP tap, over raw sockets on loopback, with the real
 * reference server (`mcptap reference --http`, its own process) upstream: bad request lines,
 * oversized heads and bodies, invalid chunked framing, pipelining, 1,000 slowloris connections and
 * a client that never reads. Each case: the hostile client gets the documented answer (400, 413,
 * 431, 408, or a cut connection), and the tap goes on serving a well-behaved client, with nothing
 * left in flight and memory bounded. Durations are bounded (the slowloris case by a short
 * --header-timeout); nothing here asserts a speed.
 */
import { describe, expect, it } from 'vitest';
import { Pipeline } from '../../src/pipeline/pipeline.js';
import { startHttpTap, type HttpTap, type HttpTapOptions } from '../../src/tap/http-tap.js';
import { nonReader, openFds, rawExchange, rawToolCall, slowloris } from '../../bench/hostile-clients.js';
import { heapAfterGcMiB, modernToolCallHeaders, referenceChildPerSuite } from '../helpers/http-peers.js';

const ref = referenceChildPerSuite();

async function withTap(opts: Partial<HttpTapOptions>, body: (tap: HttpTap, pipeline: Pipeline) => Promise<void>): Promise<void> {
  const pipeline = new Pipeline();
  const tap = await startHttpTap({ upstream: ref().url, port: 0, pipeline, ...opts });
  try {
    await body(tap, pipeline);
  } finally {
    await tap.close();
    await pipeline.close();
  }
}

/** A well-behaved client: `n` sequential echo calls through the tap; returns how many came back right. */
async function goodCalls(url: string, n: number): Promise<number> {
  let ok = 0;
  for (let i = 0; i < n; i++) {
    const res = await fetch(url, {
      method: 'POST',
      headers: modernToolCallHeaders('echo'),
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: i,
        method: 'tools/call',
        params: {
          name: 'echo',
          arguments: { text: `good ${i}` },
          _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} },
        },
      }),
    });
    const text = await res.text();
    if (res.status === 200 && text.includes(`good ${i}`)) ok++;
  }
  return ok;
}

const hostOf = (tap: HttpTap) => `127.0.0.1:${tap.port}`;
const waitFor = async (cond: () => boolean, ms: number) => {
  for (const end = Date.now() + ms; !cond() && Date.now() < end;) await new Promise((r) => setTimeout(r, 50));
  return cond();
};

describe('HTTP tap against hostile clients (raw sockets, reference server upstream)', () => {
  it('bad request lines and malformed heads: 400 and closed; the tap goes on serving', async () => {
    await withTap({}, async (tap) => {
      const bad = [
        'GARBAGE\r\n\r\n',
        'GET\r\n\r\n',
        'POST /mcp HTTP/9.9\r\nHost: x\r\n\r\n',
        '\u0000\u0001\u0002\u00ff binary\r\n\r\n',
        `POST /mcp HTTP/1.1\r\nHost: ${hostOf(tap)}\r\nNo colon here\r\n\r\n`,
        `POST /mcp HTTP/1.1\r\nHost: ${hostOf(tap)}\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello`,
        `POST /mcp HTTP/1.1\r\nHost: ${hostOf(tap)}\r\nContent-Length: -1\r\n\r\n`,
      ];
      for (const b of bad) {
        const r = await rawExchange(tap.url, b);
        expect(r.text, JSON.stringify(b)).toMatch(/^HTTP\/1\.1 400 /);
        expect(r.closedByPeer).toBe(true);
      }
      expect(tap.stats().badRequests).toBe(bad.length);
      expect(await goodCalls(tap.url, 5)).toBe(5);
      expect(tap.stats().inFlight).toBe(0);
    });
  });

  it('oversized head: 431; oversized body (declared or chunked): 413; both closed, the tap goes on serving', async () => {
    await withTap({ maxBodyBytes: 64 * 1024 }, async (tap) => {
      const big = await rawExchange(tap.url, `POST /mcp HTTP/1.1\r\nHost: ${hostOf(tap)}\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
      expect(big.text).toMatch(/^HTTP\/1\.1 431 /);
      const declared = await rawExchange(
        tap.url,
        `POST /mcp HTTP/1.1\r\nHost: ${hostOf(tap)}\r\nContent-Type: application/json\r\nContent-Length: 10000000\r\n\r\n{`,
      );
      expect(declared.text).toMatch(/^HTTP\/1\.1 413 /);
      expect(declared.closedByPeer).toBe(true);
      const chunk = 'x'.repeat(16 * 1024);
      const chunked = await rawExchange(
        tap.url,
        `POST /mcp HTTP/1.1\r\nHost: ${hostOf(tap)}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n` +
          `${chunk.length.toString(16)}\r\n${chunk}\r\n`.repeat(8),
      );
      expect(chunked.text).toMatch(/^HTTP\/1\.1 413 /);
      expect(chunked.closedByPeer).toBe(true);
      expect(await goodCalls(tap.url, 5)).toBe(5);
      expect(await waitFor(() => tap.stats().inFlight === 0, 5000)).toBe(true);
    });
  });

  it('invalid chunked framing: the connection is answered 400 or cut, the upstream request aborted; the tap goes on serving', async () => {
    await withTap({}, async (tap) => {
      for (const framing of ['ZZ\r\nhello\r\n0\r\n\r\n', '5\r\nhelloXX0\r\n\r\n', '-1\r\n\r\n', `${'f'.repeat(20)}\r\n`]) {
        const r = await rawExchange(
          tap.url,
          `POST /mcp HTTP/1.1\r\nHost: ${hostOf(tap)}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n${framing}`,
        );
        expect(r.closedByPeer, framing).toBe(true);
        expect(r.text === '' || /^HTTP\/1\.1 (400|502) /.test(r.text), r.text).toBe(true);
      }
      expect(await waitFor(() => tap.stats().inFlight === 0, 5000)).toBe(true);
      expect(await goodCalls(tap.url, 5)).toBe(5);
    });
  });

  it('HTTP/1.1 pipelining: three requests in one write get three answers, in order', async () => {
    await withTap({}, async (tap) => {
      const host = hostOf(tap);
      const reqs = [1, 2, 3].map((id) => rawToolCall(host, '/mcp', id, 'echo', { text: `pipelined-${id}` }));
      const last = Buffer.from(`GET /nowhere HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
      const r = await rawExchange(tap.url, Buffer.concat([...reqs, last]), 10_000);
      const statuses = [...r.text.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => m[1]);
      expect(statuses.slice(0, 3)).toEqual(['200', '200', '200']);
      const order = [...r.text.matchAll(/pipelined-(\d)/g)].map((m) => m[1]);
      expect(order).toEqual(['1', '2', '3']);
      expect(statuses).toHaveLength(4);
    });
  });

  it('1,000 slowloris connections (a byte a second): other clients are served throughout; each is answered 408 and closed at --header-timeout; fds return', async () => {
    await withTap({ headersTimeoutMs: 2000 }, async (tap) => {
      const fdsBefore = openFds();
      const slow = await slowloris(tap.url, 1000);
      try {
        expect(slow.open()).toBe(1000);
        // Served while all 1,000 hold their connections open.
        expect(await goodCalls(tap.url, 20)).toBe(20);
        // Timed out by the tap: 2 s, checked every 500 ms; bounded wait, generous for a busy machine.
        expect(await waitFor(() => slow.open() === 0, 20_000)).toBe(true);
        expect(slow.answered408()).toBeGreaterThan(900);
        expect(tap.stats().badRequests).toBeGreaterThanOrEqual(1000);
        expect(await goodCalls(tap.url, 5)).toBe(5);
      } finally {
        slow.stop();
      }
      expect(await waitFor(() => openFds() <= fdsBefore + 10, 5000)).toBe(true);
    });
  }, 60_000);

  it('a client that never reads 4 x 8 MiB answers: other clients are served, the tap buffers a bounded amount, and all is freed when it goes', async () => {
    await withTap({}, async (tap) => {
      const host = hostOf(tap);
      const before = heapAfterGcMiB();
      const reader = await nonReader(
        tap.url,
        [1, 2, 3, 4].map((id) => rawToolCall(host, '/mcp', id, 'payload', { kb: 8192 })),
      );
      try {
        // The upstream's answers stop at the tap's backpressure, not in its memory.
        await new Promise((r) => setTimeout(r, 1500));
        expect(await goodCalls(tap.url, 20)).toBe(20);
        const grew = heapAfterGcMiB() - before;
        process.stdout.write(`non-reading client: the tap's heap and buffers grew ${grew.toFixed(1)} MiB with 32 MiB of answers unread\n`);
        expect(grew).toBeLessThan(16);
        expect(tap.stats().inFlight).toBeGreaterThanOrEqual(1);
      } finally {
        reader.stop();
      }
      expect(await waitFor(() => tap.stats().inFlight === 0, 10_000)).toBe(true);
      expect(await goodCalls(tap.url, 5)).toBe(5);
    });
  });
});
