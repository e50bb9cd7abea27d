/**
 * GET streams carry no JSON-RPC message, so no exchange can record their upstream failure: the
 * recording gets an `upstream_failed` anomaly instead, which `mcptap ls` counts and `mcptap show
 * --anomalies` lists. The built CLI with --record, in front of a port that refuses.
 */
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RecordingStore } from '../../src/store/recording-store.js';
import { MCPTAP } from '../helpers/paths.js';
import { startHttpTapCli } from '../helpers/http-tap-cli.js';
import { freePort } from '../helpers/http-peers.js';

async function getStream(url: string, headers: Record<string, string> = {}): Promise<number> {
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers } });
  await res.arrayBuffer();
  return res.status;
}

const cli = (args: string[]) => spawnSync(process.execPath, [MCPTAP, ...args], { encoding: 'utf8', timeout: 15_000 });

describe('HTTP tap: a GET stream that fails upstream is in the recording', () => {
  it('legacy GET /sse and a session GET stream, upstream refusing: one upstream_failed anomaly each', async () => {
    const port = await freePort();
    const record = join(mkdtempSync(join(tmpdir(), 'mcptap-get-fail-')), 'rec.db');
    const tap = await startHttpTapCli(`http://127.0.0.1:${port}/sse`, ['--record', record]);
    const origin = new URL(tap.url).origin;
    try {
      expect(await getStream(`${origin}/sse?token=t0psecret`)).toBe(502);
      expect(await getStream(`${origin}/mcp`, { 'mcp-session-id': 'sess-1', 'mcp-protocol-version': '2025-06-18' })).toBe(502);
    } finally {
      tap.child.kill('SIGTERM');
    }
    expect(await tap.exited).toBe(0);

    const store = RecordingStore.open(record);
    try {
      const rid = store.latestRecordingId()!;
      const anomalies = store.anomalies(rid).map((a) => ({ kind: a.kind, connectionId: a.connectionId, detail: a.detail }));
      expect(anomalies).toEqual([
        { kind: 'upstream_failed', connectionId: expect.stringMatching(/^http:conn-\d+$/), detail: 'GET /sse: upstream connection_refused before answering' },
        { kind: 'upstream_failed', connectionId: 'http:sess-1', detail: 'GET /mcp: upstream connection_refused before answering' },
      ]);
    } finally {
      store.close();
    }

    const ls = cli(['ls', record]);
    expect(ls.status, ls.stderr).toBe(0);
    expect(ls.stdout).toMatch(/anomalies 2\b/);
    const show = cli(['show', record, '--anomalies']);
    expect(show.status, show.stderr).toBe(0);
    expect(show.stdout).toContain('GET /sse: upstream connection_refused before answering');
    expect(show.stdout).not.toContain('t0psecret');
  });
});
