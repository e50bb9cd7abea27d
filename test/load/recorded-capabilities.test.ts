/**
 * `load` with `from:` a recording whose client offered roots (SDK 1.x client, server-everything,
 * recorded through `mcptap http`): the load sessions declare the recorded capabilities, so the
 * server offers get-roots-list, and answer its roots/list (asked on the GET stream) with the
 * recorded answer. A scenario's `clientCapabilities` overrides them: declaring none, the tool is
 * not offered, and the pre-flight (which checks `from:` steps too) says so before any load.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEverything, type ChildPeer } from '../helpers/http-peers.js';
import { startHttpTapCli } from '../helpers/http-tap-cli.js';
import { ROOT_URI, rootsSession } from '../helpers/roots-session.js';
import { mcptap } from '../replay/replay-helpers.js';

interface Counters {
  requests: number;
  ok: number;
  toolErrors: number;
}
interface ResultJson {
  overall: { counters: Counters };
  tools: Record<string, { counters: Counters }>;
}

describe('load from: a recording whose client offered roots (server-everything over HTTP)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-load-caps-'));
  const db = join(dir, 'roots.db');
  let peer: ChildPeer;

  beforeAll(async () => {
    peer = await startEverything('streamableHttp');
    const tap = await startHttpTapCli(peer.url, ['--record', db]);
    expect(await rootsSession(new StreamableHTTPClientTransport(new URL(tap.url)))).toContain(ROOT_URI);
    tap.child.kill('SIGTERM');
    await tap.exited;
  }, 60_000);
  afterAll(async () => {
    await peer?.stop();
  });

  /** Writes a scenario of 4 sessions x 5 iterations of the recorded mix, plus `extra` lines. */
  function scenario(name: string, extra: string): string {
    const file = join(dir, `${name}.yaml`);
    writeFileSync(
      file,
      `name: ${name}\ntarget: ${peer.url}\nfrom: ${db}\ntimeout: 10s\n${extra}phases:\n  - closed: { vus: 4, iterations: 5 }\nthresholds:\n  all: ["tool_errors == 0", "errors == 0"]\n`,
    );
    return file;
  }

  it('declares the recorded capabilities and answers roots/list: no tool errors (exit 0)', async () => {
    const json = join(dir, 'recorded.json');
    const r = await mcptap(['load', scenario('recorded', ''), '--progress', 'none', '--json', json]);
    expect(r.stdout + r.stderr).toMatch(/thresholds: all passed/);
    expect(r.code).toBe(0);
    const res = JSON.parse(readFileSync(json, 'utf8')) as ResultJson;
    const tool = res.tools['get-roots-list']!.counters;
    expect(tool.requests).toBeGreaterThan(0);
    expect(tool.ok).toBe(tool.requests);
    expect(res.overall.counters.toolErrors).toBe(0);
  }, 60_000);

  it('pre-flight checks the recorded steps: declaring no capabilities, get-roots-list is missing (exit 4)', async () => {
    const r = await mcptap(['load', scenario('none-declared', 'clientCapabilities: {}\n'), '--progress', 'none']);
    expect(r.stderr).toMatch(/calls tool "get-roots-list".*has no such tool/);
    expect(r.code).toBe(4);
  }, 60_000);

  it('without the pre-flight, the calls fail as tool errors and the thresholds fail (exit 3)', async () => {
    const r = await mcptap(['load', scenario('no-preflight', 'clientCapabilities: {}\npreflight: false\n'), '--progress', 'none']);
    expect(r.stdout + r.stderr).toMatch(/FAIL +all: tool_errors == 0/);
    expect(r.code).toBe(3);
  }, 60_000);
});
