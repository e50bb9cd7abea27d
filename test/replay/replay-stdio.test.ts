/**
 * `mcptap replay` with real peers: a session of the SDK 1.x client with server-everything, recorded
 * through `mcptap stdio --record`, replayed against a fresh server-everything (no difference), a
 * wrapper that rewrites the echo tool's text (exactly that difference), one that exits mid-replay,
 * a server request answered from the recording (or not: reported),
 * and bad input (not a recording, no exchanges, invalid rules, a command that does not exist).
 */
import { copyFileSync, existsSync, linkSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { XMLParser } from 'fast-xml-parser';
import { beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES, MCPTAP } from '../helpers/paths.js';
import { EVERYTHING, everythingSession, mcptap, RECORDED, samplingSession, stdioTransport } from './replay-helpers.js';
import { RecordingStore } from '../../src/store/recording-store.js';

/** Files in `dir` other than `keep`: no half-written output may remain. */
function strayFiles(dir: string, keep: string[]): string[] {
  return readdirSync(dir).filter((f) => !keep.includes(f));
}

const REWRITER = [process.execPath, join(FIXTURES, 'echo-rewriter.mjs'), EVERYTHING, 'stdio'];
const replay = (args: string[]) => mcptap(['replay', ...args]);
const fast = ([file, ...rest]: string[]) => replay([file!, '--pace', 'fast', ...rest]);

// The four groups below run at once: each has a folder and recordings of its own.
// Independent replays of one recording (each writes files of its own): at once.
describe.concurrent('mcptap replay over stdio (server-everything, SDK 1.x client)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-replay-'));
  const db = join(dir, 'everything.db');

  beforeAll(async () => {
    await everythingSession(stdioTransport([MCPTAP, 'stdio', '--record', db, '--', EVERYTHING, 'stdio']));
  }, 60_000);

  it('replays against a fresh server with no difference (exit 0)', async () => {
    const out = join(dir, 'same');
    // The recorded pace: the recorded gaps between requests.
    const r = await replay([db, '--json', `${out}.json`, '--junit', `${out}.xml`, '--', EVERYTHING, 'stdio']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/8 exchanges replayed: 8 same, 0 different, 0 without response; no differences/);
    // stdio has no SSE: no streamed-answer table of replayed-only figures (it had one per method).
    expect(r.stdout).not.toContain('streamed answers (SSE)');
    const json = JSON.parse(readFileSync(`${out}.json`, 'utf8')) as {
      counts: { differences: number };
      exchanges: { method: string; tool?: string }[];
      streams?: unknown[];
    };
    expect(json.streams ?? []).toEqual([]);
    expect(json.counts.differences).toBe(0);
    expect(json.exchanges.map((e) => e.tool ?? e.method)).toEqual(RECORDED);
  }, 60_000);

  it('names the changed exchange, tool, path and both values when the server changed (exit 1)', async () => {
    const junit = join(dir, 'rewritten.xml');
    const r = await fast([db, '--junit', junit, '--', ...REWRITER]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/✗ exchange #\d+ \(id 2\) tools\/call echo/);
    expect(r.stdout).toContain('/result/content/0/text: changed');
    expect(r.stdout).toContain('- recorded: "Echo: héllo"');
    expect(r.stdout).toContain('+ replayed: "Echo (rewritten): héllo"');
    expect(r.stdout).toMatch(/1 different/);
    const xml = new XMLParser({ ignoreAttributes: false }).parse(readFileSync(junit, 'utf8')) as {
      testsuites: { '@_failures': string; testsuite: { '@_name': string; testcase: unknown } | { '@_name': string; testcase: unknown }[] };
    };
    expect(xml.testsuites['@_failures']).toBe('1');
    const suites = [xml.testsuites.testsuite].flat();
    const failing = suites.flatMap((s) => [s.testcase].flat() as { failure?: { '@_message': string } }[]).filter((c) => c.failure);
    expect(failing).toHaveLength(1);
    expect(failing[0]!.failure!['@_message']).toBe('/result/content/0/text: changed');
  }, 60_000);

  it('passes a difference the rules ignore', async () => {
    const rules = join(dir, 'ignore-echo.yaml');
    writeFileSync(rules, 'rules:\n  - tool: echo\n    ignore: /result/content/0/text\n');
    const r = await fast([db, '--rules', rules, '--', ...REWRITER]);
    expect(r.code).toBe(0);
  }, 60_000);

  it('writes the replay as a new recording with --update, itself replayable', async () => {
    const next = join(dir, 'next.db');
    const r = await fast([db, '--update', next, '--', ...REWRITER]);
    expect(r.stderr).toContain(`mcptap: wrote ${next}: 1 changed answer accepted\n`);
    expect(r.code).toBe(0); // the accept step succeeds: the update was written
    const store = RecordingStore.open(next);
    try {
      const [rec] = store.listRecordings();
      const ex = store.exchanges({ recordingId: rec!.id, target: 'echo' });
      expect(ex).toHaveLength(1);
      expect(JSON.stringify(ex[0]!.response)).toContain('Echo (rewritten)');
    } finally {
      store.close();
    }
    const again = await fast([next, '--', ...REWRITER]);
    expect(again.stdout).toMatch(/no differences/);
    expect(again.code).toBe(0);
  }, 90_000);

  it('reports a server that exits mid-replay as exchanges without response (exit 1), not a crash', async () => {
    const out = join(dir, 'exit');
    const r = await fast([
      db,
      '--json',
      `${out}.json`,
      '--junit',
      `${out}.xml`,
      '--',
      process.execPath,
      join(FIXTURES, 'exit-on-tool.mjs'),
      'get-tiny-image',
      EVERYTHING,
      'stdio',
    ]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/target failed: server process exited \(code 3\)/);
    // The counts after the colon are of the 5 sent: the 3 not sent are neither same nor different.
    expect(r.stdout).toMatch(/5 of 8 exchanges replayed \(3 not sent\): 4 same, 1 different, 1 without response/);
    // Not sent is not a difference: those exchanges are counted, not listed.
    expect(r.stdout).not.toContain('not sent: the target had failed');
    const json = JSON.parse(readFileSync(`${out}.json`, 'utf8')) as {
      counts: Record<string, number>;
      notSent: number;
      failure: string;
      exchanges: { notSent?: true; differences: unknown[] }[];
    };
    expect(json.counts).toMatchObject({ exchanges: 8, same: 4, different: 1, noResponse: 1, notSent: 3, differences: 1 });
    expect(json.exchanges.filter((e) => e.notSent).map((e) => e.differences)).toEqual([[], [], []]);
    expect(json.notSent).toBe(3);
    expect(json.failure).toMatch(/server process exited \(code 3\)/);
    // JUnit: a case that could not run is an error, not a failure.
    const xml = new XMLParser({ ignoreAttributes: false }).parse(readFileSync(`${out}.xml`, 'utf8')) as {
      testsuites: { '@_failures': string; '@_errors': string; testsuite: { testcase: unknown } | { testcase: unknown }[] };
    };
    expect([xml.testsuites['@_failures'], xml.testsuites['@_errors']]).toEqual(['1', '3']);
    const cases = [xml.testsuites.testsuite].flat().flatMap((s) => [s.testcase].flat() as { error?: { '@_type': string } }[]);
    expect(cases.filter((c) => c.error?.['@_type'] === 'not_sent')).toHaveLength(3);
  }, 60_000);
});

