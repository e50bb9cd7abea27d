/**
 * `replay --check` against a stateless Streamable HTTP server (the SDK 1.x notes server with
 * `--stateless`: a new server and transport per POST, GET 405), both ways: an honest build gives
 * the findings the offline check of the recording gives (none from the GET's refusal, every message
 * checked against its version), and a build breaking its declared outputSchema fails the replay.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpTapCli } from '../helpers/http-tap-cli.js';
import { startNotesHttp, type NotesHttp } from '../helpers/notes-peer.js';
import { mcptap } from '../replay/replay-helpers.js';

let dir: string;
let db: string;
let rules: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mcptap-replay-stateless-'));
  db = join(dir, 'stateless.db');
  rules = join(dir, 'rules.yaml');
  writeFileSync(rules, 'rules:\n  protocol/pending: off\n');
  const notes = await startNotesHttp(['--stateless']);
  const tap = await startHttpTapCli(notes.url, ['--record', db, '--log-level', 'silent']);
  try {
    const client = new Client({ name: 'replay-stateless', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(tap.url)));
    await client.listTools();
    await Promise.all([client.callTool({ name: 'search', arguments: { query: 'milk' } }), client.callTool({ name: 'search', arguments: { query: 'eggs' } })]);
    await client.callTool({ name: 'search', arguments: { query: 5 } }).catch(() => undefined); // rejected: the client's warning
    await client.close();
  } finally {
    tap.child.kill('SIGTERM');
    await tap.exited;
    await notes.stop();
  }
}, 60_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Replays the recording against a fresh stateless notes server started with `flags`. */
async function replayAgainst(flags: string[]) {
  const notes: NotesHttp = await startNotesHttp(['--stateless', ...flags]);
  try {
    return await mcptap(['replay', db, '--pace', 'fast', '--check', rules, '--url', notes.url]);
  } finally {
    await notes.stop();
  }
}

/** The rule ids a check report names, in order (offline: `id (severity): N`; replay: `- id: N`). */
const ruleIds = (text: string) => [...text.matchAll(/^(?:[✗-] )?([a-z]+\/[a-z-]+)(?: \([a-z]+\))?: \d+/gm)].map((m) => m[1]);

describe('replay --check on a stateless HTTP server', () => {
  it('an honest build: exit 0, and the same rules fire as offline on the recording', async () => {
    const offline = await mcptap(['check', db, '--rules', rules]);
    expect(offline.code, offline.stdout).toBe(0);
    const r = await replayAgainst([]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const replayed = r.stdout.slice(r.stdout.indexOf('check findings'));
    expect(replayed).not.toMatch(/orphan-response|unknown-version/);
    expect(ruleIds(replayed).sort()).toEqual(ruleIds(offline.stdout).sort());
    expect(ruleIds(replayed)).toContain('contract/arguments-invalid');
  }, 60_000);

  it('a build whose answers break its declared outputSchema: contract/output-invalid, exit 1', async () => {
    const r = await replayAgainst(['--bad-output']);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stdout).toMatch(/✗ contract\/output-invalid: 2 \(2 error/);
  }, 60_000);
});
