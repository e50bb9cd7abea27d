/**
 * `mcptap http --check --record --metrics` in front of the SDK 1.x notes server over Streamable HTTP,
 * driven by the SDK client: an assertion that fails twice and a contract rule the rules file raises to
 * error (one call with a bad argument). The findings are counted in `mcptap.check.findings`
 * (Prometheus scrape), recorded, said once on stderr; `mcptap check` on the recording gives the same
 * findings (rule, severity, message, pointer) and `replay --check` against the same server the same
 * rule ids, counts and first findings; the tap's exit code stays 0.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCPTAP } from '../helpers/paths.js';
import { startNotesHttp, type NotesHttp } from '../helpers/notes-peer.js';
import { detailOf, offlineCounts, recordedCounts, recordedDetails, replayCounts, rulesFile } from './live-check-helpers.js';

describe('mcptap http --check', () => {
  let dir: string;
  let notes: NotesHttp;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mcptap-live-check-http-'));
    notes = await startNotesHttp();
  });
  afterAll(async () => notes?.stop());

  it('counts, records and says the findings; offline and replay agree', async () => {
    const rules = join(dir, 'fail.yaml');
    writeFileSync(rules, rulesFile('nope', ['contract/arguments-invalid: error']));
    const db = join(dir, 'http.db');
    const tap = spawn(
      process.execPath,
      [MCPTAP, 'http', '--upstream', notes.url, '--listen', '127.0.0.1:0', '--record', db, '--check', rules, '--metrics', '127.0.0.1:0', '--log-level', 'info'],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    tap.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const exited = new Promise<number | null>((resolve) => tap.once('exit', (code) => resolve(code)));
    const seen = async (re: RegExp): Promise<RegExpExecArray> => {
      for (let i = 0; i < 200; i++) {
        const m = re.exec(stderr);
        if (m) return m;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`not said: ${re}; stderr: ${stderr}`);
    };
    const listening = (await seen(/listening on (http:\/\/127\.0\.0\.1:\d+)/))[1]!;
    const metrics = (await seen(/Prometheus metrics at (\S+)/))[1]!;
    const client = new Client({ name: 'live-check-http', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${listening}/mcp`)));
    await client.listTools();
    await client.callTool({ name: 'search', arguments: { query: 'milk' } });
    await client.callTool({ name: 'search', arguments: { query: 'eggs' } });
    // The server rejects it (isError): the assertion fails a third time, and the rules file makes the client's breach an error.
    expect((await client.callTool({ name: 'search', arguments: { query: 5 } })).isError).toBe(true);
    await client.close();
    // The live pipeline counts as the traffic flows.
    let scraped = '';
    for (let i = 0; i < 100 && !/mcptap_check_findings\S*\{[^}]*rule="assert\/search-finds"[^}]*\} 3/.test(scraped); i++) {
      scraped = await (await fetch(metrics)).text();
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(scraped).toMatch(
      /mcptap_check_findings\S*\{[^}]*rule="assert\/search-finds"[^}]*severity="error"[^}]*\} 3|mcptap_check_findings\S*\{[^}]*severity="error"[^}]*rule="assert\/search-finds"[^}]*\} 3/,
    );
    tap.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stderr.match(/mcptap: check: assert\/search-finds \(error\): /g)).toHaveLength(1);
    expect(stderr.match(/mcptap: check: contract\/arguments-invalid \(error\): /g)).toHaveLength(1);
    expect(stderr).toMatch(/mcptap: check: .*fail\.yaml: 4 findings \(4 error/);
    const live = recordedCounts(db);
    expect(live).toEqual({ 'assert/search-finds': 3, 'contract/arguments-invalid': 1 });
    const offline = await offlineCounts(db, rules);
    expect(offline).toMatchObject({ code: 1, counts: live });
    // The same findings, word for word, live (recorded) and offline; the pointers each names.
    expect(offline.findings.map(detailOf).sort()).toEqual(recordedDetails(db));
    const pointers = offline.findings.map((f) => [f.ruleId, f.pointer]);
    expect(pointers).toEqual([
      ['assert/search-finds', '/result/structuredContent/results/0/id'],
      ['assert/search-finds', '/result/structuredContent/results/0/id'],
      ['contract/arguments-invalid', '/params/arguments/query'],
      ['assert/search-finds', '/result/structuredContent/results/0/id'],
    ]);
    const replay = await replayCounts(db, rules, ['--url', notes.url]);
    expect(replay).toMatchObject({ code: 1, counts: live });
    const firstOffline = (id: string) => offline.findings.find((f) => f.ruleId === id)!;
    for (const id of Object.keys(live)) {
      expect(replay.first[id]).toMatchObject({ ruleId: id, severity: 'error', pointer: firstOffline(id).pointer, message: firstOffline(id).message });
    }
  }, 90_000);
});
