/**
 * The client's own notifications replayed at their recorded place: an SDK 1.x host offering roots
 * sends `notifications/roots/list_changed` (server-everything answers by asking roots/list), recorded
 * through `mcptap stdio` and `mcptap http`. Replayed with `--update`, the new baseline holds the
 * notification, after tools/list and before echo, as recorded. Before the replay sent them, the
 * baselines held none (checked on main: the counts below were 0).
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCPTAP } from '../helpers/paths.js';
import { startEverything, type ChildPeer } from '../helpers/http-peers.js';
import { recordOverHttp, withRootsHost } from '../helpers/roots-session.js';
import { EVERYTHING, mcptap, stdioTransport } from './replay-helpers.js';

const CHANGED = 'notifications/roots/list_changed';

/** tools/list, then the roots change, then echo: the host's notification between two requests. */
function rootsChangedSession(transport: StdioClientTransport | StreamableHTTPClientTransport): Promise<void> {
  return withRootsHost(transport, async (client) => {
    await client.listTools();
    await client.sendRootsListChanged();
    await client.callTool({ name: 'echo', arguments: { message: 'after the change' } });
  });
}

/** The methods the client sent, in order (its requests and notifications). */
function clientMethods(db: string): string[] {
  const d = new Database(db, { readonly: true });
  try {
    const rows = d.prepare("SELECT method FROM frames WHERE direction = 'c2s' AND method IS NOT NULL ORDER BY ord").all() as { method: string }[];
    return rows.map((r) => r.method);
  } finally {
    d.close();
  }
}

const count = (methods: string[], m: string): number => methods.filter((x) => x === m).length;

describe('mcptap replay sends the client notifications it recorded (roots/list_changed)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-replay-notes-'));
  const stdioDb = join(dir, 'notes-stdio.db');
  const httpDb = join(dir, 'notes-http.db');
  let peer: ChildPeer;

  beforeAll(async () => {
    await rootsChangedSession(stdioTransport([MCPTAP, 'stdio', '--record', stdioDb, '--', EVERYTHING, 'stdio']));
    await recordOverHttp(httpDb, rootsChangedSession);
    peer = await startEverything('streamableHttp');
  }, 90_000);
  afterAll(async () => {
    await peer?.stop();
  });

  it('over stdio: the --update baseline holds the notification between tools/list and echo (exit 0)', async () => {
    const recorded = clientMethods(stdioDb);
    expect(count(recorded, CHANGED)).toBe(1);
    const next = join(dir, 'next-stdio.db');
    const r = await mcptap(['replay', stdioDb, '--pace', 'fast', '--timeout', '10s', '--update', next, '--', EVERYTHING, 'stdio']);
    expect(r.code, r.stderr).toBe(0);
    const sent = clientMethods(next);
    expect(count(sent, CHANGED)).toBe(1);
    expect(sent.indexOf(CHANGED)).toBeGreaterThan(sent.indexOf('tools/list'));
    expect(sent.indexOf(CHANGED)).toBeLessThan(sent.indexOf('tools/call'));
  }, 60_000);

  it('over stdio with --pace recorded, into a JSONL baseline: the notification once, at its place', async () => {
    const next = join(dir, 'next.jsonl');
    const r = await mcptap(['replay', stdioDb, '--pace', 'recorded', '--timeout', '10s', '--update', next, '--', EVERYTHING, 'stdio']);
    expect(r.code, r.stderr).toBe(0);
    const lines = readFileSync(next, 'utf8').split('\n');
    const at = (s: string) => lines.findIndex((l) => l.includes(s));
    expect(lines.filter((l) => l.includes(CHANGED))).toHaveLength(1);
    expect(at(CHANGED)).toBeGreaterThan(at('"tools/list"'));
    expect(at(CHANGED)).toBeLessThan(at('"tools/call"'));
  }, 60_000);

  it('over HTTP: POSTed in its session, and in the --update baseline (exit 0)', async () => {
    expect(count(clientMethods(httpDb), CHANGED)).toBe(1);
    const next = join(dir, 'next-http.db');
    const r = await mcptap(['replay', httpDb, '--pace', 'fast', '--timeout', '10s', '--update', next, '--url', peer.url]);
    expect(r.code, r.stderr).toBe(0);
    const sent = clientMethods(next);
    expect(count(sent, CHANGED)).toBe(1);
    expect(sent.indexOf(CHANGED)).toBeLessThan(sent.indexOf('tools/call'));
  }, 60_000);
});