// One test at a time: each checks the folder holds no file but those of the tests before it.
describe.concurrent('mcptap replay refuses bad input with a clear message and the documented exit code', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-replay-bad-'));
  const outputs = ['--json', join(dir, 'r.json'), '--junit', join(dir, 'r.xml'), '--update', join(dir, 'u.db')];
  const noOutputs = (keep: string[]) => expect(strayFiles(dir, keep)).toEqual([]);

  it.sequential('a file that is not a recording: exit 4', async () => {
    const file = join(dir, 'notes.txt');
    writeFileSync(file, 'hello\n');
    const r = await replay([file, ...outputs, '--', EVERYTHING, 'stdio']);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/not an mcptap recording/);
    noOutputs(['notes.txt']);
  });

  it.sequential('a recording with no exchanges: exit 4', async () => {
    const file = join(dir, 'empty.db');
    const store = RecordingStore.open(file, { create: true });
    store.beginRecording({ transport: 'stdio', target: 'x', startedUs: Date.now() * 1000, mcptapVersion: 'test' });
    store.close();
    const r = await replay([file, ...outputs, '--', EVERYTHING, 'stdio']);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/MCPTAP_REPLAY_NO_EXCHANGES|no client requests to replay/);
    noOutputs(['notes.txt', 'empty.db']);
  });

  it.sequential(
    'a rules file with an unknown field: exit 4 with file:line',
    async () => {
      const db = join(dir, 'one.db');
      await everythingSession(stdioTransport([MCPTAP, 'stdio', '--record', db, '--', EVERYTHING, 'stdio']));
      const rules = join(dir, 'rules.yaml');
      writeFileSync(rules, 'rules:\n  - ignore: /result/x\n    colour: blue\n');
      const r = await replay([db, '--rules', rules, ...outputs, '--', EVERYTHING, 'stdio']);
      expect(r.code).toBe(4);
      expect(r.stderr).toMatch(/rules\.yaml:3/);
      noOutputs(['one.db', 'rules.yaml', 'notes.txt', 'empty.db']);

      const down = await replay([db, ...outputs, '--', join(dir, 'no-such-server')]);
      expect(down.code).toBe(5);
      expect(down.stderr).toMatch(/no-such-server/);
      // One sentence of advice, and no doubled full stop.
      expect(down.stderr.match(/Check the command after --/g)).toHaveLength(1);
      expect(down.stderr).not.toContain('..');
      // A target never reached: the reports are written all the same (every exchange not sent), for CI to publish; no --update.
      noOutputs(['one.db', 'rules.yaml', 'notes.txt', 'empty.db', 'r.json', 'r.xml']);
      const downReport = JSON.parse(readFileSync(join(dir, 'r.json'), 'utf8')) as { counts: { exchanges: number; notSent: number } };
      expect(downReport.counts.notSent).toBe(downReport.counts.exchanges);

      const refused = await replay([db, ...outputs, '--url', 'http://127.0.0.1:1/mcp']); // nothing listens on port 1
      expect(refused.code).toBe(5);
      expect(refused.stderr).toMatch(/http:\/\/127\.0\.0\.1:1\/mcp did not answer: .*connection refused/);
      noOutputs(['one.db', 'rules.yaml', 'notes.txt', 'empty.db', 'r.json', 'r.xml']);
      const xml = readFileSync(join(dir, 'r.xml'), 'utf8');
      expect(xml).toMatch(/message="[^"]*connection refused/);
      expect(xml).toContain('type="not_sent"');
    },
    60_000,
  );
});

