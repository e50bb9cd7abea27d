/**
 * Exchange with other tools, end to end with real peers: server-everything recorded through the
 * built `mcptap stdio --record` and `mcptap http --record` (SDK 1.x client), exported to JSONL and
 * imported back (the exchanges must equal the original's), and exported to HAR 1.2 (checked
 * against the spec's required fields; one POST entry per POST the client made).
 */
import { copyFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { BIN } from '../helpers/paths.js';
import { connectThroughTap } from '../helpers/tap-client.js';
import { everythingCallSet } from '../helpers/everything-call-set.js';
import { startEverything, type ChildPeer } from '../helpers/http-peers.js';
import { startHttpTapCli } from '../helpers/http-tap-cli.js';
import { exchangeFacts, exchangesOf, mcptap } from './helpers.js';
import { harProblems } from './har-required.js';

const EVERYTHING = join(BIN, 'mcp-server-everything');
const dir = mkdtempSync(join(tmpdir(), 'mcptap-interchange-'));

function roundTrip(db: string, name: string, connections?: number) {
  const jsonl = join(dir, `${name}.jsonl`);
  const back = join(dir, `${name}-back.db`);
  const exp = mcptap(['export', db, '--jsonl', jsonl]);
  expect(exp.stderr).toContain(`as JSONL to ${jsonl}\n`);
  expect(exp.code).toBe(0);
  // A second export to the same place replaces the file, and says so.
  const again = mcptap(['export', db, '--jsonl', jsonl]);
  expect(again.stderr).toContain(`as JSONL to ${jsonl} (replacing the file that was there)\n`);
  expect(again.code).toBe(0);
  const imp = mcptap(['import', jsonl, '--into', back]);
  expect(imp.stderr).toMatch(/imported .* \(\d+ lines?, (\d+) connections?\) into .* as recording 1/);
  // Counted in words: "1 connection", "2 connections".
  if (connections !== undefined) expect(imp.stderr).toContain(`, ${connections} connection${connections === 1 ? '' : 's'}) into`);
  expect(imp.code).toBe(0);
  return { jsonl, back };
}

describe('stdio recording of server-everything: JSONL round trip', () => {
  const db = join(dir, 'stdio.db');
  const progress: number[] = [];

  beforeAll(async () => {
    const tapped = await connectThroughTap(['--record', db], [EVERYTHING, 'stdio']);
    await everythingCallSet(tapped.client, progress);
    await tapped.close();
  });

  it('export --jsonl then import gives the same exchanges', () => {
    const { jsonl, back } = roundTrip(db, 'stdio', 1);
    const lines = readFileSync(jsonl, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines[0]).toMatchObject({ mcptap: 'jsonl', version: 1, recording: { transport: 'stdio' } });
    expect(lines.some((l) => (l.message as { method?: string } | undefined)?.method === 'tools/call')).toBe(true);
    const original = exchangesOf(db);
    expect(original.map((e) => e.method)).toEqual(expect.arrayContaining(['initialize', 'tools/list', 'tools/call', 'no/such-method']));
    expect(original.find((e) => e.target === 'trigger-long-running-operation')!.progress).toHaveLength(3);
    expect(exchangesOf(back).map(exchangeFacts)).toEqual(original.map(exchangeFacts));
  });

  it('export --jsonl with no OUT writes to stdout, and --har gives one entry per exchange', () => {
    const out = mcptap(['export', db, '--jsonl', '--recording', '1']);
    expect(out.code).toBe(0);
    expect(out.stdout).toBe(readFileSync(join(dir, 'stdio.jsonl'), 'utf8'));
    const har = mcptap(['export', db, '--har', '-']);
    expect(har.code).toBe(0);
    const doc = JSON.parse(har.stdout) as { log: { entries: { request: { url: string } }[] } };
    expect(harProblems(doc)).toEqual([]);
    expect(doc.log.entries).toHaveLength(exchangesOf(db).length);
    expect(doc.log.entries.map((e) => e.request.url)).toContain('stdio://mcptap/tools%2Fcall');
  });

  it('export never replaces a recording: its own input or another one (exit 2, file untouched)', () => {
    const other = join(dir, 'other.db');
    copyFileSync(db, other);
    const before = readFileSync(db);
    for (const [out, format] of [
      [db, '--jsonl'],
      [other, '--har'],
    ] as const) {
      const r = mcptap(['export', db, format, out]);
      expect(r.stderr).toContain(`${out} is a recording (SQLite)`);
      expect(r.code).toBe(2);
    }
    expect(readFileSync(db).equals(before)).toBe(true);
    expect(mcptap(['ls', other]).code).toBe(0);
  });

  it('import refuses a recording as its input (exit 4) and its own input as OUT (exit 2)', () => {
    const asInput = mcptap(['import', db, '--into', join(dir, 'from-db.db')]);
    expect(asInput.code).toBe(4);
    expect(asInput.stderr).toContain(`${db} is a recording already (SQLite), not JSONL: to combine recordings use mcptap merge`);
    const jsonl = join(dir, 'self.jsonl');
    expect(mcptap(['export', db, '--jsonl', jsonl]).code).toBe(0);
    const before = readFileSync(jsonl);
    const self = mcptap(['import', jsonl, '--into', jsonl, '--force']);
    expect(self.code).toBe(2);
    expect(self.stderr).toContain(`--into ${jsonl} is the file being imported`);
    expect(readFileSync(jsonl).equals(before)).toBe(true);
  });
});

describe('HTTP recording of server-everything: JSONL round trip and HAR', () => {
  const db = join(dir, 'http.db');
  let peer: ChildPeer;
  let posts = 0;

  beforeAll(async () => {
    peer = await startEverything('streamableHttp');
    const tap = await startHttpTapCli(peer.url, ['--record', db]);
    try {
      const client = new Client({ name: 'mcptap-interchange-e2e', version: '1.0.0' });
      const countingFetch: typeof fetch = (input, init) => {
        if (init?.method === 'POST') posts++;
        return fetch(input, init);
      };
      const transport = new StreamableHTTPClientTransport(new URL(tap.url), { fetch: countingFetch });
      await client.connect(transport);
      await everythingCallSet(client, []);
      await transport.terminateSession();
      await client.close();
    } finally {
      tap.child.kill('SIGTERM');
      await tap.exited;
    }
  });

  afterAll(async () => {
    await peer?.stop();
  });

  it('export --jsonl then import gives the same exchanges', () => {
    const { back } = roundTrip(db, 'http');
    const original = exchangesOf(db);
    expect(original.find((e) => e.target === 'trigger-long-running-operation')!.progress).toHaveLength(3);
    expect(original.find((e) => e.target === 'get-sum')!.isError).toBe(true);
    expect(exchangesOf(back).map(exchangeFacts)).toEqual(original.map(exchangeFacts));
  });

  it('export --har: valid HAR 1.2, one POST entry per POST the client made', () => {
    const har = join(dir, 'http.har');
    const r = mcptap(['export', db, '--har', har]);
    expect(r.code).toBe(0);
    const doc = JSON.parse(readFileSync(har, 'utf8')) as {
      log: {
        entries: {
          request: { method: string; url: string; postData?: { text: string } };
          response: { status: number; content: { mimeType: string; text?: string } };
        }[];
      };
    };
    expect(harProblems(doc)).toEqual([]);
    const postEntries = doc.log.entries.filter((e) => e.request.method === 'POST');
    expect(posts).toBeGreaterThan(5);
    expect(postEntries).toHaveLength(posts);
    expect(postEntries.every((e) => e.request.url === peer.url)).toBe(true);
    const echo = postEntries.find((e) => e.request.postData?.text.includes('"echo"'))!;
    expect(echo.response.status).toBe(200);
    expect(echo.response.content.text).toContain('Echo: hi');
    // The progress call's answer streamed: its body is the SSE stream, progress events first.
    const long = postEntries.find((e) => e.request.postData?.text.includes('trigger-long-running-operation'))!;
    expect(long.response.content.mimeType).toBe('text/event-stream');
    expect(long.response.content.text!.match(/notifications\/progress/g)).toHaveLength(3);
  });
});
