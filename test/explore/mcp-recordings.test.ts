/**
 * `mcptap mcp` with real peers: two recordings made through `mcptap stdio --record` of the SDK 1.x
 * client and server-everything; the recordings server driven by the SDK 1.x client over stdio (and
 * over HTTP, with the SDK 2.x client in the 2026-07-28 era). Each tool's answer is checked against
 * what the store and `mcptap show --json` hold; secrets stay redacted; hostile filters do not escape.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernHttpTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport as ModernStdioTransport } from '@modelcontextprotocol/client/stdio';
import { BIN, MCPTAP, ROOT } from '../helpers/paths.js';
import { RecordingStore } from '../../src/store/recording-store.js';

const EVERYTHING = join(BIN, 'mcp-server-everything');
const SECRET = 'SEKRIT-4242';

/** Records one session of the SDK 1.x client with server-everything through the tap: `echoes` echo calls, one carrying a secret in a field the tap redacts. */
async function record(db: string, echoes: number): Promise<void> {
  const client = new Client({ name: 'mcptap-explore-test', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({ command: process.execPath, args: [MCPTAP, 'stdio', '--record', db, '--', EVERYTHING, 'stdio'], stderr: 'pipe' }),
  );
  try {
    await client.listTools();
    await client.callTool({ name: 'echo', arguments: { message: 'hello 0', password: SECRET } });
    for (let i = 1; i < echoes; i++) await client.callTool({ name: 'echo', arguments: { message: `hello ${i}` } });
    await client.callTool({ name: 'get-sum', arguments: { a: 2, b: 3 } });
    await client.callTool({ name: 'get-sum', arguments: { a: 'not a number' } });
  } finally {
    await client.close();
  }
}

type Json = Record<string, unknown>;

async function call(client: Client, name: string, args: Json = {}): Promise<{ json: Json; text: string; isError: boolean }> {
  const r = (await client.callTool({ name, arguments: args })) as { content: { type: string; text: string }[]; isError?: boolean };
  const text = r.content[0]!.text;
  return { text, isError: r.isError === true, json: r.isError ? {} : (JSON.parse(text) as Json) };
}

const dir = mkdtempSync(join(tmpdir(), 'mcptap-explore-'));
const a = join(dir, 'a.db');
const b = join(dir, 'b.db');
let client: Client;
const seen: string[] = [];
/** The files' modification times once recorded, before `mcptap mcp` opened them. */
let recordedMtimes: number[];

beforeAll(async () => {
  await record(a, 3);
  await record(b, 1);
  recordedMtimes = [a, b].map((f) => statSync(f).mtimeMs);
  client = new Client({ name: 'agent', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [MCPTAP, 'mcp', a, b, '--stdio'], stderr: 'pipe' }));
}, 60_000);
afterAll(async () => {
  await client?.close();
});

/** Every tool answer the tests saw, for the secret check. */
async function tool(name: string, args: Json = {}) {
  const r = await call(client, name, args);
  seen.push(r.text);
  return r;
}

function storeOf(file: string): RecordingStore {
  return RecordingStore.open(file, { readOnly: true });
}

