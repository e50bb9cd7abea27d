/**
 * Baselines that keep their meaning (issue 31, items 4 and 5), with real peers: a session of the SDK
 * 1.x client with the notes server (test/fixtures/notes-server.mjs), a summarize call cancelled after
 * 500 ms among them, recorded through `mcptap stdio --record`, then `replay --update` against a fresh
 * notes server (and one that serves create_note under another name).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES, MCPTAP } from '../helpers/paths.js';
import { mcptap, stdioTransport } from './replay-helpers.js';
import { RecordingStore } from '../../src/store/recording-store.js';
import { loadRules, normalise } from '../../src/replay/rules.js';

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
    // 20 s of work in 2 s steps: no progress before the cancel, whatever the machine's load.
    const cancelled = client.callTool({ name: 'summarize', arguments: { seconds: 20 } }, CallToolResultSchema, {
      onprogress: () => {},
      signal: AbortSignal.timeout(500),
    });
    await expect(cancelled).rejects.toThrow();
    await client.callTool({ name: 'delete_note', arguments: { id: 'nope' } });
  } finally {
    await client.close();
  }
}

/** The notes server's tools called through `mcptap mock FILE --stdio` by the SDK 1.x client, as recorded (and one miss). */
async function mockAnswers(file: string): Promise<unknown[]> {
  const client = new Client({ name: 'notes-user', version: '1.0.0' });
  await client.connect(stdioTransport([MCPTAP, 'mock', file, '--stdio']));
  try {
    return [
      await client.callTool({ name: 'search', arguments: { query: 'milk' } }),
      await client.callTool({ name: 'create_note', arguments: { title: 'todo', body: 'call mum' } }),
      await client.callTool({ name: 'delete_note', arguments: { id: 'nope' } }),
      await client.callTool({ name: 'search', arguments: { query: 'never recorded' } }).catch((e: Error) => e.message),
    ];
  } finally {
    await client.close();
  }
}

/** The notes server over Streamable HTTP on a free loopback port; resolves when it listens (bounded: 20 s). */
async function notesOverHttp(): Promise<{ url: string; stop(): void }> {
  const child = spawn(NOTES[0]!, [...NOTES.slice(1), '--http', '0'], { stdio: ['ignore', 'ignore', 'pipe'] });
  const url = await new Promise<string>((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`notes server did not start: ${text}`)), 20_000);
    child.stderr!.on('data', (b: Buffer) => {
      text += b.toString();
      const m = /listening on (\S+)/.exec(text);
      if (m) (clearTimeout(timer), resolve(m[1]!));
    });
    child.once('exit', (code) => (clearTimeout(timer), reject(new Error(`notes server exited (${code}): ${text}`))));
  });
  return { url, stop: () => void child.kill('SIGKILL') };
}

/** A replay's verdicts, exchange by exchange (row ids aside). */
async function verdicts(file: string, server: string[]): Promise<{ code: number; counts: unknown; exchanges: unknown[] }> {
  const r = await mcptap(['replay', file, '--rules', rulesBeside(file), '--json', '-', '--', ...server]);
  const report = JSON.parse(r.stdout) as JsonReport & { counts: unknown };
  const exchanges = report.exchanges.map((e) => [e.tool, e.recordedOutcome, e.replayedOutcome, e.differences.length]);
  return { code: r.code, counts: report.counts, exchanges };
}
const rulesBeside = (file: string) => join(file, '..', 'rules.yaml');

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

