/**
 * Header handling of the HTTP tap: MCP and auth headers pass through untouched, hop-by-hop headers
 * do not (both ways), repeated response headers survive, secrets reach the recording only as
 * keyed-hash tokens, and the listener refuses foreign Host/Origin values (DNS rebinding). The
 * upstream is an in-process fake that echoes the headers it received: reporting exactly what
 * arrived is not something a real MCP server does.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'node:http';
import { Pipeline } from '../../src/pipeline/pipeline.js';
import { startHttpTap, type HttpTap } from '../../src/tap/http-tap.js';
import { Redactor, TOKEN_PREFIX } from '../../src/redact/redactor.js';
import type { TapEvent } from '../../src/model/events.js';
import { listenLocal, type InProcessPeer } from '../helpers/http-peers.js';

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  rawHeaders: string[];
  body: string;
}

function send(url: string, method: string, headers: Array<[string, string]>, body?: string): Promise<Raw> {
  const u = new URL(url);
  const flat = headers.some(([k]) => k.toLowerCase() === 'host') ? headers.flat() : ['Host', u.host, ...headers.flat()];
  if (body !== undefined) flat.push('content-length', String(Buffer.byteLength(body)));
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: u.port, path: u.pathname + u.search, method, headers: flat, setHost: false }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, rawHeaders: res.rawHeaders, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('HTTP tap headers', () => {
  let peer: InProcessPeer;
  let tap: HttpTap;
  let pipeline: Pipeline;
  const redactor = new Redactor({ key: 'test-key', headers: ['x-api-secret'] });
  const events: TapEvent[] = [];

  beforeAll(async () => {
    peer = await listenLocal((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const out = JSON.stringify({ rawHeaders: req.rawHeaders, url: req.url, method: req.method, body });
        const answer = body ? JSON.stringify({ jsonrpc: '2.0', id: (JSON.parse(body) as { id: number }).id, result: { echo: JSON.parse(out) } }) : out;
        res.writeHead(200, [
          'content-type',
          'application/json',
          'set-cookie',
          'a=1; HttpOnly',
          'set-cookie',
          'b=2',
          'mcp-session-id',
          'sess-1',
          'connection',
          'x-resp-hop',
          'x-resp-hop',
          'drop me',
          'keep-alive',
          'timeout=5',
          'x-upstream',
          'kept',
        ]);
        res.end(answer);
      });
    }, '/mcp');
    pipeline = new Pipeline();
    pipeline.subscribe((e) => events.push(e));
    tap = await startHttpTap({ upstream: peer.url, port: 0, pipeline, redactor, allowedHosts: ['mcp.test'], allowedOrigins: ['https://app.example:8443'] });
  });
  afterAll(async () => {
    await tap?.close();
    await pipeline?.close();
    await peer?.close();
  });

  it('passes MCP, auth and end-to-end headers untouched; drops hop-by-hop ones; keeps repeated response headers', async () => {
    const sent: Array<[string, string]> = [
      ['Content-Type', 'application/json'],
      ['Accept', 'application/json, text/event-stream'],
      ['Mcp-Session-Id', 'sess-1'],
      ['MCP-Protocol-Version', '2025-11-25'],
      ['Mcp-Method', 'tools/call'],
      ['Mcp-Name', '=?base64?w6ljaG8=?='],
      ['Mcp-Param-Region', 'eu-west'],
      ['Last-Event-ID', 'evt-41'],
      ['Authorization', 'Bearer s3cr3t'],
      ['Cookie', 'sid=abc'],
      ['X-Api-Secret', 'hunter2'],
      ['X-Custom', 'one'],
      ['X-Custom', 'two'],
      ['Connection', 'keep-alive, X-Hop'],
      ['X-Hop', 'must not pass'],
      ['Keep-Alive', 'timeout=5'],
      ['Proxy-Authorization', 'Basic cHJveHk='],
      ['TE', 'trailers'],
    ];
    const body = JSON.stringify({ jsonrpc: '2.0', id: 11, method: 'tools/call', params: { name: 'écho', arguments: {} } });
    const r = await send(`${tap.url}?q=1`, 'POST', sent, body);
    expect(r.status).toBe(200);
    const echoed = (JSON.parse(r.body) as { result: { echo: { rawHeaders: string[]; url: string; body: string } } }).result.echo;
    expect(echoed.url).toBe('/mcp?q=1');
    expect(echoed.body).toBe(body);
    const got: Array<[string, string]> = [];
    for (let i = 0; i < echoed.rawHeaders.length; i += 2) got.push([echoed.rawHeaders[i]!.toLowerCase(), echoed.rawHeaders[i + 1]!]);
    const value = (n: string) => got.filter(([k]) => k === n).map(([, v]) => v);
    for (const [k, v] of sent.slice(0, 11)) expect(value(k.toLowerCase())).toEqual([v]);
    expect(value('x-custom')).toEqual(['one', 'two']);
    for (const hop of ['x-hop', 'keep-alive', 'proxy-authorization', 'te']) expect(value(hop)).toEqual([]);
    expect(value('host')).toEqual([new URL(peer.url).host]);

    expect(r.headers['set-cookie']).toEqual(['a=1; HttpOnly', 'b=2']);
    expect(r.headers['x-upstream']).toBe('kept');
    expect(r.headers['mcp-session-id']).toBe('sess-1');
    expect(r.headers['x-resp-hop']).toBeUndefined();
    expect(r.headers['keep-alive']).not.toBe('timeout=5');

    // The recording: secrets only as keyed-hash tokens; MCP headers verbatim.
    const frame = events.find((e) => e.type === 'frame' && e.frame.direction === 'c2s' && e.frame.kind === 'message');
    const ctx = frame?.type === 'frame' ? frame.frame.context : undefined;
    expect(ctx?.headers?.authorization).toBe(redactor.token('Bearer s3cr3t'));
    expect(ctx?.headers?.cookie).toBe(redactor.token('sid=abc'));
    expect(ctx?.headers?.['x-api-secret']?.startsWith(TOKEN_PREFIX)).toBe(true);
    expect(ctx?.headers?.['mcp-name']).toBe('=?base64?w6ljaG8=?=');
    expect(ctx?.headerProtocolVersion).toBe('2025-11-25');
    expect(ctx?.sessionId).toBe('sess-1');
    // (The fake echoes what it got into its own response body; only what the tap itself put into frame context is checked.)
    const contexts = events.flatMap((e) => (e.type === 'frame' ? [e.frame.context] : []));
    expect(JSON.stringify(contexts)).not.toMatch(/s3cr3t|hunter2|sid=abc|cHJveHk=/);
    // Mcp-Name carries "écho" base64-encoded and matches params.name: no header anomaly.
    expect(events.filter((e) => e.type === 'anomaly')).toEqual([]);
  });

  it('refuses a foreign Host or Origin with 403 (DNS rebinding), accepts loopback and configured ones', async () => {
    const ok = (headers: Array<[string, string]>) => send(tap.url, 'GET', headers).then((r) => r.status);
    expect(await ok([['Host', 'evil.example:7077']])).toBe(403);
    expect(await ok([['Origin', 'http://evil.example']])).toBe(403);
    expect(await ok([['Origin', 'null']])).toBe(403);
    expect(await ok([['Host', `localhost:${tap.port}`]])).toBe(200);
    expect(await ok([['Host', 'mcp.test']])).toBe(200);
    expect(await ok([['Origin', 'http://localhost:5173']])).toBe(200);
    expect(await ok([['Origin', 'https://app.example:8443']])).toBe(200);
    expect(await ok([['Origin', 'https://app.example:9999']])).toBe(403);
    const refused = await send(
      tap.url,
      'POST',
      [
        ['Host', 'evil.example'],
        ['Content-Type', 'application/json'],
      ],
      '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    );
    expect(refused.headers['content-type']).toBe('application/json');
    expect(JSON.parse(refused.body)).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
    expect(events.filter((e) => e.type === 'anomaly' && /403/.test(e.detail)).length).toBe(5);
  });

  it('binds to loopback by default', async () => {
    const own = await startHttpTap({ upstream: peer.url, port: 0 });
    try {
      expect(own.host).toBe('127.0.0.1');
      expect(own.url).toBe(`http://127.0.0.1:${own.port}/mcp`);
    } finally {
      await own.close();
    }
  });
});
