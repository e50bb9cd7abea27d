/**
 * A server that asks the host for roots/list on the standalone GET stream (server-everything's
 * get-roots-list, SDK 1.x client offering roots), recorded through `mcptap http` and through
 * `mcptap stdio`: both replay against a fresh server with no difference. Over HTTP the replay must
 * hold the GET stream open and answer the server's request there from the recording; without it
 * the tool call hangs until the timeout (exit 1).
 */
import { copyFileSync, mkdtempSync, readFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCPTAP } from '../helpers/paths.js';
import { startEverything, type ChildPeer } from '../helpers/http-peers.js';
import { recordOverHttp, ROOT_URI, rootsSession } from '../helpers/roots-session.js';
import { EVERYTHING, mcptap, stdioTransport } from './replay-helpers.js';

describe('mcptap replay of a session whose server asks roots/list (server-everything)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-replay-roots-'));
  const httpDb = join(dir, 'roots-http.db');
  const stdioDb = join(dir, 'roots-stdio.db');
  let peer: ChildPeer;

  beforeAll(async () => {
    expect(await recordOverHttp(httpDb, rootsSession)).toContain(ROOT_URI);
    expect(await rootsSession(stdioTransport([MCPTAP, 'stdio', '--record', stdioDb, '--', EVERYTHING, 'stdio']))).toContain(ROOT_URI);
    peer = await startEverything('streamableHttp');
  }, 90_000);
  afterAll(async () => {
    await peer?.stop();
  });

  it('replays the HTTP recording over HTTP with exit 0: roots/list answered on the GET stream', async () => {
    const json = join(dir, 'http.json');
    const r = await mcptap(['replay', httpDb, '--pace', 'fast', '--timeout', '10s', '--json', json, '--url', peer.url]);
    expect(r.stdout).toMatch(/4 exchanges replayed: 4 same, 0 different, 0 without response; no differences/);
    expect(r.code).toBe(0);
    const report = JSON.parse(readFileSync(json, 'utf8')) as { exchanges: { tool?: string; unexpectedServerRequests?: string[] }[] };
    // The recorded roots were the answer: the tool's text names them again.
    expect(report.exchanges.map((e) => e.tool).filter(Boolean)).toEqual(['get-roots-list', 'echo']);
  }, 60_000);

  it('replays the stdio recording over stdio with exit 0, as before', async () => {
    const r = await mcptap(['replay', stdioDb, '--pace', 'fast', '--timeout', '10s', '--', EVERYTHING, 'stdio']);
    expect(r.stdout).toMatch(/no differences/);
    expect(r.code).toBe(0);
  }, 60_000);

  it('says the difference when the recording holds no roots/list answer to give (exit 1)', async () => {
    // The same recording without its server-to-client exchange: the replay answers roots/list with
    // an error, so the server knows no roots and get-roots-list's text differs.
    const bare = join(dir, 'roots-http-bare.db');
    copyFileSync(httpDb, bare);
    const db = new Database(bare);
    expect(db.prepare("DELETE FROM exchanges WHERE direction = 's2c' AND method = 'roots/list'").run().changes).toBeGreaterThan(0);
    db.close();
    const r = await mcptap(['replay', bare, '--pace', 'fast', '--timeout', '10s', '--url', peer.url]);
    expect(r.stdout).toMatch(/tools\/call get-roots-list/);
    expect(r.stdout).toMatch(/1 different/);
    expect(r.code).toBe(1);
  }, 60_000);
});