// The tests run at once (each writes files of its own, each replay has a server of its own), and
// so do the independent replays and mocks within them.
describe.concurrent('replay --update keeps what the baseline means (notes server, SDK 1.x client)', () => {
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

  it('a JSONL baseline replays and mocks with the same results as its SQLite twin', async () => {
    const jsonl = join(dir, 'twin.jsonl');
    expect((await mcptap(['export', db, '--jsonl', jsonl])).code).toBe(0);
    // Against the same server (same), and one that renamed create_note (different): each verdict alike.
    const renamed = [...NOTES, '--rename', 'create_note=add_note'];
    const servers = [NOTES, renamed];
    const pairs = await Promise.all(servers.map((server) => Promise.all([verdicts(db, server), verdicts(jsonl, server)])));
    for (const [i, [fromDb, fromJsonl]] of pairs.entries()) {
      expect(fromJsonl).toEqual(fromDb);
      expect(fromDb.code).toBe(servers[i] === NOTES ? 0 : 1);
    }
    const [mockDb, mockJsonl] = await Promise.all([mockAnswers(db), mockAnswers(jsonl)]);
    expect(mockJsonl).toEqual(mockDb);
    expect(JSON.stringify(mockDb[1])).toMatch(/call mum/); // the recorded answer
    expect(mockDb[3]).toMatch(/-32088/); // a miss, in both
    // A text baseline that does not follow the format: refused with its line and field (exit 4).
    const bad = join(dir, 'bad.jsonl');
    writeFileSync(bad, '{"mcptap":"jsonl","version":1}\n{"t":1,"message":{}}\n');
    const refused = await mcptap(['replay', bad, '--', ...NOTES]);
    expect(refused.stderr).toBe(`mcptap: ${bad}:2: dir: missing (expected "c2s" (client to server) or "s2c")\n`);
    expect(refused.code).toBe(4);
  }, 120_000);

  it('--update next.jsonl twice against the same server: the same bytes but for what the rules normalise; replayed, it cancels again', async () => {
    const [a, b] = [join(dir, 'a.jsonl'), join(dir, 'b.jsonl')];
    const updates = await Promise.all([a, b].map((next) => mcptap(['replay', db, '--rules', rulesBeside(db), '--update', next, '--', ...NOTES])));
    for (const [i, next] of [a, b].entries()) {
      const r = updates[i]!;
      expect(r.stderr).toBe(`mcptap: wrote ${next}: 0 changed answers accepted\n`);
      expect(r.code).toBe(0);
    }
    const [linesA, linesB] = [a, b].map((f) => readFileSync(f, 'utf8').split('\n'));
    expect(linesA!.length).toBeGreaterThan(10);
    // Only create_note's answer (a new uuid and time) differs, and the rules normalise that away.
    const differing = linesA!.filter((l, i) => l !== linesB![i]);
    expect(differing).toHaveLength(1);
    expect(differing[0]).toMatch(/createdAt/);
    const normalised = (lines: string[]) =>
      lines.filter(Boolean).map((l) => {
        const line = JSON.parse(l) as { message?: unknown };
        const scope = { method: 'tools/call', tool: 'create_note' };
        return JSON.stringify(line.message !== undefined ? { ...line, message: normalise(loadRules(rulesBeside(db)), scope, line.message) } : line);
      });
    expect(normalised(linesB!)).toEqual(normalised(linesA!));
    expect(readFileSync(a, 'utf8')).toMatch(/"method":"notifications\/cancelled"/);

    const again = await mcptap(['replay', a, '--rules', rulesBeside(db), '--json', '-', '--', ...NOTES]);
    const report = JSON.parse(again.stdout) as JsonReport;
    expect(report.exchanges.find((e) => e.tool === 'summarize')).toMatchObject({ recordedOutcome: 'cancelled', replayedOutcome: 'cancelled' });
    expect(again.code).toBe(0);
    // Updated in place, as the README's loop does: said as the text baseline it replaced.
    const inPlace = await mcptap(['replay', a, '--rules', rulesBeside(db), '--update', a, '--force', '--', ...NOTES]);
    expect(inPlace.stderr).toContain(`mcptap: replaced ${a} (which held 1 recording) with the replayed traffic (--force)\n`);
    expect(inPlace.code).toBe(0);
    expect(normalised(readFileSync(a, 'utf8').split('\n'))).toEqual(normalised(linesA!));
  }, 120_000);

  it('over HTTP too: --update writes the cancellation it sent, and the new baseline cancels again', async () => {
    const server = await notesOverHttp();
    try {
      const next = join(dir, 'http.jsonl');
      const r = await mcptap(['replay', db, '--rules', rules, '--update', next, '--url', server.url]);
      expect(r.code).toBe(0);
      const lines = readFileSync(next, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { dir?: string; message?: { method?: string } });
      expect(lines.filter((l) => l.dir === 'c2s').map((l) => l.message!.method)).toContain('notifications/cancelled');
      expect(JSON.stringify(lines)).not.toMatch(/"session"/); // the server's session id differs on every run
      const again = await mcptap(['replay', next, '--rules', rules, '--json', '-', '--url', server.url]);
      const report = JSON.parse(again.stdout) as JsonReport;
      expect(report.exchanges.find((e) => e.tool === 'summarize')).toMatchObject({ recordedOutcome: 'cancelled', replayedOutcome: 'cancelled' });
      expect(again.code).toBe(0);
    } finally {
      server.stop();
    }
  }, 120_000);
});
