/**
 * The same rules file live (`mcptap stdio --check`, the SDK 1.x notes server driven by the SDK
 * client), offline on that recording (`mcptap check --rules`) and on replayed traffic
 * (`mcptap replay --check`): the same findings, by rule id and count. A failing assertion gives a
 * finding each way; a passing file gives none (replay exit 0).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { MCPTAP } from '../helpers/paths.js';
import { notesCommand } from '../helpers/notes-peer.js';
import { mcptap, stdioTransport } from '../replay/replay-helpers.js';
import { offlineCounts, recordedCounts, replayCounts, rulesFile } from './live-check-helpers.js';

/** A session through `mcptap stdio --check RULES --record DB`: list, then two searches. Returns the tap's stderr. */
async function liveSession(db: string | undefined, rules: string): Promise<string> {
  const record = db === undefined ? [] : ['--record', db];
  const transport = stdioTransport([MCPTAP, 'stdio', '--check', rules, ...record, '--', ...notesCommand()]);
  let stderr = '';
  transport.stderr?.on('data', (b: Buffer) => (stderr += b.toString()));
  const client = new Client({ name: 'live-check', version: '1.0.0' });
  await client.connect(transport);
  await client.listTools();
  await client.callTool({ name: 'search', arguments: { query: 'milk' } });
  await client.callTool({ name: 'search', arguments: { query: 'eggs' } });
  const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
  await client.close();
  await closed;
  return stderr;
}

describe('--check: live, offline and replayed alike', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'mcptap-live-check-'));
  });

  it('a failing assertion: the same findings live, offline and on replay (exit 1)', async () => {
    const rules = join(dir, 'fail.yaml');
    writeFileSync(rules, rulesFile('nope'));
    const db = join(dir, 'fail.db');
    const stderr = await liveSession(db, rules);
    // Said once per rule, then the summary.
    expect(stderr.match(/mcptap: check: assert\/search-finds \(error\): /g)).toHaveLength(1);
    expect(stderr).toMatch(/mcptap: check: .*fail\.yaml: 2 findings \(2 error/);
    const live = recordedCounts(db);
    expect(live['assert/search-finds']).toBe(2);
    const offline = await offlineCounts(db, rules);
    expect(offline.code).toBe(1);
    expect(offline.counts).toEqual(live);
    const replay = await replayCounts(db, rules);
    expect(replay.code).toBe(1);
    expect(replay.counts).toEqual(live);
    // The text and JUnit reports say them too.
    const junit = join(dir, 'replay.xml');
    const text = await mcptap(['replay', db, '--check', rules, '--pace', 'fast', '--junit', junit, '--', ...notesCommand()]);
    expect(text.code).toBe(1);
    expect(text.stdout).toContain('check findings');
    expect(text.stdout).toMatch(/✗ assert\/search-finds: 2 \(2 error/);
    expect(text.stdout).toMatch(/; 2 check findings\n$/);
    expect(readFileSync(junit, 'utf8')).toMatch(/<testcase classname="mcptap check" name="assert\/search-finds" time="0">\s*<failure /);
  }, 60_000);

  it('without --record or telemetry the tap still checks, and says so', async () => {
    const rules = join(dir, 'fail.yaml');
    writeFileSync(rules, rulesFile('nope'));
    const stderr = await liveSession(undefined, rules);
    expect(stderr.match(/mcptap: check: assert\/search-finds \(error\): /g)).toHaveLength(1);
    expect(stderr).toMatch(/mcptap: check: .*fail\.yaml: 2 findings \(2 error/);
  }, 30_000);

  it('a passing file: no finding live, offline or on replay (exit 0)', async () => {
    const rules = join(dir, 'pass.yaml');
    writeFileSync(rules, rulesFile('n1'));
    const db = join(dir, 'pass.db');
    const stderr = await liveSession(db, rules);
    expect(stderr).toMatch(/mcptap: check: .*pass\.yaml: no findings/);
    expect(recordedCounts(db)).toEqual({});
    expect(await offlineCounts(db, rules)).toEqual({ code: 0, counts: {}, findings: [] });
    const replay = await replayCounts(db, rules);
    expect(replay).toMatchObject({ code: 0, counts: {} });
  }, 60_000);

  it('an invalid rules file fails the tap at start-up: exit 4, file:line', async () => {
    const rules = join(dir, 'bad.yaml');
    writeFileSync(rules, 'rules:\n  protocol/no-such-rule: error\n');
    const r = await mcptap(['stdio', '--check', rules, '--', ...notesCommand()]);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain(`${rules}:2`);
  }, 30_000);
});
