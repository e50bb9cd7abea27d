/**
 * The user's redaction rules end to end with the built CLI and real peers: `mcptap http --record`
 * in front of the reference server with an SDK 1.x client sending an Authorization header, a
 * cookie and an `api_key` argument; `mcptap redact` with a rules file afterwards; `mcptap stdio
 * --redact` with spans exported (content capture on) to an OTLP receiver in the test. Leaks are
 * looked for in the raw bytes of every file beside the recording (its -wal and -shm included).
 */
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { chmodSync, mkdtempSync, statSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { startHttpTapCli } from '../helpers/http-tap-cli.js';
import { startMockHttp } from '../helpers/mock-cli.js';
import { referenceServerPerSuite } from '../helpers/http-peers.js';
import { MCPTAP } from '../helpers/paths.js';
import { connectThroughTap } from '../helpers/tap-client.js';
import { startOtlpReceiver } from '../telemetry/otlp-receiver.js';
import { RecordingStore } from '../../src/store/recording-store.js';
import { processAlive } from '../helpers/signal-child.js';

const dir = mkdtempSync(join(tmpdir(), 'mcptap-redact-rules-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const TOKEN = /^redacted:hmac-sha256:[0-9a-f]{16}$/;
const AUTH = 'AUTH_SECRET_a1';
const COOKIE = 'COOKIE_SECRET_b2';
const API_KEY = 'APIKEY_SECRET_c3';
const NOTE = 'NOTE_PRIVATE_d4';

/** The bytes of the recording and of every file beside it named after it (-wal, -shm, leftovers). */
function bytesBeside(db: string): string {
  return readdirSync(dirname(db))
    .filter((f) => f.includes(basename(db)))
    .map((f) => readFileSync(join(dirname(db), f)).toString('latin1'))
    .join('\n');
}

/** The `tools/call` request arguments as stored in the frames, in order. */
function storedArguments(db: string): Record<string, string>[] {
  const sql = new BetterSqlite3(db, { readonly: true });
  try {
    return (sql.prepare("SELECT raw FROM frames WHERE kind = 'message' ORDER BY ord").all() as { raw: Buffer }[])
      .map((r) => JSON.parse(r.raw.toString()) as { method?: string; params?: { arguments?: Record<string, string> } })
      .filter((m) => m.method === 'tools/call')
      .map((m) => m.params!.arguments!);
  } finally {
    sql.close();
  }
}

/** Whether another connection has the file open (what mcptap redact refuses). */
function inUse(db: string): boolean {
  const sql = new BetterSqlite3(db, { fileMustExist: true, timeout: 0 });
  try {
    sql.pragma('locking_mode = EXCLUSIVE');
    sql.exec('BEGIN EXCLUSIVE; COMMIT');
    return false;
  } catch {
    return true;
  } finally {
    sql.close();
  }
}

function mcptap(args: string[], env: NodeJS.ProcessEnv = process.env) {
  return spawnSync(process.execPath, [MCPTAP, ...args], { encoding: 'utf8', env, timeout: 60_000 });
}

function rulesFile(name: string, text: string): string {
  const f = join(dir, name);
  writeFileSync(f, text);
  return f;
}

describe('redaction rules, end to end', () => {
  const reference = referenceServerPerSuite();
  const httpDb = join(dir, 'http.db');

  /** Two echo calls with the same api_key, a note, an Authorization header and a cookie, through `mcptap http --record db`. */
  async function recordThroughHttp(db: string): Promise<void> {
    const tap = await startHttpTapCli(reference().url, ['--record', db, '--log-level', 'warn']);
    const client = new Client({ name: 'redact-e2e', version: '1.0.0' });
    try {
      const transport = new StreamableHTTPClientTransport(new URL(tap.url), {
        requestInit: { headers: { Authorization: `Bearer ${AUTH}`, Cookie: `sid=${COOKIE}; theme=dark` } },
      });
      await client.connect(transport);
      for (const text of ['one', 'two']) await client.callTool({ name: 'echo', arguments: { text, api_key: API_KEY, note: NOTE } });
      await client.close();
    } finally {
      tap.child.kill('SIGTERM');
      expect(await tap.exited).toBe(0);
    }
  }

  it('http --record: the header, the cookie and api_key are nowhere in the bytes; mcptap redact then removes a field named by a rule', async () => {
    await recordThroughHttp(httpDb);
    const before = bytesBeside(httpDb);
    for (const secret of [AUTH, COOKIE, API_KEY]) expect(before, `${secret} in the recording`).not.toContain(secret);
    expect(before).toContain(NOTE); // no rule names it yet
    // The header and the cookie were recorded, as tokens.
    expect(before).toMatch(/"authorization":"redacted:hmac-sha256:[0-9a-f]{16}"/);
    expect(before).toMatch(/"cookie":"redacted:hmac-sha256:[0-9a-f]{16}"/);
    const args = storedArguments(httpDb);
    expect(args).toHaveLength(2);
    expect(args[0]!.api_key).toMatch(TOKEN);
    expect(args[1]!.api_key).toBe(args[0]!.api_key); // equal secrets, equal tokens

    const rules = rulesFile('note.yaml', 'version: 1\npaths:\n  - /params/arguments/note\n');
    chmodSync(httpDb, 0o640);
    const run = mcptap(['redact', httpDb, '--rules', rules]);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^redacted .*http\.db: \d+ of \d+ rows changed\n$/);
    expect(statSync(httpDb).mode & 0o777).toBe(0o640); // the rewritten file keeps the original's mode
    const after = bytesBeside(httpDb);
    for (const secret of [AUTH, COOKIE, API_KEY, NOTE]) expect(after, `${secret} after mcptap redact`).not.toContain(secret);
    const redacted = storedArguments(httpDb);
    expect(redacted.map((a) => a.api_key)).toEqual(args.map((a) => a.api_key)); // tokens already there are kept
    expect(redacted[0]!.note).toMatch(TOKEN);
    expect(redacted[1]!.note).toBe(redacted[0]!.note);
    expect(redacted.map((a) => a.text)).toEqual(['one', 'two']);
    // Still a recording: listed, its exchanges readable.
    const store = RecordingStore.open(httpDb);
    try {
      expect(store.listRecordings()).toHaveLength(1);
    } finally {
      store.close();
    }
    expect(readdirSync(dir).filter((f) => /\.redact(ed)?-/.test(f))).toEqual([]);
  });

  it('replay and mock still match on the redacted recording, and the mock never says the secrets', async () => {
    // The recording of the test above, after mcptap redact: api_key and note are tokens.
    expect(storedArguments(httpDb)[0]!.note).toMatch(TOKEN);
    // Asynchronously: the reference server runs in this process.
    const replay = await promisify(execFile)(process.execPath, [MCPTAP, 'replay', httpDb, '--pace', 'fast', '--url', reference().url], {
      env: { ...process.env, NO_COLOR: '1' },
      timeout: 60_000,
    });
    expect(replay.stdout).toMatch(/3 exchanges replayed: 3 same.*no differences/s); // a non-zero exit would have thrown

    // The client sends the real secrets; the mock redacts them as the tap did (note by the user's rule) and matches.
    const noteRule = rulesFile('note-mock.yaml', 'version: 1\npaths:\n  - /params/arguments/note\n');
    const mock = await startMockHttp(httpDb, ['--redact', noteRule]);
    const client = new Client({ name: 'redact-mock-e2e', version: '1.0.0' });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(mock.url)));
      for (const text of ['one', 'two']) {
        const r = (await client.callTool({ name: 'echo', arguments: { text, api_key: API_KEY, note: NOTE } })) as { content: { text: string }[] };
        expect(r.content[0]!.text).toContain(text);
      }
      const miss = await client.callTool({ name: 'echo', arguments: { text: 'three', api_key: API_KEY, note: NOTE } }).then(
        () => 'answered',
        (err: Error) => err.message,
      );
      expect(miss).toMatch(/no recorded request matches tools\/call .*"text":"three"/);
      expect(miss).toMatch(/<redacted>/);
      for (const secret of [API_KEY, NOTE]) expect(miss).not.toContain(secret);
      await client.close();
    } finally {
      const { code, stderr } = await mock.stop();
      expect(stderr).toMatch(/3 requests answered from the recording, 1 missed/); // initialize and the two calls
      for (const secret of [API_KEY, NOTE]) expect(stderr).not.toContain(secret);
      expect(code).toBe(0);
    }
  }, 60_000);

  it('a crash between the steps of mcptap redact leaves the original intact and openable', async () => {
    const db = join(dir, 'crash.db');
    await recordThroughHttp(db);
    const rules = rulesFile('note2.yaml', 'paths: [/params/arguments/text]\n');
    const argsBefore = storedArguments(db);
    for (const step of ['copied', 'redacted', 'written', 'checkpointed']) {
      const run = mcptap(['redact', db, '--rules', rules], { ...process.env, MCPTAP_TEST_REDACT_CRASH_AFTER: step });
      expect(run.signal, step).toBe('SIGKILL');
      expect(storedArguments(db), `after a crash after ${step}`).toEqual(argsBefore);
      const store = RecordingStore.open(db);
      store.close();
    }
    // The next run cleans up what the crashed ones left, and finishes; one more changes nothing.
    expect(mcptap(['redact', db, '--rules', rules]).status).toBe(0);
    expect(mcptap(['redact', db, '--rules', rules]).stdout).toMatch(/: 0 of \d+ rows changed/);
    expect(storedArguments(db).map((a) => a.text)).toEqual([expect.stringMatching(TOKEN), expect.stringMatching(TOKEN)]);
    expect(readdirSync(dir).filter((f) => /\.redact(ed)?-/.test(f))).toEqual([]);
  });

  it('refuses a recording a running tap is writing (exit 4)', async () => {
    const db = join(dir, 'busy.db');
    const tap = await startHttpTapCli(reference().url, ['--record', db, '--require-recording']);
    try {
      const client = new Client({ name: 'redact-e2e', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(tap.url)));
      await client.callTool({ name: 'echo', arguments: { text: 'x' } });
      await client.close();
      for (let i = 0; i < 100 && !RecordingStore.hasRecording(db); i++) await new Promise((r) => setTimeout(r, 100));
      const run = mcptap(['redact', db]);
      expect(run.status).toBe(4);
      expect(run.stderr).toMatch(/busy\.db is in use: a tap .* has it open/);
    } finally {
      tap.child.kill('SIGTERM');
      await tap.exited;
    }
    expect(mcptap(['redact', db]).status).toBe(0);
  });

  it('bad rules files: file:line: field: message, exit 4, for both taps and mcptap redact', () => {
    const bad = rulesFile('bad.yaml', 'version: 1\npaths:\n  - params/x\npatterns:\n  - "(a)\\\\1"\n');
    const expected = [/bad\.yaml:3: paths\[0\]: a JSON Pointer starts with "\/"/, /bad\.yaml:5: patterns\[0\]: cannot run in linear time/];
    for (const args of [
      ['http', '--upstream', reference().url, '--listen', '127.0.0.1:0', '--redact', bad],
      ['stdio', '--redact', bad, '--', process.execPath, MCPTAP, 'reference', '--stdio'],
      ['redact', httpDb, '--rules', bad],
    ]) {
      const run = mcptap(args);
      expect(run.status, args[0]).toBe(4);
      for (const re of expected) expect(run.stderr, args[0]).toMatch(re);
    }
    const missing = mcptap(['redact', httpDb, '--rules', join(dir, 'nope.yaml')]);
    expect(missing.status).toBe(4);
    expect(missing.stderr).toMatch(/cannot read the redaction rules .*nope\.yaml: no such file/);
  });

  it('stdio --redact: the rule applies to the recording and to the span content', async () => {
    const receiver = await startOtlpReceiver();
    const db = join(dir, 'stdio.db');
    const rules = rulesFile('stdio.yaml', 'paths: [/params/arguments/note]\npatterns: ["PAT_[A-Z]+_[0-9]+"]\n');
    const tapped = await connectThroughTap(
      ['--record', db, '--redact', rules, '--capture-content', '--otlp', receiver.url],
      [process.execPath, MCPTAP, 'reference', '--stdio'],
      { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_METRICS_EXPORTER: 'none', OTEL_BSP_SCHEDULE_DELAY: '100' },
    );
    const pid = tapped.transport.pid!;
    try {
      for (const text of ['a', 'b']) await tapped.client.callTool({ name: 'echo', arguments: { text: `${text} PAT_SECRET_42`, note: NOTE, api_key: API_KEY } });
      // The spans of both calls arrive while the tap runs (the host's close may stop it before a last flush).
      const received = await receiver.waitForSpans(3, 15_000).catch((err: Error) => {
        throw new Error(`${err.message}; the tap said: ${tapped.stderr()}`);
      });
      await tapped.close();
      const spans = JSON.stringify(received, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
      expect(spans).toContain('gen_ai.tool.call.arguments'); // content was captured
      for (const secret of [NOTE, API_KEY, 'PAT_SECRET_42']) expect(spans, `${secret} in the spans`).not.toContain(secret);
      expect(spans).toContain('redacted:hmac-sha256:');
    } finally {
      await receiver.close();
    }
    // The recording is complete once the tap has exited and its indexer (which may finish after it) let the file go.
    for (let i = 0; i < 200 && (processAlive(pid) || inUse(db)); i++) await new Promise((r) => setTimeout(r, 100));
    expect(inUse(db)).toBe(false);
    const args = storedArguments(db);
    expect(args).toHaveLength(2);
    expect(args[0]!.note).toMatch(TOKEN);
    expect(args[1]!.note).toBe(args[0]!.note);
    expect(args[0]!.text).toMatch(/^a redacted:hmac-sha256:[0-9a-f]{16}$/);
    for (const secret of [NOTE, API_KEY, 'PAT_SECRET_42']) expect(bytesBeside(db), `${secret} in the recording`).not.toContain(secret);
  });
});
