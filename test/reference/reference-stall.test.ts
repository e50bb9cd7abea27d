/**
 * The stall option, end to end: requests are fired open-loop (on a fixed schedule, never waiting
 * for answers); requests sent inside a stall window are answered only at its end, and every answer
 * comes. Bounds are one-sided (a slow machine only makes answers later), so the assertions hold
 * under load. (An earlier "no answer lands inside a window" check was not one-sided: client and
 * server share this process, and a starved process sees an answer sent before a window only once
 * the window has opened; it failed under a loaded CI.)
 */
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { runReferenceStdio, startReferenceHttpServer, stallDelayMs } from '../../src/reference/reference-server.js';

const STALL = { everyMs: 600, forMs: 300 }; // windows [300, 600), [900, 1200), … ms after start
const FIRE_EVERY_MS = 25;
const FIRE_COUNT = 44; // ~1.1 s: covers two windows
const EDGE_SLACK_MS = 40; // an answer that left just before a window opens may land just after

interface Sample {
  sentAt: number; // ms after the anchor
  answeredAt: number;
}

function insideWindowCore(tMs: number): boolean {
  const phase = tMs % STALL.everyMs;
  return phase > STALL.everyMs - STALL.forMs + EDGE_SLACK_MS && phase < STALL.everyMs - 5;
}

/** Fires `send(i)` every FIRE_EVERY_MS without waiting; resolves with send/answer times. */
async function fireOpenLoop(anchorMs: number, send: (i: number) => Promise<void>): Promise<Sample[]> {
  const pending: Array<Promise<Sample>> = [];
  const start = Date.now();
  for (let i = 0; i < FIRE_COUNT; i++) {
    const due = start + i * FIRE_EVERY_MS;
    const wait = due - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const sentAt = Date.now() - anchorMs;
    pending.push(send(i).then(() => ({ sentAt, answeredAt: Date.now() - anchorMs })));
  }
  return Promise.all(pending);
}

function checkStalls(samples: Sample[]): void {
  expect(samples).toHaveLength(FIRE_COUNT);
  const heldOnes = samples.filter((s) => insideWindowCore(s.sentAt));
  expect(heldOnes.length).toBeGreaterThan(3);
  for (const s of heldOnes) expect(s.answeredAt).toBeGreaterThanOrEqual(s.sentAt + stallDelayMs(STALL, s.sentAt) - 5);
}

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

describe('reference server stalls', () => {
  it('over HTTP (2026-07-28 requests), answers wait out every stall window', async () => {
    const server = await startReferenceHttpServer({ port: 0, stall: STALL });
    cleanup = () => server.close();
    const samples = await fireOpenLoop(server.startedAtEpochMs, async (i) => {
      const res = await fetch(server.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': 'tools/call',
          'mcp-name': 'echo',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: i,
          method: 'tools/call',
          params: {
            name: 'echo',
            arguments: { text: `n${i}` },
            _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} },
          },
        }),
      });
      expect(await res.text()).toContain(`n${i}`);
    });
    checkStalls(samples);
  });

  it('over stdio (legacy era), answers wait out every stall window and keep their order', async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const handle = await runReferenceStdio({ stdin, stdout, stall: STALL });
    cleanup = () => handle.close();
    const waiting = new Map<number, () => void>();
    const order: number[] = [];
    let buffered = '';
    stdout.setEncoding('utf8').on('data', (chunk: string) => {
      buffered += chunk;
      for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
        const msg = JSON.parse(buffered.slice(0, nl)) as { id: number };
        buffered = buffered.slice(nl + 1);
        order.push(msg.id);
        waiting.get(msg.id)?.();
      }
    });
    const request = (id: number, method: string, params: unknown) =>
      new Promise<void>((resolve) => {
        waiting.set(id, resolve);
        stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
      });
    await request(-1, 'initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'stall', version: '0' } });
    stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
    const samples = await fireOpenLoop(handle.startedAtEpochMs, (i) => request(i, 'tools/call', { name: 'echo', arguments: { text: `n${i}` } }));
    checkStalls(samples);
    expect(order.slice(1)).toEqual([...Array(FIRE_COUNT).keys()]);
  });
});
