/**
 * SSE figures of the load engine against the reference server (a child process): every series is
 * filled from the streams it saw, thresholds read each one, and the time to first event is
 * measured against the delay the server is known to wait (its `progress` tool's `intervalMs`).
 *
 * Accuracy, not speed: the strict bound (p99 within 2 ms of the delay) is checked by
 * `npm run bench -- sse` on a quiet machine. Here the bound is loose because several suites share
 * two cores: a measured first event can never come BEFORE the known delay, and its median stays
 * near it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runLoad } from '../../src/load/run/run-load.js';
import { startTarget, type RunningTarget } from '../../src/load/target/target-runtime.js';
import { RecordingStore } from '../../src/store/recording-store.js';
import { startHttpTapCli } from '../helpers/http-tap-cli.js';
import { scenario } from './scenario-fixtures.js';

let target: RunningTarget & { kind: 'http' };
beforeAll(async () => {
  target = (await startTarget({ kind: 'reference', transport: 'http', inProcess: false, pool: 1 })) as typeof target;
});
afterAll(async () => {
  await target?.close();
});

const progressScenario = (url: string, phase: string, args: string, thresholds = '[]') =>
  scenario(`
target: { url: "${url}", connections: 200 }
era: 2026-07-28
phases: [ ${phase} ]
steps: [ { tool: progress, arguments: ${args}, progress: true } ]
thresholds: ${thresholds}
`);

describe('SSE figures in load results', () => {
  it('fills headers, first event, gaps, progress cadence, final and tail, and thresholds read them', async () => {
    const thresholds = `
  tool:progress:
    - "headers.p(99) < 20s"
    - "first_event.p(95) >= 30ms"
    - "progress.p(50) > 0ms"
    - "progress.max < 20s"
    - "gap.max < 20s"
    - "final.p(99) >= 90ms"
    - "tail.max < 20s"`;
    const r = await runLoad(progressScenario(target.url, '{ closed: { vus: 4, iterations: 2 } }', '{ steps: 3, intervalMs: 30 }', thresholds));
    const sse = r.tools.progress!.sse!;
    expect(r.tools.progress!.counters.ok).toBe(8);
    // 3 progress + the response per stream: 4 events, 3 gaps, 2 progress-to-progress intervals.
    expect(sse.headers!.summary.count).toBe(8);
    expect(sse.first_event.summary.count).toBe(8);
    expect(sse.gap.summary.count).toBe(8 * 3);
    expect(sse.progress!.summary.count).toBe(8 * 2);
    expect(sse.tail!.summary.count).toBe(8);
    expect(sse.final.summary.min).toBeGreaterThanOrEqual(90_000);
    // Three 30 ms waits between send and the third progress notification: the cadence adds up.
    expect(sse.progress!.summary.max).toBeGreaterThan(0);
    expect(r.thresholds.map((t) => [t.expression, t.ok])).toEqual([
      ['headers.p(99) < 20s', true],
      ['first_event.p(95) >= 30ms', true],
      ['progress.p(50) > 0ms', true],
      ['progress.max < 20s', true],
      ['gap.max < 20s', true],
      ['final.p(99) >= 90ms', true],
      ['tail.max < 20s', true],
    ]);
  });

  it('a progress threshold fails when progress comes slower than it allows', async () => {
    const r = await runLoad(progressScenario(target.url, '{ closed: { vus: 1, iterations: 1 } }', '{ steps: 3, intervalMs: 60 }', '[ "progress.max < 10ms" ]'));
    // Two intervals between three progress notifications 60 ms apart at the server: one is >= 30 ms.
    expect(r.thresholds[0]).toMatchObject({ ok: false });
    expect(r.thresholds[0]!.observed).toBeGreaterThanOrEqual(30_000);
  });
});

describe('time to first event against a known delay, 100 concurrent streams', () => {
  const DELAY_US = 1_000_000;
  // Open model: 100 arrivals over 1 s, each stream open 1 s: all 100 are open at once at the end.
  const phase = '{ open: { rate: 100, duration: 1s, maxInFlight: 200 } }';
  const args = '{ steps: 1, intervalMs: 1000 }';
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'mcptap-ttfe-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('the load engine and the tap recording both measure the delay, never less', async () => {
    const record = path.join(dir, 'ttfe.db');
    const tap = await startHttpTapCli(target.url, ['--record', record]);
    let viaTap;
    try {
      viaTap = await runLoad(progressScenario(tap.url, phase, args));
    } finally {
      tap.child.kill('SIGINT');
      await tap.exited;
    }
    const direct = await runLoad(progressScenario(target.url, phase, args));
    for (const r of [direct, viaTap]) {
      const s = r.overall.sse!.first_event.summary;
      expect(s.count).toBe(100);
      expect(s.min).toBeGreaterThanOrEqual(DELAY_US - 512); // the histogram's bucket width at 1 s
      expect(s.p50 - DELAY_US).toBeLessThan(5_000_000);
    }
    const store = RecordingStore.open(record);
    try {
      const ttfe = store.exchanges({ method: 'tools/call' }).map((e) => e.transport!.firstEventUs! - e.startUs);
      expect(ttfe).toHaveLength(100);
      const sorted = ttfe.sort((a, b) => a - b);
      expect(sorted[0]).toBeGreaterThanOrEqual(DELAY_US);
      expect(sorted[50]! - DELAY_US).toBeLessThan(5_000_000);
    } finally {
      store.close();
    }
  }, 60_000);
});
