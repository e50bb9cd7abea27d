/**
 * `mcptap import` on bad input (exact `file:line: field: message` errors, exit 4, no OUT left) and
 * on a capture written by hand as another tool would; `mcptap merge` of recording files (one
 * holding two recordings) into one that `ls` and `show` read. The recordings come from the built
 * `mcptap stdio --record` around mcptap's own reference server.
 */
import { copyFileSync, existsSync, linkSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { MCPTAP } from '../helpers/paths.js';
import { connectThroughTap } from '../helpers/tap-client.js';
import { exchangeFacts, exchangesOf, mcptap } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'mcptap-import-merge-'));
const HEADER = '{"mcptap":"jsonl","version":1,"recording":{"transport":"stdio","target":"other-tool capture"}}';

function writeJsonl(name: string, lines: string[]): string {
  const file = join(dir, name);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

/** One recording through the built stdio tap around the reference server; `calls` echo calls. */
async function record(db: string, calls: number): Promise<void> {
  const tapped = await connectThroughTap(['--record', db], [process.execPath, MCPTAP, 'reference', '--stdio']);
  await tapped.client.listTools();
  for (let i = 0; i < calls; i++) await tapped.client.callTool({ name: 'echo', arguments: { text: `call ${i}` } });
  await tapped.close();
}

describe('mcptap import: bad input', () => {
  const cases: [string, string[], string][] = [
    [
      'a line that is not JSON',
      [HEADER, '{"t":"2026-01-01T00:00:00Z","dir":"c2s","message":{"jsonrpc":"2.0","id":1,"method":"ping"}}', '{not json'],
      ':3: (line): not JSON',
    ],
    [
      'a missing field',
      [HEADER, '{"t":"2026-01-01T00:00:00Z","message":{"jsonrpc":"2.0","id":1,"method":"ping"}}'],
      ':2: dir: missing (expected "c2s" (client to server) or "s2c")',
    ],
    ['a missing message', [HEADER, '{"t":"2026-01-01T00:00:00Z","dir":"c2s"}'], ':2: message: missing'],
    ['a bad time', [HEADER, '{"t":"yesterday","dir":"c2s","message":{}}'], ':2: t: expected an ISO 8601 time or µs since the epoch, got "yesterday"'],
    ['a bad HTTP status', [HEADER, '{"t":1,"dir":"s2c","http":{"status":"ok"},"message":{}}'], ':2: http.status: expected an integer, got "ok"'],
    ['no header', ['{"t":1,"dir":"c2s","message":{}}'], ':1: mcptap: the first line must be the header'],
    ['a newer version', ['{"mcptap":"jsonl","version":99}'], ':1: version: version 99 is newer than this mcptap reads (1)'],
  ];

  it.each(cases)('%s: file:line: field: message, exit 4, no OUT left', (_name, lines, message) => {
    const file = writeJsonl('bad.jsonl', lines);
    const out = join(dir, 'bad-out.db');
    const r = mcptap(['import', file, '--into', out]);
    expect(r.code).toBe(4);
    const expected = `mcptap: ${file}${message}`;
    expect(r.stderr.slice(0, expected.length)).toBe(expected);
    expect(r.stderr.split('\n').filter(Boolean)).toHaveLength(1);
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(dir).filter((f) => f.includes('.tmp'))).toEqual([]);
  });

  it('a missing file: MCPTAP_IMPORT_MISSING, exit 4', () => {
    const r = mcptap(['import', join(dir, 'nope.jsonl')]);
    expect([r.code, r.stderr.trim()]).toEqual([4, `mcptap: no such file: ${join(dir, 'nope.jsonl')}`]);
  });
});

