/**
 * Baselines that keep their meaning (issue 31, items 4 and 5), with real peers: a session of the SDK
 * 1.x client with the notes server (test/fixtures/notes-server.mjs), a summarize call cancelled after
 * 500 ms among them, recorded through `mcptap stdio --record`, then `replay --update` against a fresh
 * notes server (and one that serves create_note under another name).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES, MCPTAP } from '../helpers/paths.js';
import { mcptap, stdioTransport } from './replay-helpers.js';
import { RecordingStore } from '../../src/store/recording-store.js';

export const NOTES = [process.execPath, join(FIXTURES, 'notes-server.mjs')];

/** What a user's rules say of the notes server: create_note mints an id and a time. */
export const NOTES_RULES = 'version: 1\nrules:\n  - tool: create_note\n    normalise: uuid\n  - tool: create_note\n    normalise: timestamp\n';

/** search, create_note, a summarize the client cancels after 500 ms, delete_note of an unknown note (isError). */
export async function notesSession(db: string): Promise<void> {
  const client = new Client({ name: 'notes-user', version: '1.0.0' });
  await client.connect(stdioTransport([MCPTAP, 'stdio', '--record', db, '--', ...NOTES]));
  try {
    await client.callTool({ name: 'search', arguments: { query: 'milk' } });
    await client.callTool({ name: 'create_note', arguments: { title: 'todo', body: 'call mum' } });
    const cancelled = client.callTool({ name: 'summarize', arguments: {} }, CallToolResultSchema, { onprogress: () => {}, signal: AbortSignal.timeout(500) });
    await expect(cancelled).rejects.toThrow();
    await client.callTool({ name: 'delete_note', arguments: { id: 'nope' } });
  } finally {
    await client.close();
  }
}

function outcomes(db: string): Record<string, string> {
  const store = RecordingStore.open(db);
  try {
    return Object.fromEntries(store.exchanges({ method: 'tools/call' }).map((e) => [e.target!, e.outcome]));
  } finally {
    store.close();
  }
}

interface JsonReport {
  exchanges: { tool?: string; recordedOutcome: string; replayedOutcome: string; differences: unknown[] }[];
}

describe('replay --update keeps what the baseline means (notes server, SDK 1.x client)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-baseline-'));
  const db = join(dir, 'base.db');
  const rules = join(dir, 'rules.yaml');

  beforeAll(async () => {
    writeFileSync(rules, NOTES_RULES);
    await notesSession(db);
  }, 60_000);

  it('the recorded cancelled call stays cancelled in the new baseline, and a replay of it cancels again', async () => {
    expect(outcomes(db)).toEqual({ search: 'ok', create_note: 'ok', summarize: 'cancelled', delete_note: 'tool_error' });
    const next = join(dir, 'next.db');
    const r = await mcptap(['replay', db, '--rules', rules, '--update', next, '--', ...NOTES]);
    expect(r.stderr).toBe(`mcptap: wrote ${next}: 0 changed answers accepted\n`);
    expect(r.code).toBe(0);
    expect(outcomes(next)).toEqual({ search: 'ok', create_note: 'ok', summarize: 'cancelled', delete_note: 'tool_error' });

    const again = await mcptap(['replay', next, '--rules', rules, '--json', '-', '--', ...NOTES]);
    const report = JSON.parse(again.stdout) as JsonReport;
    expect(report.exchanges.find((e) => e.tool === 'summarize')).toMatchObject({ recordedOutcome: 'cancelled', replayedOutcome: 'cancelled', differences: [] });
    expect(again.code).toBe(0);
  }, 60_000);

  it('accepting a renamed tool as "unknown tool" is written, and warned about as an API change', async () => {
    const renamed = join(dir, 'renamed.db');
    const r = await mcptap(['replay', db, '--rules', rules, '--update', renamed, '--', ...NOTES, '--rename', 'create_note=add_note']);
    expect(r.stderr).toMatch(new RegExp(`^mcptap: wrote ${renamed}: 1 changed answer accepted\n`));
    expect(r.stderr).toMatch(
      /mcptap: warning: accepted an API change: tools\/call create_note worked when recorded, now unknown tool: .*create_note not found/,
    );
    expect(r.stderr).toMatch(/record the clients again instead/);
    expect(r.code).toBe(0);
    expect(outcomes(renamed)).toMatchObject({ create_note: 'tool_error' });
  }, 60_000);
});
