/**
 * Bad input and failing peers. Each case: the client gets a well-formed HTTP answer (or, once the
 * answer had begun, a cut stream), the tap keeps serving, and the pipeline records the case with
 * its class. Invalid JSON and a wrong content type go to the real reference server (its answers are
 * its own); a hanging, resetting or flooding upstream is an in-process fake, because no real MCP
 * server can be told to hang, reset mid-stream or outrun its client.
 */
import { describe, expect, it } from 'vitest';
import { request } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Pipeline } from '../../src/pipeline/pipeline.js';
import { startHttpTap, type HttpTap } from '../../src/tap/http-tap.js';
import type { TapEvent, AnomalySeen } from '../../src/model/events.js';
import type { Exchange } from '../../src/model/exchange.js';
import { freePort, listenLocal, referenceServerPerSuite } from '../helpers/http-peers.js';

const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
const MODERN_HEADERS = { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'echo' };
const echoCall = (id: number | string) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' }, _meta: META } });

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /** The response was cut (connection reset after the headers). */
  cut: boolean;
}

/** A raw POST (node:http, so the test controls headers and reading speed). */
function post(
  url: string,
  body: string | Buffer | undefined,
  headers: Record<string, string>,
  opts: { chunked?: boolean; readDelayMs?: number } = {},
): Promise<Answer> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname + u.search,
        method: 'POST',
        headers: { ...headers, ...(body !== undefined && !opts.chunked ? { 'content-length': String(Buffer.byteLength(body)) } : {}) },
      },
      (res) => {
        const parts: Buffer[] = [];
        let cut = false;
        const read = () => {
          res.on('data', (c: Buffer) => parts.push(c));
          res.on('aborted', () => (cut = true));
          res.on('error', () => (cut = true));
          res.on('close', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(parts), cut: cut || !res.complete }));
          res.resume();
        };
        if (opts.readDelayMs) {
          res.pause();
          setTimeout(read, opts.readDelayMs);
        } else read();
      },
    );
    req.on('error', reject);
    if (opts.chunked && body !== undefined) {
      const b = Buffer.from(body);
      const step = 64 * 1024;
      for (let i = 0; i < b.length; i += step) req.write(b.subarray(i, i + step));
      req.end();
    } else req.end(body);
  });
}

function json(a: Answer): { id?: unknown; error?: { code: number; message: string } } {
  return JSON.parse(a.body.toString()) as { id?: unknown; error?: { code: number; message: string } };
}

async function tapFor(
  upstream: string,
  extra: Partial<Parameters<typeof startHttpTap>[0]> = {},
): Promise<{ tap: HttpTap; events: TapEvent[]; close(): Promise<void> }> {
  const pipeline = new Pipeline();
  const events: TapEvent[] = [];
  pipeline.subscribe((e) => events.push(e));
  const tap = await startHttpTap({ upstream, port: 0, pipeline, ...extra });
  return {
    tap,
    events,
    close: async () => {
      await tap.close();
      await pipeline.close();
    },
  };
}

const completedIn = (events: TapEvent[]): Exchange[] => events.flatMap((e) => (e.type === 'exchange-completed' ? [e.exchange] : []));
const anomaliesIn = (events: TapEvent[]): AnomalySeen[] => events.flatMap((e) => (e.type === 'anomaly' ? [e] : []));

