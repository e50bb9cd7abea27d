/**
 * Replay is exact on values a server echoes (issue 36 part 2): the replay sends the recorded progress
 * token and id where they are free in its connection, so a server that answers with the token it was
 * given answers as recorded. Real peers: the SDK 1.x notes server's `echo_token` (its text is its
 * request's progress token), recorded through `mcptap stdio --record` by the SDK 1.x client, replayed
 * against the same build (0 differences) and against one whose answer truly changed (different).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { MCPTAP } from '../helpers/paths.js';
import { notesCommand } from '../helpers/notes-peer.js';
import { mcptap, stdioTransport } from './replay-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'mcptap-echo-'));
const db = join(dir, 'notes.db');
let recordedTexts: string[] = [];

beforeAll(async () => {
  const client = new Client({ name: 'notes-user', version: '1.0.0' });
  await client.connect(stdioTransport([MCPTAP, 'stdio', '--record', db, '--', ...notesCommand()]));
  try {
    // The SDK client's progress token is its request id: 1, 2, ... Two calls at once, then one more.
    const call = () => client.callTool({ name: 'echo_token', arguments: {} }, CallToolResultSchema, { onprogress: () => {} });
    const results = [...(await Promise.all([call(), call()])), await call()];
    recordedTexts = results.map((r) => (r.content[0] as { text: string }).text);
  } finally {
    await client.close();
  }
}, 60_000);

describe('replay of a server that echoes its progress token', () => {
  it('the same build: 0 differences, exit 0 (the recorded token is sent again)', async () => {
    expect(recordedTexts.every((t) => /^\d+$/.test(t))).toBe(true);
    const r = await mcptap(['replay', db, '--', ...notesCommand()], 60_000);
    expect(r.stdout).not.toContain('mcptap-replay-');
    expect(r.stdout).toMatch(/0 different/);
    expect(r.code, r.stdout + r.stderr).toBe(0);
  }, 90_000);

  it('a build whose answer truly changed: the echoed text differs, exit 1', async () => {
    const r = await mcptap(['replay', db, '--', ...notesCommand(['--echo-prefix', 'token '])], 60_000);
    expect(r.stdout).toMatch(/\/result\/content\/0\/text: changed/);
    expect(r.stdout).toContain(`+ replayed: "token ${recordedTexts[0]}"`);
    expect(r.stdout).toMatch(/3 different/);
    expect(r.code).toBe(1);
  }, 90_000);
});
