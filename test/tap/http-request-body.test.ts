/**
 * Request bodies through the HTTP tap. A body that arrived with its headers is forwarded as one
 * buffer; a body still arriving is streamed upstream as it comes, and nothing waits for it to
 * buffer. Either way the upstream gets the same bytes, the client the same answer, and the
 * recording the request. The reference MCP server is the upstream where the answers are its own;
 * an in-process node:http upstream (a fake) where the test must see when body bytes reach it,
 * which no real MCP server reports.
 */
import { describe, expect, it } from 'vitest';
import { request, type IncomingMessage } from 'node:http';
import { Pipeline } from '../../src/pipeline/pipeline.js';
import { startHttpTap, type HttpTap } from '../../src/tap/http-tap.js';
import { systemClock } from '../../src/util/clock.js';
import type { TapEvent } from '../../src/model/events.js';
import type { Exchange } from '../../src/model/exchange.js';
import { freePort, listenLocal, referenceServerPerSuite } from '../helpers/http-peers.js';

const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
const HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'tools/call',
  'mcp-name': 'echo',
};
const echoCall = (id: number, text = 'x') =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text }, _meta: META } });

interface Answer {
  status: number;
  body: string;
  /** When the last body part was handed to the socket (µs, the tap's clock). */
  sentUs: number;
}

type Send = 'whole' | 'split' | 'chunked';

/**
 * A POST sent whole (headers and body in one write), split (headers, then the body in two parts, a
 * pause between each), or chunked (two chunks, a pause between). `between` runs after the first part.
 */
function post(url: string, body: string, how: Send, between: () => Promise<void> = pause): Promise<Answer> {
  const u = new URL(url);
  const b = Buffer.from(body);
  const headers: Record<string, string> = { ...HEADERS, ...(how === 'chunked' ? {} : { 'content-length': String(b.length) }) };
  return new Promise((resolve, reject) => {
    let sentUs = 0;
    const req = request({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers }, (res: IncomingMessage) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(parts).toString(), sentUs }));
    });
    req.on('error', reject);
    if (how === 'whole') {
      sentUs = systemClock.nowUs();
      req.end(b);
      return;
    }
    const half = b.length >> 1;
    void (async () => {
      req.flushHeaders();
      await pause();
      req.write(b.subarray(0, half));
      await between();
      sentUs = systemClock.nowUs();
      req.end(b.subarray(half));
    })().catch(reject);
  });
}

function pause(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 30));
}

async function tapFor(upstream: string): Promise<{ tap: HttpTap; events: TapEvent[]; close(): Promise<void> }> {
  const pipeline = new Pipeline();
  const events: TapEvent[] = [];
  pipeline.subscribe((e) => events.push(e));
  const tap = await startHttpTap({ upstream, port: 0, pipeline });
  return {
    tap,
    events,
    close: async () => {
      await tap.close();
      await pipeline.close();
    },
  };
}

const completed = (events: TapEvent[], id: number): Exchange | undefined =>
  events.flatMap((e) => (e.type === 'exchange-completed' ? [e.exchange] : [])).find((x) => x.id === id);

describe('HTTP tap, request bodies', () => {
  const ref = referenceServerPerSuite();

  it('whole, split and chunked bodies: same answers as direct; each request recorded, stamped once its body was in', async () => {
    const t = await tapFor(ref().url);
    try {
      const cases: Array<[Send, number]> = [
        ['whole', 1],
        ['split', 2],
        ['chunked', 3],
      ];
      for (const [how, id] of cases) {
        const body = echoCall(id, `${how} ${'y'.repeat(2000)}`);
        const direct = await post(ref().url, body, how);
        const via = await post(t.tap.url, body, how);
        expect(via.status, how).toBe(200);
        expect(via.body, how).toBe(direct.body);
        await expect.poll(() => completed(t.events, id), { timeout: 5_000 }).toBeDefined();
        const ex = completed(t.events, id)!;
        expect(ex, how).toMatchObject({ outcome: 'ok', method: 'tools/call' });
        // The request is stamped when its last byte arrived, not when its headers did.
        expect(ex.startUs, how).toBeGreaterThanOrEqual(via.sentUs);
      }
      expect(t.tap.stats()).toMatchObject({ requests: 3, inFlight: 0, upstreamFailures: 0 });
    } finally {
      await t.close();
    }
  });

  it('a body still arriving streams: the upstream has its first part before the client sends the rest (in-process upstream)', async () => {
    let firstPart: () => void = () => undefined;
    const upstreamGotFirstPart = new Promise<void>((resolve) => (firstPart = resolve));
    let ended = false;
    const peer = await listenLocal((req, res) => {
      const parts: Buffer[] = [];
      req.on('data', (c: Buffer) => {
        parts.push(c);
        firstPart();
      });
      req.on('end', () => {
        ended = true;
        const id = (JSON.parse(Buffer.concat(parts).toString()) as { id: number }).id;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id, result: { content: [] } }));
      });
    });
    const t = await tapFor(peer.url);
    try {
      const waitForUpstream = async () => {
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('the first part never reached the upstream')), 5_000)));
        await Promise.race([upstreamGotFirstPart, timeout]).finally(() => clearTimeout(timer));
        expect(ended).toBe(false);
      };
      const a = await post(t.tap.url, echoCall(4, 'z'.repeat(5000)), 'split', waitForUpstream);
      expect(a.status).toBe(200);
      expect(JSON.parse(a.body)).toMatchObject({ id: 4 });
      await expect.poll(() => completed(t.events, 4), { timeout: 5_000 }).toMatchObject({ outcome: 'ok', method: 'tools/call' });
    } finally {
      await t.close();
      await peer.close();
    }
  });

  it('upstream down while the body is still arriving: 502 once the body is in, with its id; recorded', async () => {
    const t = await tapFor(`http://127.0.0.1:${await freePort()}/mcp`);
    try {
      for (const [how, id] of [
        ['split', 5],
        ['whole', 6],
      ] as Array<[Send, number]>) {
        const a = await post(t.tap.url, echoCall(id), how);
        expect(a.status, how).toBe(502);
        expect(JSON.parse(a.body), how).toMatchObject({ id, error: { code: -32603 } });
        expect(completed(t.events, id)?.transport?.errorClass, how).toBe('connection_refused');
      }
      expect(t.tap.stats()).toMatchObject({ upstreamFailures: 2, inFlight: 0 });
    } finally {
      await t.close();
    }
  });
});