// The first alone (it checks the recording's bytes are unchanged); the rest, each with files of
// its own, at once.
describe.concurrent('mcptap replay output paths', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-replay-out-'));
  const db = join(dir, 'everything.db');
  // A "server" that leaves a mark if it is ever started: a refused output must stop replay before that.
  const marker = join(dir, 'started');
  const marking = [process.execPath, '-e', `require('fs').writeFileSync(${JSON.stringify(marker)}, '')`];

  beforeAll(async () => {
    await everythingSession(stdioTransport([MCPTAP, 'stdio', '--record', db, '--', EVERYTHING, 'stdio']));
  }, 60_000);

  it.sequential('an output that cannot be written is refused before anything is replayed (exit 2)', async () => {
    const other = join(dir, 'other.db');
    copyFileSync(db, other);
    const hardLink = join(dir, 'same-file.db'); // the recording under another name
    linkSync(db, hardLink);
    const before = readFileSync(db);
    const refusals = [
      [['--junit', join(dir, 'no-such-dir', 'r.xml')], /cannot write there \(ENOENT\)/],
      [['--json', dir], /cannot write there \(EISDIR\)/],
      [['--update', dir, '--force'], /cannot write there \(EISDIR\)/],
      [['--junit', '-'], /only --json can go to stdout/],
      // Outputs that would destroy what is read, or each other.
      [['--json', db], /is the input .*; each output needs a file of its own/],
      [['--json', hardLink], /is the input .*; each output needs a file of its own/],
      [['--json', `${db}-wal`], /is where SQLite keeps the input .*'s wal file/],
      [['--junit', other], /is a recording; a report would replace it/],
      [['--update', join(dir, 'u.db'), '--json', join(dir, 'u.db')], /is given to --json too; each output needs a file of its own/],
    ] as const;
    // Each is refused before anything runs or is written: all at once.
    const runs = await Promise.all(refusals.map(([args]) => replay([db, ...args, '--', ...marking])));
    for (const [i, [args, why]] of refusals.entries()) {
      const r = runs[i]!;
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(new RegExp(`^mcptap: ${args[0]} .*`));
      expect(r.stderr).toMatch(why);
      expect(r.stdout).toBe('');
    }
    expect(existsSync(marker)).toBe(false);
    expect(readFileSync(db).equals(before)).toBe(true);
    expect(existsSync(join(dir, 'u.db'))).toBe(false);
  });

  it('--update is not written when the target failed mid-replay; in place, says how many recordings the file held', async () => {
    copyFileSync(db, db.replace(/\.db$/, '-copy.db'));
    const next = join(dir, 'died-next.db');
    const dies = [process.execPath, join(FIXTURES, 'exit-on-tool.mjs'), 'get-tiny-image', EVERYTHING, 'stdio'];
    const r = await fast([db, '--update', next, '--', ...dies]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`mcptap: --update ${next} not written: the target failed \\(server process exited \\(code 3\\)`));
    expect(existsSync(next)).toBe(false);
    // A file of two recordings replaced by the replay of one: said.
    const two = join(dir, 'two.db');
    expect((await mcptap(['merge', two, db, db.replace(/\.db$/, '-copy.db')])).code).toBe(0);
    const inPlace = await fast([two, '--recording', '1', '--update', two, '--force', '--', EVERYTHING, 'stdio']);
    expect(inPlace.code).toBe(0);
    expect(inPlace.stderr).toContain(`mcptap: replaced ${two} (which held 2 recordings) with the replayed traffic (--force)`);
  }, 90_000);

  it('--update onto a file that exists needs --force (exit 2 before anything runs); with it, says the file was replaced', async () => {
    const copy = join(dir, 'baseline.db');
    copyFileSync(db, copy);
    const before = readFileSync(copy);
    const refused = await replay([copy, '--update', copy, '--', ...marking]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe(`mcptap: --update ${copy} exists; pass --force to replace it with the replayed traffic\n`);
    expect(existsSync(marker)).toBe(false);
    expect(readFileSync(copy).equals(before)).toBe(true);
    // In place of the recording replayed: the new baseline is a recording of its own, and replays clean.
    const forced = await fast([copy, '--update', copy, '--force', '--', EVERYTHING, 'stdio']);
    expect(forced.code).toBe(0);
    expect(forced.stderr).toContain(`mcptap: replaced ${copy} (which held 1 recording) with the replayed traffic (--force)`);
    const store = RecordingStore.open(copy);
    try {
      expect(store.listRecordings().map((r) => r.meta)).toEqual([{ replay: true }]);
    } finally {
      store.close();
    }
    const again = await fast([copy, '--', EVERYTHING, 'stdio']);
    expect(again.stdout).toMatch(/no differences/);
    expect(again.code).toBe(0);
  }, 90_000);

  it('--since not before --until is a usage error (exit 2), not "no exchanges"', async () => {
    const r = await replay([db, '--since', '10s', '--until', '5s', '--', ...marking]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('mcptap: --since 10s is not before --until 5s: nothing can be replayed between them\n');
    expect(existsSync(marker)).toBe(false);
  });

  it("a server that crashes names Node's error line, not its version line, as the reason", async () => {
    const crashing = [
      "const rl = require('readline').createInterface({ input: process.stdin });",
      "rl.on('line', (l) => { const m = JSON.parse(l);",
      "  if (m.method === 'initialize') process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'crash', version: '1' } } }) + '\\n');",
      "  else if (m.id !== undefined) throw new Error('boom on ' + m.method); });",
    ].join('\n');
    const r = await fast([db, '--', process.execPath, '-e', crashing]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/target failed: server process exited \(code 1\); its stderr ended with: Error: boom on \S+/);
    expect(r.stdout).not.toMatch(/Node\.js v\d/);
  });

  it('--json - puts the JSON on stdout and the text report on stderr', async () => {
    const r = await fast([db, '--json', '-', '--', EVERYTHING, 'stdio']);
    expect(r.code).toBe(0);
    expect(existsSync('-')).toBe(false);
    const json = JSON.parse(r.stdout) as { counts: { exchanges: number; differences: number } };
    expect(json.counts).toMatchObject({ exchanges: RECORDED.length, differences: 0 });
    expect(r.stderr).toMatch(/exchanges replayed: \d+ same, 0 different/);
  }, 60_000);
});

describe.concurrent('mcptap replay answers the server’s own requests from the recording', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-replay-sampling-'));
  const db = join(dir, 'sampling.db');

  beforeAll(async () => {
    await samplingSession(db);
  }, 60_000);

  it('answers sampling/createMessage with the recorded answer: the call is the same', async () => {
    const r = await fast([db, '--', EVERYTHING, 'stdio']);
    expect(r.stdout).toMatch(/2 exchanges replayed: 2 same/);
    expect(r.code).toBe(0);
  }, 60_000);

  it('reports a server request the recording has no answer for', async () => {
    // Fault injection a real peer cannot give: the recording without the host's answer.
    const copy = join(dir, 'no-answer.db');
    copyFileSync(db, copy);
    const raw = new Database(copy);
    raw.prepare("DELETE FROM exchanges WHERE direction = 's2c'").run();
    raw.close();
    const r = await fast([copy, '--', EVERYTHING, 'stdio']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/tools\/call trigger-sampling-request\n {4}the server sent a sampling\/createMessage request the recording has no answer for/);
  }, 60_000);
});