describe('mcptap import: a capture from another tool', () => {
  it('correlates, times and redacts it as live', () => {
    const file = writeJsonl('other.jsonl', [
      HEADER,
      '{"t":"2026-01-01T00:00:00.000100Z","dir":"c2s","message":{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"login","arguments":{"password":"hunter2"}}}}',
      '{"t":"2026-01-01T00:00:00.000300Z","dir":"c2s","message":{"jsonrpc":"2.0","id":7,"method":"tools/list"}}',
      '{"t":"2026-01-01T00:00:00.002100Z","dir":"s2c","message":{"jsonrpc":"2.0","id":"a","result":{"content":[]}}}',
      '{"t":1767225600005000,"dir":"s2c","message":{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"no"}}}',
    ]);
    const out = join(dir, 'other.db');
    const r = mcptap(['import', file, '--into', out]);
    expect(r.code).toBe(0);
    const [call, list] = exchangesOf(out);
    expect(call).toMatchObject({ method: 'tools/call', target: 'login', outcome: 'ok', latencyUs: 2000, id: 'a' });
    expect(JSON.stringify(call!.request)).not.toContain('hunter2');
    expect(list).toMatchObject({ method: 'tools/list', outcome: 'jsonrpc_error', errorCode: -32601, latencyUs: 4700, id: 7 });
    // OUT exists now: refused without --force (exit 2), replaced with it.
    expect(mcptap(['import', file, '--into', out]).code).toBe(2);
    expect(mcptap(['import', file, '--into', out, '--force']).code).toBe(0);
  });
});

interface Listed {
  id: number;
  target: string;
  startedUs: number;
  endedUs: number;
  exchanges: number;
}

function listing(file: string): Listed[] {
  const r = mcptap(['ls', file, '--json']);
  expect(r.code).toBe(0);
  const recordings = (JSON.parse(r.stdout) as { recordings: (Listed & { summary: { exchanges: number } })[] }).recordings;
  return recordings.map((x) => ({ id: x.id, target: x.target, startedUs: x.startedUs, endedUs: x.endedUs, exchanges: x.summary.exchanges }));
}