describe('HTTP tap, bad input and failing upstreams', () => {
  const ref = referenceServerPerSuite();

  it('invalid JSON body and wrong content type: the upstream answer passes unchanged, recorded with its class', async () => {
    const t = await tapFor(ref().url);
    try {
      const bad = '{"jsonrpc":"2.0","id":1,"method":"tools/call",';
      const direct = await post(ref().url, bad, { ...MODERN_HEADERS, 'content-type': 'application/json' });
      const via = await post(t.tap.url, bad, { ...MODERN_HEADERS, 'content-type': 'application/json' });
      expect(via.status).toBe(direct.status);
      expect(via.body.toString()).toBe(direct.body.toString());
      expect(json(via).error?.code).toBe(-32700);
      expect(anomaliesIn(t.events).map((a) => a.kind)).toContain('invalid_message');
      expect(t.events.some((e) => e.type === 'exchange-orphaned' && e.exchange.errorCode === -32700)).toBe(true);

      const mark = t.events.length;
      const wrongType = await post(t.tap.url, echoCall(7), { ...MODERN_HEADERS, 'content-type': 'text/plain' });
      const wrongDirect = await post(ref().url, echoCall(7), { ...MODERN_HEADERS, 'content-type': 'text/plain' });
      expect(wrongType.status).toBe(415);
      expect(wrongType.body.toString()).toBe(wrongDirect.body.toString());
      // The error body's id is null (the server would not read the body): it answers this POST's request.
      expect(json(wrongType)).toMatchObject({ id: null, error: { code: expect.any(Number) } });
      const ex = completedIn(t.events.slice(mark)).find((e) => e.id === 7)!;
      expect(ex).toMatchObject({ outcome: 'jsonrpc_error', method: 'tools/call', errorCode: json(wrongType).error!.code });
      expect(ex.transport).toMatchObject({ httpStatus: 415 });
      expect(t.events.slice(mark).some((e) => e.type === 'exchange-orphaned')).toBe(false);

      const ok = await post(t.tap.url, echoCall(8), { ...MODERN_HEADERS, 'content-type': 'application/json' });
      expect(ok.status).toBe(200);
      expect(t.tap.stats().inFlight).toBe(0);
    } finally {
      await t.close();
    }
  });

  it('oversized body: 413 from the tap (declared length and chunked), never forwarded, recorded', async () => {
    let reached = 0;
    const peer = await listenLocal((req, res) => {
      reached++;
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":1,"result":{}}'));
    });
    const t = await tapFor(peer.url, { maxBodyBytes: 100_000 });
    try {
      const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x'.repeat(300_000) } } });
      const declared = await post(t.tap.url, big, { 'content-type': 'application/json' });
      expect(declared.status).toBe(413);
      expect(json(declared).error?.message).toMatch(/max-body/);
      const chunked = await post(t.tap.url, big, { 'content-type': 'application/json' }, { chunked: true });
      expect([413]).toContain(chunked.status);
      expect(anomaliesIn(t.events).filter((a) => /413/.test(a.detail))).toHaveLength(2);
      expect(reached).toBeLessThanOrEqual(1); // the chunked one may have started upstream; it was aborted
      const ok = await post(t.tap.url, '{"jsonrpc":"2.0","id":1,"method":"ping"}', { 'content-type': 'application/json' });
      expect(ok.status).toBe(200);
      expect(t.tap.stats().rejected).toBe(2);
    } finally {
      await t.close();
      await peer.close();
    }
  });

  it('upstream down: 502 with a JSON-RPC error for the same id; recorded connection_refused; the tap keeps serving', async () => {
    const port = await freePort();
    const t = await tapFor(`http://127.0.0.1:${port}/mcp`);
    try {
      for (const id of [1, 'two']) {
        const a = await post(t.tap.url, echoCall(id), { ...MODERN_HEADERS, 'content-type': 'application/json' });
        expect(a.status).toBe(502);
        expect(a.headers['content-type']).toBe('application/json');
        expect(json(a)).toMatchObject({ id, error: { code: -32603 } });
        const ex = completedIn(t.events).find((e) => e.id === id)!;
        expect(ex.outcome).toBe('transport_error');
        expect(ex.transport?.errorClass).toBe('connection_refused');
      }
      expect(t.tap.stats()).toMatchObject({ upstreamFailures: 2, inFlight: 0 });
    } finally {
      await t.close();
    }
  });

  it('odd but valid upstream answers pass: a non-ASCII reason phrase, and 103 Early Hints before the response', async () => {
    const answer = (id: unknown) => JSON.stringify({ jsonrpc: '2.0', id, result: { content: [] } });
    const peer = await listenLocal((req: IncomingMessage, res: ServerResponse) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c));
      req.on('end', () => {
        const id = (JSON.parse(body) as { id: unknown }).id;
        if (id === 'hints') res.writeEarlyHints({ link: '</style.css>; rel=preload; as=style' });
        // 'O\u00e9K' goes out as latin-1 bytes; undici reads them back as U+FFFD, which node:http cannot send on.
        res.writeHead(200, id === 'reason' ? 'O\u00e9K' : 'OK', { 'content-type': 'application/json' });
        res.end(answer(id));
      });
    });
    const t = await tapFor(peer.url, { responseTimeoutMs: 5000 });
    try {
      for (const id of ['reason', 'hints']) {
        const a = await post(t.tap.url, echoCall(id), { ...MODERN_HEADERS, 'content-type': 'application/json' });
        expect([a.status, a.cut, a.body.toString()], id).toEqual([200, false, answer(id)]);
        expect(completedIn(t.events).find((e) => e.id === id)?.outcome, id).toBe('ok');
      }
      expect(t.tap.stats()).toMatchObject({ upstreamFailures: 0, inFlight: 0 });
    } finally {
      await t.close();
      await peer.close();
    }
  });

  it('upstream hanging: 504 after --response-timeout; recorded timeout', async () => {
    const peer = await listenLocal((req) => req.resume()); // never answers
    const t = await tapFor(peer.url, { responseTimeoutMs: 300 });
    try {
      const a = await post(t.tap.url, echoCall(3), { ...MODERN_HEADERS, 'content-type': 'application/json' });
      expect(a.status).toBe(504);
      expect(json(a)).toMatchObject({ id: 3, error: { code: -32603 } });
      const ex = completedIn(t.events).find((e) => e.id === 3)!;
      expect(ex).toMatchObject({ outcome: 'transport_error' });
      expect(ex.transport?.errorClass).toBe('timeout');
    } finally {
      await t.close();
      await peer.close();
    }
  });

  it('upstream resetting mid-stream: the client sees the cut stream after the first event; recorded connection_reset', async () => {
    let n = 0;
    const peer = await listenLocal((req: IncomingMessage, res: ServerResponse) => {
      req.resume();
      req.on('end', () => {
        if (++n > 1) {
          res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":5,"result":{}}');
          return;
        }
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(
          `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'p', progress: 1 } })}\n\n`,
        );
        setTimeout(() => res.socket?.resetAndDestroy(), 30);
      });
    });
    const t = await tapFor(peer.url);
    try {
      const body = JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'slow', _meta: { progressToken: 'p' } } });
      const a = await post(t.tap.url, body, { 'content-type': 'application/json', accept: 'application/json, text/event-stream' });
      expect(a.status).toBe(200);
      expect(a.cut).toBe(true);
      expect(a.body.toString()).toContain('notifications/progress');
      const ex = completedIn(t.events).find((e) => e.id === 4)!;
      expect(ex.outcome).toBe('transport_error');
      expect(ex.transport).toMatchObject({ errorClass: 'connection_reset', httpStatus: 200 });
      expect(ex.progress).toHaveLength(1);
      const again = await post(t.tap.url, '{"jsonrpc":"2.0","id":5,"method":"ping"}', { 'content-type': 'application/json' });
      expect(again.status).toBe(200);
    } finally {
      await t.close();
      await peer.close();
    }
  });

  it('slow client: backpressure reaches the upstream; every byte arrives; recorded ok', async () => {
    const EVENTS = 400;
    const payload = 'y'.repeat(32 * 1024);
    let upstreamBlocked = 0;
    const peer = await listenLocal((req: IncomingMessage, res: ServerResponse) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        let i = 0;
        const pump = () => {
          while (i < EVENTS) {
            i++;
            const msg = { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: `${i}:${payload}` } };
            if (!res.write(`data: ${JSON.stringify(msg)}\n\n`)) {
              upstreamBlocked++;
              res.once('drain', pump);
              return;
            }
          }
          res.end(`data: ${JSON.stringify({ jsonrpc: '2.0', id: 9, result: { content: [] } })}\n\n`);
        };
        pump();
      });
    });
    const t = await tapFor(peer.url);
    try {
      const a = await post(
        t.tap.url,
        '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"flood"}}',
        { 'content-type': 'application/json' },
        { readDelayMs: 300 },
      );
      expect(a.cut).toBe(false);
      const text = a.body.toString();
      expect(text.split('\n\n').filter((s) => s.startsWith('data: ')).length).toBe(EVENTS + 1);
      expect(upstreamBlocked).toBeGreaterThan(0);
      const ex = completedIn(t.events).find((e) => e.id === 9)!;
      expect(ex.outcome).toBe('ok');
      expect(t.events.filter((e) => e.type === 'frame' && e.frame.channel === 'sse')).toHaveLength(EVENTS + 1);
    } finally {
      await t.close();
      await peer.close();
    }
  });
});
