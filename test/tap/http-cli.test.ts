/**
 * `mcptap http` as users run it (the built CLI): in front of server-everything `streamableHttp`,
 * driven by `@modelcontextprotocol/inspector-cli`, which must get the same answers as direct.
 * SIGINT stops the tap with exit 0 and a complete recording. Needs `npx tsc -p .` first.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { RecordingStore } from '../../src/store/recording-store.js';
import { BIN, ROOT } from '../helpers/paths.js';
import { startHttpTapCli } from '../helpers/http-tap-cli.js';
import { startEverything, type ChildPeer } from '../helpers/http-peers.js';

const run = promisify(execFile);

/** inspector-cli from a folder whose parent has a package.json (it needs that to start). */
async function inspect(url: string, args: string[]): Promise<unknown> {
  const { stdout } = await run(join(BIN, 'mcp-inspector-cli'), ['--cli', url, '--transport', 'http', ...args], { cwd: join(ROOT, 'test'), timeout: 30_000 });
  return JSON.parse(stdout.slice(stdout.indexOf('{')));
}

describe('mcptap http (CLI) with inspector-cli', () => {
  let peer: ChildPeer;
  beforeAll(async () => {
    peer = await startEverything('streamableHttp');
  });
  afterAll(async () => {
    await peer?.stop();
  });

  it('inspector-cli gets the same answers through the tap; SIGINT exits 0 with the recording flushed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcptap-http-cli-'));
    const record = join(dir, 'rec.db');
    const tap = await startHttpTapCli(peer.url, ['--record', record]);
    expect(tap.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const calls = [
      ['--method', 'tools/list'],
      ['--method', 'tools/call', '--tool-name', 'get-sum', '--tool-arg', 'a=19', '--tool-arg', 'b=23'],
    ];
    const [direct, viaTap] = await Promise.all([Promise.all(calls.map((c) => inspect(peer.url, c))), Promise.all(calls.map((c) => inspect(tap.url, c)))]);
    expect(viaTap).toEqual(direct);
    expect(JSON.stringify(viaTap[1])).toContain('The sum of 19 and 23 is 42');

    tap.child.kill('SIGINT');
    expect(await tap.exited).toBe(0);
    expect(tap.stderr()).not.toContain('[stdout]');

    const store = RecordingStore.open(record);
    try {
      const rid = store.latestRecordingId()!;
      expect(store.getRecording(rid)).toMatchObject({ transport: 'http' });
      const rows = store.exchanges({ recordingId: rid });
      const methods = rows.map((r) => `${r.method}${r.target ? ` ${r.target}` : ''}:${r.outcome}`).sort();
      // inspector-cli also sets the log level and lists tools before a call.
      expect(new Set(methods)).toEqual(new Set(['initialize:ok', 'logging/setLevel:ok', 'tools/list:ok', 'tools/call get-sum:ok']));
      expect(methods.filter((m) => m === 'initialize:ok')).toHaveLength(2);
      for (const r of rows) expect(r.sessionId).toBeTruthy();
      // Two sessions; inspector-cli does not DELETE, so they end when the tap closes.
      const conns = store.connections(rid);
      expect(conns.map((c) => c.closeReason)).toEqual(['tap_closed', 'tap_closed']);
    } finally {
      store.close();
    }
  });
});