describe('mcptap merge', () => {
  const a = join(dir, 'a.db');
  const b = join(dir, 'b.db');

  beforeAll(async () => {
    await record(a, 1);
    await record(a, 2); // a second recording in the same file
    await record(b, 3);
  });

  it('puts every recording into OUT with its exchanges unchanged; ls and show read it', () => {
    const out = join(dir, 'all.db');
    const r = mcptap(['merge', out, a, b]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`merged 3 recordings into ${out}`);
    const listed = listing(out);
    expect(listed).toHaveLength(3);
    // Original target, start time and exchange counts; new ids 1..3.
    expect(listed.map(({ id, ...rest }) => rest)).toEqual([...listing(a), ...listing(b)].map(({ id, ...rest }) => rest));
    expect(listed.map((r) => r.id)).toEqual([1, 2, 3]);
    const sources: [string, number][] = [
      [a, 1],
      [a, 2],
      [b, 1],
    ];
    sources.forEach(([file, id], i) => {
      expect(exchangesOf(out, i + 1).map(exchangeFacts)).toEqual(exchangesOf(file, id).map(exchangeFacts));
    });
    expect(exchangesOf(out, 3).filter((e) => e.method === 'tools/call')).toHaveLength(3);
    const show = mcptap(['show', out, '--recording', '2', '--exchange', '3']);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain('tools/call');
  });

  it('refuses an existing OUT without --force, and a bad input with MCPTAP_MERGE_RECORDINGS_INVALID (exit 4)', () => {
    const out = join(dir, 'twice.db');
    expect(mcptap(['merge', out, a]).code).toBe(0);
    const again = mcptap(['merge', out, b]);
    expect([again.code, again.stderr.trim()]).toEqual([2, `mcptap: ${out} exists; pass --force to overwrite it`]);
    expect(mcptap(['merge', out, b, '--force']).code).toBe(0);
    const notDb = join(dir, 'notes.txt');
    writeFileSync(notDb, 'not a database\n');
    const bad = mcptap(['merge', join(dir, 'never.db'), a, notDb]);
    expect(bad.code).toBe(4);
    expect(bad.stderr).toMatch(new RegExp(`^mcptap: cannot merge ${notDb.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: .*not an mcptap recording`));
    expect(existsSync(join(dir, 'never.db'))).toBe(false);
  });

  it("an OUT that is a directory, or where SQLite keeps the input's side file, is refused (exit 2)", () => {
    const merged = mcptap(['merge', dir, a, '--force']);
    expect([merged.code, merged.stderr]).toEqual([2, `mcptap: ${dir} is a directory; give a file\n`]);
    const side = mcptap(['export', a, '--jsonl', `${a}-wal`]);
    expect(side.code).toBe(2);
    expect(side.stderr).toContain(`${a}-wal is where SQLite keeps the input ${a}'s wal file`);
    expect(existsSync(`${a}-wal`)).toBe(false);
  });

  it('refuses a file given twice, under any name (exit 2), before writing OUT', () => {
    const out = join(dir, 'doubled.db');
    const hard = join(dir, 'a-hard-link.db');
    linkSync(a, hard);
    for (const twice of [`${dir}/./a.db`, hard]) {
      const r = mcptap(['merge', out, a, b, twice]);
      expect([r.code, r.stderr]).toEqual([2, `mcptap: ${twice} is given twice (as ${a} and ${twice}): each file is merged once\n`]);
      expect(existsSync(out)).toBe(false);
    }
  });

  it('a recording not closed (its tap killed) is merged ending at its last event, INCOMPLETE, and said', () => {
    const killed = join(dir, 'killed.db');
    copyFileSync(b, killed);
    const db = new Database(killed);
    db.prepare('UPDATE recordings SET ended_us = NULL').run(); // as a tap killed before it could close it
    db.close();
    const out = join(dir, 'with-killed.db');
    const r = mcptap(['merge', out, a, killed]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`${killed} recording 1 -> 3 (`);
    expect(r.stdout).toMatch(/events; INCOMPLETE: not closed when merged \(its tap was still running, or it or its indexer was killed\)\)/);
    expect(r.stderr).toBe(
      'mcptap warn: 1 of the recordings merged was not closed (a tap still running, or killed): merge again once it has stopped to get all of its traffic\n',
    );
    const listed = JSON.parse(mcptap(['ls', out, '--json']).stdout) as {
      recordings: { endedUs: number; complete: boolean; meta: { incomplete?: string }; summary: { exchanges: number } }[];
    };
    const copy = listed.recordings[2]!;
    expect(copy.complete).toBe(false);
    expect(copy.meta.incomplete).toBe('not closed when merged (its tap was still running, or it or its indexer was killed)');
    // Its end is its last event's (the connection's close, after the last answer), not the merge's time.
    const lastAnswer = Math.max(...exchangesOf(killed, 1).map((e) => e.endUs ?? e.startUs));
    expect(copy.endedUs).toBeGreaterThanOrEqual(lastAnswer);
    expect(copy.endedUs).toBeLessThanOrEqual(listing(b)[0]!.endedUs!);
    expect(copy.summary.exchanges).toBe(listing(b)[0]!.exchanges);
  });
});

describe('command line', () => {
  it('export takes exactly one of --otlp, --jsonl, --har (exit 2 otherwise)', () => {
    const none = mcptap(['export', join(dir, 'a.db')]);
    expect([none.code, none.stderr.trim()]).toEqual([2, 'mcptap: export needs exactly one of --otlp URL, --jsonl [OUT] or --har [OUT]']);
    const two = mcptap(['export', join(dir, 'a.db'), '--jsonl', '--har']);
    expect([two.code, two.stderr.trim()]).toEqual([2, 'mcptap: export needs exactly one of --otlp URL, --jsonl [OUT] or --har [OUT] (got --jsonl and --har)']);
  });

  it('merge and merge-results each say what they are for, and point to the other', () => {
    const flat = (s: string) => s.replace(/\s+/g, ' ');
    const merge = flat(mcptap(['merge', '--help']).stdout);
    const results = flat(mcptap(['merge-results', '--help']).stdout);
    expect(merge).toMatch(/Copies every recording of every IN file/);
    expect(merge).toContain('mcptap merge all.db tap-a.db tap-b.db');
    expect(merge).toContain('For load-test results (mcptap load --json), use mcptap merge-results');
    expect(results).toMatch(/Merges the JSON results of load-test shards/);
    expect(results).toContain('For recording files (several taps), use mcptap merge.');
    const top = mcptap(['--help']).stdout;
    expect(top).toMatch(/import \[options\] <file>/);
    expect(top).toMatch(/merge \[options\] <out> <in\.\.\.>/);
  });
});
