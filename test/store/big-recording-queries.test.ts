/**
 * The queries that let ls, show, export, replay and mock handle big recordings in bounded memory:
 * their plans (an index per query, rows streamed in index order, no sort of the whole recording
 * into memory) and their answers (the same as a computation over every exchange).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteRecorder } from '../../src/sinks/sqlite-recorder.js';
import { RecordingStore } from '../../src/store/recording-store.js';
import { SQL } from '../../src/store/statements.js';
import { addOutcome, percentile } from '../../src/store/summary.js';
import type { MethodSummary } from '../../src/store/types.js';
import { silentLogger } from '../../src/util/logger.js';
import { T0, TrafficScript } from '../sinks/traffic-script.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mcptap-bigq-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** 300 requests of three methods, latencies scattered, some errors, the last ten still pending. */
async function mixedRecording(): Promise<RecordingStore> {
  const s = new TrafficScript('c1').open({ transport: 'stdio', target: 'srv' }, 0);
  s.handshake(0);
  const methods = ['tools/call', 'resources/read', 'prompts/get'];
  for (let i = 1; i <= 300; i++) {
    const at = 10 + i;
    s.request(i, methods[i % 3]!, { name: `n${i % 7}` }, at);
    if (i > 290) continue;
    const latencyMs = ((i * 7919) % 101) / 4;
    if (i % 11 === 0) s.error(i, -32602, 'bad', at + latencyMs);
    else s.result(i, { content: [] }, at + latencyMs);
  }
  const path = join(dir, 'mixed.db');
  const recording = { transport: 'stdio' as const, target: 'srv', startedUs: T0, mcptapVersion: '0.1.0-test' };
  const rec = new SqliteRecorder({ path, recording, logger: silentLogger, clock: { nowUs: () => T0 + 1_000_000 } });
  for (const e of s.events) rec.onEvent(e);
  await rec.close();
  return RecordingStore.open(path);
}

/** What ls showed when it loaded every exchange: the reference the SQL aggregation must equal. */
function summaryOverEveryExchange(store: RecordingStore): MethodSummary[] {
  const byMethod = new Map<string, { s: MethodSummary; lat: number[] }>();
  for (const e of store.exchanges({ recordingId: 1 })) {
    // A row per tool of tools/call; one per method otherwise.
    const tool = e.method === 'tools/call' ? e.target : undefined;
    const key = JSON.stringify([e.method, tool ?? null]);
    let m = byMethod.get(key);
    if (!m) byMethod.set(key, (m = { s: { method: e.method, ...(tool !== undefined ? { tool } : {}), count: 0, outcomes: {} }, lat: [] }));
    m.s.count++;
    addOutcome(m.s.outcomes, e.state === 'started' ? 'pending' : e.outcome);
    if (e.latencyUs !== undefined) m.lat.push(e.latencyUs);
  }
  return [...byMethod.values()]
    .map(({ s, lat }) => {
      lat.sort((a, b) => a - b);
      return lat.length ? { ...s, p50Us: percentile(lat, 50), p95Us: percentile(lat, 95), p99Us: percentile(lat, 99), maxUs: lat.at(-1) } : s;
    })
    .sort((a, b) => (a.method !== b.method ? (a.method < b.method ? -1 : 1) : (a.tool ?? '') < (b.tool ?? '') ? -1 : 1));
}

describe('queries for big recordings', () => {
  it('ls: per-method counts and percentiles from SQL equal those over every exchange', async () => {
    const store = await mixedRecording();
    const sum = store.summary(1);
    expect(sum.exchanges).toBe(301);
    expect(sum.outcomes.pending).toBe(10);
    const expected = summaryOverEveryExchange(store);
    expect(expected.map((m) => (m.tool !== undefined ? `${m.method} ${m.tool}` : m.method))).toEqual([
      'initialize',
      'prompts/get',
      'resources/read',
      ...[0, 1, 2, 3, 4, 5, 6].map((n) => `tools/call n${n}`),
    ]);
    expect(sum.methods).toEqual(expected);
    // Same key order too: `ls --json` prints these objects.
    expect(JSON.stringify(sum.methods)).toBe(JSON.stringify(expected));
    store.close();
  });

  it('streams exchanges as exchanges() lists them', async () => {
    const store = await mixedRecording();
    for (const filter of [
      { recordingId: 1 },
      { recordingId: 1, method: 'tools/call' },
      { outcome: 'pending' as const },
      { recordingId: 1, limit: 5, offset: 3 },
    ]) {
      const listed = store.exchanges(filter);
      expect(listed.length).toBeGreaterThan(0);
      expect([...store.iterateExchanges(filter)]).toEqual(listed);
    }
    const one = store.exchanges({ recordingId: 1 })[42]!;
    expect(store.exchangeAt(one.rowid)).toEqual(one);
    expect(store.exchangeAt(1e9)).toBeUndefined();
    store.close();
  });

  it('each query reads an index: no full scan, and exchanges stream in index order without a sort', async () => {
    const store = await mixedRecording();
    const plan = (sql: string, ...args: unknown[]) =>
      (store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as { detail: string }[]).map((p) => p.detail).join('; ');
    const all = { r: 1, m: null, t: null, o: null, limit: -1, offset: 0 };
    // replay and mock: the recording in start order, straight off exchanges_start.
    expect(plan(SQL.exchangesFiltered, all)).toMatch(/^SCAN e USING INDEX exchanges_start;/);
    expect(plan(SQL.exchangesFiltered, all)).not.toMatch(/TEMP B-TREE/);
    // mock: one answer by row id.
    expect(plan(`${SQL.exchangeSelect} WHERE e.id = ?`, 1)).toMatch(/^SEARCH e USING INTEGER PRIMARY KEY \(rowid=\?\)/);
    // ls: one recording's rows through an index on recording_id (the sort spills to a temp file, not the heap).
    for (const sql of [SQL.methodOutcomeCounts, SQL.latenciesByMethod]) {
      expect(plan(sql, 1)).toMatch(/^SEARCH exchanges USING INDEX \w+ \(recording_id=\?\)/);
    }
    store.close();
  });
});
