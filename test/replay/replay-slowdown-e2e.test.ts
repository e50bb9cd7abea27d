/**
 * `replay --max-slowdown` on a user's server: the SDK 1.x notes server recorded through
 * `mcptap stdio --record` by the SDK 1.x client, with summarize calls it cancelled (AbortSignal),
 * replayed against the same build (not slower) and against one whose work is 3 times as long.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES, MCPTAP } from '../helpers/paths.js';
import { mcptap, stdioTransport } from './replay-helpers.js';

const NOTES = join(FIXTURES, 'notes-server.mjs');

/**
 * As many cancelled summarize calls as full ones, so the recorded median once fell on a cancelled
 * call; delete_note answers in well under a millisecond.
 */
async function notesSession(db: string): Promise<void> {
  const client = new Client({ name: 'mcptap-slowdown', version: '1.0.0' });
  await client.connect(stdioTransport([MCPTAP, 'stdio', '--record', db, '--', process.execPath, NOTES]));
  try {
    await client.listTools();
    for (let i = 0; i < 3; i++) {
      await client.callTool({ name: 'delete_note', arguments: { id: 'none' } });
      const ac = new AbortController();
      const timer = setTimeout(() => ac.abort('changed my mind'), 100);
      await client
        .callTool({ name: 'summarize', arguments: { seconds: 0.4 } }, CallToolResultSchema, { onprogress: () => {}, signal: ac.signal })
        .catch(() => undefined)
        .finally(() => clearTimeout(timer));
      await client.callTool({ name: 'summarize', arguments: { seconds: 0.4 } }, CallToolResultSchema, { onprogress: () => {} });
    }
  } finally {
    await client.close();
  }
}

describe('replay --max-slowdown against the SDK 1.x notes server', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-slowdown-'));
  const db = join(dir, 'notes.db');
  const replay = (...server: string[]) => mcptap(['replay', db, '--max-slowdown', '1.5x', '--', process.execPath, NOTES, ...server], 90_000);

  beforeAll(async () => {
    await notesSession(db);
    const shown = await mcptap(['show', db]);
    expect(shown.stdout.match(/summarize +cancelled/g)).toHaveLength(3);
  }, 60_000);

  it('the same build is not slower: the cancelled calls are out of both sides', async () => {
    for (let run = 0; run < 2; run++) {
      const r = await replay();
      expect(r.stdout).not.toContain('slower');
      expect(r.stdout).toContain('tools/call summarize 3 of 6');
      expect(r.stdout).toContain('(slowdown not judged, fewer than 3 calls timed on both sides: tools/list 1)');
      expect(r.code, r.stdout + r.stderr).toBe(0);
    }
  }, 120_000);

  it('a build whose work takes 3 times as long: exit 1, naming summarize with its factor', async () => {
    const r = await replay('--slow', '3');
    expect(r.stdout).toMatch(/✗ tools\/call summarize: slower\n {4}p50 \d+\.\d ms -> \d+\.\d ms \(\d+\.\d\dx per call, median\); 3 of 3 calls more than 1\.5x/);
    expect(r.stdout).toContain('1 slower than allowed');
    expect(r.code).toBe(1);
  }, 120_000);
});
