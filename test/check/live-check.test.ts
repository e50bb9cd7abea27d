/**
 * The same rules file live (`mcptap stdio --check`, the SDK 1.x notes server driven by the SDK
 * client), offline on that recording (`mcptap check --rules`) and on replayed traffic
 * (`mcptap replay --check`): the same findings, by rule id and count. A failing assertion gives a
 * finding each way; a passing file gives none (replay exit 0).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { RecordingStore } from '../../src/store/recording-store.js';
import { MCPTAP } from '../helpers/paths.js';
import { notesCommand } from '../helpers/notes-peer.js';
import { mcptap, stdioTransport } from '../replay/replay-helpers.js';

/** Only create_note and friends lack annotations (a note each): off, so the assertion decides. */
const rulesFile = (value: string) => `rules:
  surface/annotations-missing: off
assertions:
  - name: search finds
    select: { tool: search }
    expect: ['/result/structuredContent/results/0/id = "${value}"']
`;

type Counts = Record<string, number>;

/** A session through `mcptap stdio --check RULES --record DB`: list, then two searches. Returns the tap's stderr. */
async function liveSession(db: string, rules: string): Promise<string> {
  const transport = stdioTransport([MCPTAP, 'stdio', '--check', rules, '--record', db, '--', ...notesCommand()]);
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

/** The recording's `check` anomalies, counted by rule id (their detail starts `rule (severity): `). */
function recordedCounts(db: string): Counts {
  const store = RecordingStore.open(db);
  try {
    const out: Counts = {};
    for (const a of store.anomalies(store.latestRecordingId()!).filter((x) => x.kind === 'check')) {
      const rule = a.detail.split(' ')[0]!;
      out[rule] = (out[rule] ?? 0) + 1;
    }
    return out;
  } finally {
    store.close();
  }
}

const total = (c: { error: number; warning: number; note: number }) => c.error + c.warning + c.note;

async function offlineCounts(db: string, rules: string): Promise<{ code: number; counts: Counts }> {
  const r = await mcptap(['check', db, '--rules', rules, '--json', '-']);
  const json = JSON.parse(r.stdout) as { counts: Record<string, { error: number; warning: number; note: number }> };
  return { code: r.code, counts: Object.fromEntries(Object.entries(json.counts).map(([id, c]) => [id, total(c)])) };
}

async function replayCounts(db: string, rules: string): Promise<{ code: number; counts: Counts; stdout: string }> {
  const r = await mcptap(['replay', db, '--check', rules, '--pace', 'fast', '--json', '-', '--', ...notesCommand()]);
  const json = JSON.parse(r.stdout) as { check: { rules: { id: string; counts: { error: number; warning: number; note: number } }[] } };
  return { code: r.code, counts: Object.fromEntries(json.check.rules.map((x) => [x.id, total(x.counts)])), stdout: r.stderr };
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
  }, 60_000);

  it('a passing file: no finding live, offline or on replay (exit 0)', async () => {
    const rules = join(dir, 'pass.yaml');
    writeFileSync(rules, rulesFile('n1'));
    const db = join(dir, 'pass.db');
    const stderr = await liveSession(db, rules);
    expect(stderr).toMatch(/mcptap: check: .*pass\.yaml: no findings/);
    expect(recordedCounts(db)).toEqual({});
    expect(await offlineCounts(db, rules)).toEqual({ code: 0, counts: {} });
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
