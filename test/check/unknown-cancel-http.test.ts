/**
 * `unknown_request_cancelled` over HTTP, through the built `mcptap http --record`: its wording names
 * the GET-stream race (stdio's names a server cancelling what it never sent, unknown-cancel-e2e).
 * The upstream is an in-process fake on purpose: a real server cancels an id the tap never saw only
 * when the race happens, which no test can bring about at will. Both ways: an SSE answer that
 * cancels request id 0, never sent, raises it; one that cancels the sampling request it sent
 * before, on the same stream, raises nothing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenLocal, type InProcessPeer } from '../helpers/http-peers.js';
import { startHttpTapCli } from '../helpers/http-tap-cli.js';
import { mcptap } from './scripted-session.js';

const cancel = (requestId: unknown) => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason: 'timeout' } });
const sampling = { jsonrpc: '2.0', id: 's1', method: 'sampling/createMessage', params: { messages: [], maxTokens: 1 } };

/** tools/call `ask` with SSE: the events its `arguments.before` names, then the result. */
function sseAnswer(body: string, res: ServerResponse): void {
  const msg = JSON.parse(body) as { id: number; params: { arguments: { before: unknown[] } } };
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const m of msg.params.arguments.before) res.write(`event: message\ndata: ${JSON.stringify(m)}\n\n`);
  res.end(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: { content: [{ type: 'text', text: 'done' }] } })}\n\n`);
}

let dir: string;
let peer: InProcessPeer;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mcptap-unknown-cancel-http-'));
  peer = await listenLocal((req, res) => {
    let body = '';
    req.on('data', (b: Buffer) => (body += b.toString()));
    req.on('end', () => sseAnswer(body, res));
  });
});

afterAll(async () => {
  await peer.close();
  rmSync(dir, { recursive: true, force: true });
});

/** One tools/call through `mcptap http --record`, its SSE answer sending `before` first; the recording's unknown cancels. */
async function unknownCancels(name: string, before: unknown[]): Promise<{ detail: string; direction?: string }[]> {
  const db = join(dir, `${name}.db`);
  const tap = await startHttpTapCli(peer.url, ['--record', db]);
  try {
    const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ask', arguments: { before } } };
    const res = await fetch(tap.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(call),
    });
    expect(await res.text()).toContain('"done"');
  } finally {
    tap.child.kill('SIGTERM');
    await tap.exited;
  }
  const r = mcptap('show', db, '--anomalies', '--json');
  expect(r.code, r.err).toBe(0);
  return (JSON.parse(r.out) as { kind: string; detail: string; direction?: string }[]).filter((a) => a.kind === 'unknown_request_cancelled');
}

describe('unknown_request_cancelled over HTTP', () => {
  it('a cancel of an id no frame carried: one, worded as the GET-stream race', async () => {
    const found = await unknownCancels('unknown', [cancel(0)]);
    expect(found).toEqual([expect.objectContaining({ direction: 's2c' })]);
    expect(found[0]!.detail).toMatch(/^cancellation of request id 0 that the tap never saw: a server request sent before the client's standalone GET stream/);
    expect(found[0]!.detail).toContain('GET-stream race');
    expect(found[0]!.detail).not.toContain('never sent on this connection');
  }, 60_000);

  it('a cancel of the server request it sent on the same stream: none', async () => {
    expect(await unknownCancels('known', [sampling, cancel('s1')])).toEqual([]);
  }, 60_000);
});
