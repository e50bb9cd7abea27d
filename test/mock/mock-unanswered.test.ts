/**
 * The mock tells a recorded-but-unanswered request from an unknown one (issue 31, item 7), with real
 * peers: the SDK 1.x client cancels a summarize call of the notes server (test/fixtures/notes-server.mjs)
 * recorded through `mcptap stdio --record`; the mock then answers that call -32087, an unknown tool -32088.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { MCPTAP } from '../helpers/paths.js';
import { notesCommand } from '../helpers/notes-peer.js';
import { stdioTransport } from '../replay/replay-helpers.js';

let db: string;

beforeAll(async () => {
  db = join(mkdtempSync(join(tmpdir(), 'mcptap-mock-unanswered-')), 'notes.db');
  const client = new Client({ name: 'notes-user', version: '1.0.0' });
  await client.connect(stdioTransport([MCPTAP, 'stdio', '--record', db, '--', ...notesCommand()]));
  try {
    await client.callTool({ name: 'search', arguments: { query: 'milk' } });
    // 20 s of work in 2 s steps: cancelled on its first progress, long before it could answer.
    const abort = new AbortController();
    const call = client.callTool({ name: 'summarize', arguments: { seconds: 20 } }, CallToolResultSchema, {
      onprogress: () => abort.abort(),
      signal: abort.signal,
    });
    await expect(call).rejects.toThrow();
  } finally {
    await client.close();
  }
}, 60_000);

async function errorOf(p: Promise<unknown>): Promise<McpError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(McpError);
  return e as McpError;
}

describe('mock of a recording with a cancelled call', () => {
  it('answers the cancelled call -32087 (never answered), an unknown tool -32088', async () => {
    const client = new Client({ name: 'notes-user', version: '1.0.0' });
    await client.connect(stdioTransport([MCPTAP, 'mock', db, '--stdio']));
    try {
      const cancelled = await errorOf(client.callTool({ name: 'summarize', arguments: { seconds: 20 } }));
      expect(cancelled.code).toBe(-32087);
      expect(cancelled.message).toContain('never answered');
      expect(cancelled.message).toContain('the client cancelled it');
      expect(cancelled.message).not.toContain('none with this method');
      const unknown = await errorOf(client.callTool({ name: 'nope', arguments: {} }));
      expect(unknown.code).toBe(-32088);
      expect((await client.callTool({ name: 'search', arguments: { query: 'milk' } })).isError).toBeFalsy();
    } finally {
      await client.close();
    }
  }, 60_000);

  it('with --unanswered hold, replays the recorded progress and keeps the call open until cancelled', async () => {
    const client = new Client({ name: 'notes-user', version: '1.0.0' });
    await client.connect(stdioTransport([MCPTAP, 'mock', db, '--stdio', '--unanswered', 'hold']));
    try {
      const abort = new AbortController();
      const progress: unknown[] = [];
      let gotProgress!: () => void;
      const progressed = new Promise<void>((resolve) => (gotProgress = resolve));
      let settled = false;
      const held = client
        .callTool({ name: 'summarize', arguments: { seconds: 20 } }, CallToolResultSchema, {
          onprogress: (p) => (progress.push(p), gotProgress()),
          signal: abort.signal,
        })
        .finally(() => (settled = true));
      await progressed;
      expect(progress).toEqual([{ progress: 1, total: 10 }]);
      // Another call answered after the progress: the held one is still open.
      expect((await client.callTool({ name: 'search', arguments: { query: 'milk' } })).isError).toBeFalsy();
      expect(settled).toBe(false);
      abort.abort();
      await expect(held).rejects.toThrow(/abort/i);
      // An unknown tool is still a miss.
      expect((await errorOf(client.callTool({ name: 'nope', arguments: {} }))).code).toBe(-32088);
    } finally {
      await client.close();
    }
  }, 60_000);
});