describe('mcptap mcp over stdio (SDK 1.x client)', () => {
  it('lists the recordings of both files with their counts', async () => {
    const { json } = await tool('list_recordings');
    const recs = json.recordings as Json[];
    expect(recs.map((r) => [r.file, r.recording])).toEqual([
      ['a.db', 1],
      ['b.db', 1],
    ]);
    const s = storeOf(a);
    try {
      expect(recs[0]!.exchanges).toBe(s.exchanges({ recordingId: 1 }).length);
    } finally {
      s.close();
    }
    // initialize, tools/list, 3 echo, 2 get-sum; b: one echo fewer... two fewer.
    expect(recs[0]!.exchanges).toBe(7);
    expect(recs[1]!.exchanges).toBe(5);
  });

  it('finds the calls of one tool, and only those', async () => {
    const { json } = await tool('find_exchanges', { file: 'a.db', tool: 'echo' });
    const rows = json.exchanges as Json[];
    expect(rows).toHaveLength(3);
    expect(rows.every((r) => r.method === 'tools/call' && r.target === 'echo' && r.outcome === 'ok')).toBe(true);
    const s = storeOf(a);
    try {
      expect(rows.map((r) => r.row)).toEqual(s.exchanges({ recordingId: 1, method: 'tools/call', target: 'echo' }).map((e) => e.rowid));
    } finally {
      s.close();
    }
    const errors = await tool('find_exchanges', { file: 'a.db', outcome: 'tool_error' });
    expect((errors.json.exchanges as Json[]).map((r) => r.target)).toEqual(['get-sum']);
    expect(errors.json.more).toBe(0);
  });

  it('pages with a cursor and says how many more', async () => {
    const first = await tool('find_exchanges', { file: 'a.db', limit: 3 });
    expect((first.json.exchanges as Json[]).length).toBe(3);
    expect(first.json.more).toBe(4);
    expect(first.json.note).toMatch(/^4 more; pass cursor/);
    const second = await tool('find_exchanges', { file: 'a.db', limit: 10, cursor: first.json.cursor });
    expect(second.json.more).toBe(0);
    expect(second.json.cursor).toBeUndefined();
    const rows = [...(first.json.exchanges as Json[]), ...(second.json.exchanges as Json[])].map((r) => r.row);
    expect(rows).toHaveLength(7);
    expect(new Set(rows).size).toBe(7);
    expect(rows).toEqual([...rows].sort((x, y) => (x as number) - (y as number)));
  });

  it('lists the slowest first on request, as the store’s latencies rank them', async () => {
    const { json } = await tool('find_exchanges', { file: 'a.db', slowest: true, limit: 5 });
    const s = storeOf(a);
    let ranked: number[];
    try {
      ranked = s
        .exchanges({ recordingId: 1 })
        .filter((e) => e.latencyUs !== undefined)
        .sort((x, y) => y.latencyUs! - x.latencyUs!)
        .map((e) => e.rowid);
    } finally {
      s.close();
    }
    expect((json.exchanges as Json[]).map((r) => r.row)).toEqual(ranked.slice(0, 5));
    expect(json.more).toBe(ranked.length - 5);
    expect(json.note).toMatch(/more, not listed/);
    expect(json.cursor).toBeUndefined();
    const withCursor = await tool('find_exchanges', { file: 'a.db', slowest: true, cursor: '3' });
    expect(withCursor.isError).toBe(true);
  });

  it('gives an exchange with the frames `mcptap show` gives', async () => {
    const { json: found } = await tool('find_exchanges', { file: 'a.db', tool: 'get-sum', outcome: 'ok' });
    const row = (found.exchanges as Json[])[0]!.row as number;
    const { json } = await tool('get_exchange', { file: 'a.db', row });
    const shown = JSON.parse(execFileSync(process.execPath, [MCPTAP, 'show', a, '--exchange', `#${row}`, '--json'], { encoding: 'utf8' })) as {
      frames: { seq: number; raw: string }[];
    };
    const frames = json.frames as { seq: number; payload: string }[];
    expect(frames.map((f) => f.seq)).toEqual(shown.frames.map((f) => f.seq));
    expect(frames.map((f) => f.payload)).toEqual(shown.frames.map((f) => f.raw));
    expect(json.exchange).toMatchObject({ row, method: 'tools/call', target: 'get-sum', outcome: 'ok' });
    expect(JSON.parse(json.response as string)).toMatchObject({ result: { content: [{ type: 'text' }] } });
    expect((json.timings as Json).latencyMs).toBeGreaterThan(0);
    // A row of another recording is not this one's.
    const other = await tool('get_exchange', { file: 'b.db', row: 999 });
    expect(other.isError).toBe(true);
    expect(other.text).toMatch(/no exchange in row #999/);
  });

  it('summarises latency per tool, and compares two recordings', async () => {
    const { json } = await tool('latency_summary', { file: 'a.db' });
    const echo = (json.rows as Json[]).find((r) => r.tool === 'echo')!;
    expect(echo).toMatchObject({ method: 'tools/call', count: 3, errors: 0 });
    expect(echo.p50Ms).toBeLessThanOrEqual(echo.p90Ms as number);
    expect(echo.p90Ms).toBeLessThanOrEqual(echo.p99Ms as number);
    const sum = (json.rows as Json[]).find((r) => r.tool === 'get-sum')!;
    expect(sum).toMatchObject({ count: 2, errors: 1 });

    const cmp = await tool('compare_recordings', { baselineFile: 'a.db', baselineRecording: 1, candidateFile: 'b.db', candidateRecording: 1 });
    const rows = cmp.json.rows as Json[];
    const echoRow = rows.find((r) => r.tool === 'echo')!;
    expect(echoRow.count).toEqual([3, 1]);
    expect(echoRow.outcomeChanges).toEqual({ ok: [3, 1] });
    expect(typeof (echoRow.delta as Json).p50Ms).toBe('number');
    const sumRow = rows.find((r) => r.tool === 'get-sum')!;
    expect(sumRow.count).toEqual([2, 2]);
    expect(sumRow.outcomeChanges).toBeUndefined();
  });

  it('lists anomalies with their kinds as the store holds them', async () => {
    const { json } = await tool('anomalies', { file: 'a.db' });
    const s = storeOf(a);
    try {
      expect(json.kinds).toEqual(s.summary(1).anomalyKinds);
      expect((json.anomalies as Json[]).length).toBe(Math.min(20, s.anomalies(1).length));
    } finally {
      s.close();
    }
  });

  it('keeps a secret of the traffic redacted; the text filter sees the redacted form only', async () => {
    const redacted = await tool('find_exchanges', { file: 'a.db', text: 'redacted:hmac' });
    expect((redacted.json.exchanges as Json[]).length).toBeGreaterThanOrEqual(1);
    const row = (redacted.json.exchanges as Json[])[0]!.row as number;
    const detail = await tool('get_exchange', { file: 'a.db', row });
    expect(detail.text).toMatch(/\\"password\\":\\"redacted:hmac-sha256:/);
    const bySecret = await tool('find_exchanges', { file: 'a.db', text: SECRET });
    expect(bySecret.json.exchanges).toEqual([]);
    expect(seen.join('\n')).not.toContain(SECRET);
  });

  it('takes hostile filters as values: SQL-like text matches nothing, a path is no file', async () => {
    const sqlish = await tool('find_exchanges', { file: 'a.db', method: "tools/call' OR '1'='1" });
    expect(sqlish.json.exchanges).toEqual([]);
    const wildcard = await tool('find_exchanges', { file: 'a.db', text: "%' OR 1=1 --" });
    expect(wildcard.json.exchanges).toEqual([]);
    const plain = await tool('find_exchanges', { file: 'a.db', method: 'tools/call' });
    expect((plain.json.exchanges as Json[]).length).toBe(5);
    for (const file of ['../../etc/passwd', a, '/etc/passwd']) {
      const r = await tool('find_exchanges', { file });
      expect(r.isError).toBe(true);
      expect(r.text).toMatch(/no file .* is open; the files are "a\.db", "b\.db"/);
    }
    const unknown = await tool('find_exchanges', { file: 'a.db', path: '/etc/passwd' });
    expect(unknown.isError).toBe(true);
    const badCursor = await tool('find_exchanges', { file: 'a.db', cursor: '1; DROP TABLE exchanges' });
    expect(badCursor.isError).toBe(true);
  });

  it('serves each recording as a resource', async () => {
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toEqual(['mcptap://recording/a.db/1', 'mcptap://recording/b.db/1']);
    const read = await client.readResource({ uri: 'mcptap://recording/b.db/1' });
    const body = JSON.parse((read.contents[0] as { text: string }).text) as Json;
    expect(body.recording).toMatchObject({ file: 'b.db', recording: 1, exchanges: 5 });
    await expect(client.readResource({ uri: 'mcptap://recording/c.db/1' })).rejects.toThrow(/no file/);
  });

  it('answers the SDK 2.x client over stdio in the 2026-07-28 era', async () => {
    const modern = new ModernClient({ name: 'agent-v2', version: '2.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await modern.connect(new ModernStdioTransport({ command: process.execPath, args: [MCPTAP, 'mcp', a, '--stdio'], stderr: 'pipe' }));
    try {
      expect(modern.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      const r = (await modern.callTool({ name: 'find_exchanges', arguments: { outcome: 'tool_error' } })) as { content: { text: string }[] };
      expect((JSON.parse(r.content[0]!.text) as Json).exchanges).toMatchObject([{ target: 'get-sum', outcome: 'tool_error' }]);
    } finally {
      await modern.close();
    }
  });

  it('never writes the files', () => {
    // Everything above ran against them; a write would have moved their modification time since recording.
    expect([a, b].map((f) => statSync(f).mtimeMs)).toEqual(recordedMtimes);
    expect(readFileSync(a).subarray(0, 15).toString()).toBe('SQLite format 3');
  });
});

/** A tool call through `@modelcontextprotocol/inspector-cli` (run from a folder whose parent has a package.json, as it needs). */
function inspect(target: string[], tool: string, args: string[]): Json {
  const argv = ['--cli', ...target, '--method', 'tools/call', '--tool-name', tool, ...(args.length ? ['--tool-arg', ...args] : [])];
  const out = execFileSync(join(BIN, 'mcp-inspector-cli'), argv, { cwd: join(ROOT, 'test'), encoding: 'utf8', timeout: 30_000 });
  const result = JSON.parse(out.slice(out.indexOf('{'))) as { content: { text: string }[] };
  return JSON.parse(result.content[0]!.text) as Json;
}

describe('mcptap mcp with inspector-cli', () => {
  it('finds the recorded calls and compares the two recordings per tool', () => {
    const target = [process.execPath, MCPTAP, 'mcp', a, b, '--stdio'];
    const found = inspect(target, 'find_exchanges', ['file=a.db', 'tool=echo']);
    expect((found.exchanges as Json[]).map((r) => r.target)).toEqual(['echo', 'echo', 'echo']);
    const cmp = inspect(target, 'compare_recordings', ['baselineFile=a.db', 'baselineRecording=1', 'candidateFile=b.db', 'candidateRecording=1']);
    expect((cmp.rows as Json[]).find((r) => r.tool === 'echo')).toMatchObject({ count: [3, 1] });
  });
});

describe('mcptap mcp over HTTP', () => {
  let child: ChildProcess;
  let url: string;
  beforeAll(async () => {
    child = spawn(process.execPath, [MCPTAP, 'mcp', a, '--http', '127.0.0.1:0'], { stdio: ['ignore', 'ignore', 'pipe'] });
    url = await new Promise<string>((resolve, reject) => {
      let text = '';
      child.stderr!.on('data', (d: Buffer) => {
        text += d.toString();
        const m = /listening on (http:\/\/\S+)/.exec(text);
        if (m) resolve(m[1]!);
      });
      child.once('exit', (code) => reject(new Error(`mcp exited ${code}: ${text}`)));
    });
  }, 30_000);
  afterAll(() => {
    child?.kill('SIGTERM');
  });

  it('answers the SDK 2.x client in the 2026-07-28 era', async () => {
    const modern = new ModernClient({ name: 'agent-v2', version: '2.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await modern.connect(new ModernHttpTransport(new URL(url)));
    try {
      expect(modern.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      const r = (await modern.callTool({ name: 'find_exchanges', arguments: { tool: 'echo' } })) as { content: { text: string }[] };
      expect((JSON.parse(r.content[0]!.text) as Json).exchanges).toHaveLength(3);
    } finally {
      await modern.close();
    }
  });

  it('answers inspector-cli over Streamable HTTP', () => {
    const found = inspect([url, '--transport', 'http'], 'get_exchange', ['row=1']);
    expect(found.exchange).toMatchObject({ row: 1, method: 'initialize', outcome: 'ok' });
  });

  it('answers the SDK 1.x client in a legacy session', async () => {
    const legacy = new Client({ name: 'agent-v1', version: '1.0.0' });
    await legacy.connect(new StreamableHTTPClientTransport(new URL(url)));
    try {
      const r = await call(legacy, 'latency_summary', {});
      expect((r.json.rows as Json[]).some((row) => row.tool === 'echo' && row.count === 3)).toBe(true);
    } finally {
      await legacy.close();
    }
  });

  it('refuses a foreign Host or Origin with 403, and takes its own', async () => {
    const port = new URL(url).port;
    expect(await postStatus(url, { host: `evil.example:${port}` })).toBe(403);
    expect(await postStatus(url, { origin: 'http://evil.example' })).toBe(403);
    expect(await postStatus(url, { host: `localhost:${port}`, origin: `http://localhost:${port}` })).toBe(200);
  });
});

/** An initialize POST with these headers (Host included, which fetch would not send as given): its status. */
function postStatus(url: string, headers: Record<string, string>): Promise<number> {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
  });
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.once('error', reject);
    req.end(body);
  });
}
