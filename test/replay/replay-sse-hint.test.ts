/**
 * Replay against a server on the deprecated HTTP+SSE transport (server-everything `sse`: GET /sse,
 * 404 to a POST there): the report says mcptap speaks Streamable HTTP, not only "HTTP 404".
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpStatusHint } from '../../src/replay/transport-hint.js';
import { startEverything, type ChildPeer } from '../helpers/http-peers.js';
import { FIXTURES, MCPTAP } from '../helpers/paths.js';
import { mcptap, stdioTransport } from './replay-helpers.js';

const HINT =
  'mcptap replays over Streamable HTTP (POSTs to one endpoint, often /mcp); a server on the older HTTP+SSE transport (GET /sse) answers a POST with 404 or 405';

describe('replay against an HTTP+SSE endpoint', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-sse-hint-'));
  const db = join(dir, 'notes.db');
  let sse: ChildPeer;

  beforeAll(async () => {
    const client = new Client({ name: 'mcptap-sse-hint', version: '1.0.0' });
    await client.connect(stdioTransport([MCPTAP, 'stdio', '--record', db, '--', process.execPath, join(FIXTURES, 'notes-server.mjs')]));
    await client.listTools();
    await client.callTool({ name: 'search', arguments: { query: 'milk' } });
    await client.close();
    sse = await startEverything('sse');
  }, 60_000);
  afterAll(() => sse?.stop());

  it('says the endpoint is HTTP+SSE when it refuses the initialize, as a step or as the session opening', async () => {
    const whole = await mcptap(['replay', db, '--url', sse.url]);
    expect(whole.stdout).toContain(`no response came: HTTP 404 without a JSON-RPC response: ${HINT}`);
    expect(whole.code).toBe(1);
    const filtered = await mcptap(['replay', db, '--tool', 'search', '--url', sse.url]);
    expect(filtered.stdout + filtered.stderr).toContain(`initialize got no answer (HTTP 404): ${HINT}`);
    expect(filtered.code).not.toBe(0);
  }, 60_000);

  it('gives no hint for a status that says nothing of the transport, or for a request inside a session', () => {
    expect(httpStatusHint('initialize', 405)).toContain('HTTP+SSE');
    expect(httpStatusHint('initialize', 500)).toBe('');
    expect(httpStatusHint('tools/call', 404)).toBe(''); // a Streamable HTTP session that expired
  });
});
