/**
 * `replay:` phases and `from: {file, recording}`: recorded traffic as load, on its recorded
 * schedule. Recordings are real: the HTTP demo (`runHttpDemo`, the code behind `mcptap demo`) run
 * with a scenario of known arrival pattern, and `mcptap stdio --record` (the built CLI) in front of
 * a server that echoes the `_meta` it received. The schedule is checked per 1-second bucket on
 * virtual time (exact) and in one short real run against the reference server (intended starts).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { McpSession, McpStdioClient, StdioChannel } from '../../src/client/index.js';
import { runHttpDemo } from '../../src/demo/http-demo.js';
import { McptapError } from '../../src/errors.js';
import type { CallRecord } from '../../src/load/drivers/driver.js';
import type { ShardSpec } from '../../src/load/executors/iteration.js';
import { VirtualScheduler } from '../../src/load/executors/virtual-scheduler.js';
import { decodeHistogram } from '../../src/util/histogram.js';
import { mergeResults } from '../../src/load/results/merge-results.js';
import type { LoadResult } from '../../src/load/results/load-result.js';
import { loadRecordedTraffic, type RecordedTraffic } from '../../src/load/scenario/recording-mix.js';
import { runLoad } from '../../src/load/run/run-load.js';
import { renderSummary } from '../../src/load/report/text-report.js';
import { ROOT } from '../client/peers.js';
import { FIXTURES, scenario } from './scenario-fixtures.js';
import { simulatedDriver, type SimServer } from './simulated-driver.js';

const BIN = path.join(ROOT, 'bin/mcptap.js');
const META_ECHO = path.join(ROOT, 'test/fixtures/meta-echo-server.mjs');
const START = 1_000_000_000_000;

/** Arrivals per 1-second bucket of offsets (µs). */
function perSecond(offsetsUs: readonly number[]): number[] {
  const out: number[] = [];
  for (const us of offsetsUs) {
    const k = Math.floor(us / 1e6);
    while (out.length <= k) out.push(0);
    out[k]!++;
  }
  return out;
}

/** Each bucket within 5% (at least one arrival, for offsets on a bucket's edge) of the expected count, or short by no more than the drops. */
function expectFollows(achieved: number[], expected: number[], dropped: number): void {
  expect(achieved.length).toBeLessThanOrEqual(expected.length);
  for (const [k, e] of expected.entries()) {
    const a = achieved[k] ?? 0;
    expect(a, `bucket ${k}: ${a} arrivals, recorded ${e}`).toBeLessThanOrEqual(e + Math.max(1, 0.05 * e));
    expect(a + dropped, `bucket ${k}: ${a} arrivals + ${dropped} dropped, recorded ${e}`).toBeGreaterThanOrEqual(e - Math.max(1, 0.05 * e));
  }
}

/** The intended start offsets (µs after the phase start) of the samples of phase `i`. */
function intendedOffsets(r: LoadResult, recs: readonly CallRecord[], i = 0): number[] {
  const p = r.phases[i]!;
  return recs
    .map((x) => x.sample.intendedUs)
    .filter((us) => us >= p.startUs && (i + 1 >= r.phases.length || us < r.phases[i + 1]!.startUs))
    .map((us) => us - p.startUs);
}

async function simulate(yaml: string, server: SimServer, shard?: ShardSpec): Promise<{ result: LoadResult; recs: CallRecord[] }> {
  const sched = new VirtualScheduler(START);
  const recs: CallRecord[] = [];
  const result = await sched.run(
    runLoad(scenario(yaml), {
      ...(shard ? { shard } : {}),
      scheduler: sched,
      clock: { nowUs: () => sched.nowUs() },
      driverFactory: async () => simulatedDriver(sched, server),
      onRecord: (rec) => recs.push(rec),
    }),
  );
  return { result, recs };
}

describe('replaying the demo recording on its schedule', () => {
  let db: string;
  let traffic: RecordedTraffic;
  let demoStarted: number;
  let demoText = '';

  beforeAll(async () => {
    db = path.join(mkdtempSync(path.join(os.tmpdir(), 'mcptap-replay-')), 'demo.db');
    // ~6 s of open-model load through the demo's HTTP tap: 10/s, a ramp 10 -> 80/s, then 40/s.
    const demo = await runHttpDemo({ db, scenario: path.join(FIXTURES, 'replay-pattern.yaml'), write: (t) => void (demoText += t), progress: false });
    demoStarted = demo.result.phases.reduce((a, p) => a + p.started, 0);
    traffic = await loadRecordedTraffic({ file: db });
  }, 60_000);

  it("the demo's closing hint names the scenario it ran, not always demo.yaml", () => {
    expect(demoText).toContain(`Run the scenario yourself: mcptap load ${path.join(FIXTURES, 'replay-pattern.yaml')} --json result.json`);
  });

  it('reads every recorded request with its offset, progress tokens noted', () => {
    expect(traffic.calls).toHaveLength(demoStarted);
    expect(traffic.calls[0]!.offsetUs).toBe(0);
    expect(traffic.calls.at(-1)!.offsetUs).toBeGreaterThan(5_000_000);
    const progress = traffic.calls.filter((c) => c.target === 'progress');
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.every((c) => c.progress)).toBe(true);
    // the modern era's envelope is the run's business, not the recording's
    expect(traffic.calls.some((c) => c.params?._meta !== undefined)).toBe(false);
  });

  for (const speed of [1, 4]) {
    it(`at ${speed}x on virtual time: every recorded request arrives at its offset / ${speed}, bucket for bucket`, async () => {
      const { result, recs } = await simulate(`target: { url: "http://127.0.0.1:1/mcp" }\nfrom: ${db}\nphases: [ { replay: { speed: ${speed} } } ]\n`, {
        serviceUs: () => 2000,
      });
      const n = traffic.calls.length;
      expect(result.phases[0]).toMatchObject({ kind: 'replay', speed, scheduled: n, started: n, dropped: 0, completed: n });
      const expected = perSecond(traffic.calls.map((c) => c.offsetUs / speed));
      expect(expected.length).toBeGreaterThanOrEqual(speed === 1 ? 6 : 2);
      expectFollows(perSecond(intendedOffsets(result, recs)), expected, 0);
      // each request went out as recorded: arrival j sent recorded request j
      expect(recs.map((x) => x.sample.step)).toEqual(traffic.calls.map((c) => (c.target ? `${c.method} ${c.target}` : c.method)));
      expect(renderSummary(result)).toMatch(new RegExp(`phase-1\\s+replay\\s+${speed}x recorded`));
    });
  }

  it('on virtual time: a generator at its in-flight cap drops arrivals and counts them; the rest start when due', async () => {
    const { result, recs } = await simulate(
      `target: { url: "http://127.0.0.1:1/mcp" }\nfrom: { file: ${db} }\nphases: [ { replay: { speed: 4, maxInFlight: 3 } } ]\n`,
      { serviceUs: () => 200_000 },
    );
    const p = result.phases[0]!;
    expect(p.dropped).toBeGreaterThan(0);
    expect(p.scheduled).toBe(traffic.calls.length);
    expect(p.started + p.dropped).toBe(p.scheduled);
    // a capped arrival is dropped, never started late (late by at most the loop's 1 ms tick)
    expect(decodeHistogram(result.scheduleLag.hdr).maxValue).toBeLessThanOrEqual(1000);
    // from the due time: the service time plus that tick at most (within the histogram's 3 significant digits)
    const { min, max } = result.overall.latency.summary;
    expect(min).toBeGreaterThanOrEqual(199_800);
    expect(max).toBeLessThanOrEqual(201_200);
    expectFollows(perSecond(intendedOffsets(result, recs)), perSecond(traffic.calls.map((c) => c.offsetUs / 4)), p.dropped);
  });

  it('on virtual time: shards split the recorded requests and merge into the single run', async () => {
    const yaml = `target: { url: "http://127.0.0.1:1/mcp" }\nfrom: ${db}\nphases: [ { replay: { speed: 2 } } ]\n`;
    const single = await simulate(yaml, { serviceUs: () => 3000 });
    const shards = await Promise.all([1, 2, 3].map((index) => simulate(yaml, { serviceUs: () => 3000 }, { index, count: 3 })));
    expect(shards.map((x) => x.result.phases[0]!.started).reduce((a, b) => a + b, 0)).toBe(traffic.calls.length);
    const offsets = shards.flatMap((x) => intendedOffsets(x.result, x.recs)).sort((a, b) => a - b);
    expect(offsets).toEqual(intendedOffsets(single.result, single.recs).sort((a, b) => a - b));
    const merged = mergeResults(shards.map((x) => x.result));
    expect(merged.overall.counters).toEqual(single.result.overall.counters);
    expect(merged.phases[0]).toMatchObject({ kind: 'replay', scheduled: traffic.calls.length, started: traffic.calls.length, dropped: 0 });
  });

  it('at 4x against the reference server: arrivals per second follow the recording x4, progress calls stream progress', async () => {
    const recs: CallRecord[] = [];
    const s = scenario(`target: { reference: { transport: stdio } }\nfrom: ${db}\nphases: [ { name: fast, replay: { speed: "4x" } } ]\n`);
    const result = await runLoad(s, { onRecord: (rec) => recs.push(rec) });
    const p = result.phases[0]!;
    expect(p.started + p.dropped).toBe(traffic.calls.length);
    expect(result.overall.counters.transport).toEqual({});
    expectFollows(perSecond(intendedOffsets(result, recs)), perSecond(traffic.calls.map((c) => c.offsetUs / 4)), p.dropped);
    // no request went out before its due time
    expect(recs.every((x) => x.sample.sentUs >= x.sample.intendedUs)).toBe(true);
    // the server streamed progress: it got a progress token
    const progress = recs.filter((x) => x.sample.tool === 'progress');
    expect(progress.length).toBeGreaterThan(0);
    for (const x of progress) expect(x.result!.messages.some((m) => 'method' in m && m.method === 'notifications/progress')).toBe(true);
  }, 30_000);
});

/** One `mcptap stdio --record` session in front of the meta-echo server. */
async function recordMetaEcho(db: string, calls: { method: string; params: Record<string, unknown> }[]): Promise<void> {
  const client = await McpStdioClient.spawn({ command: process.execPath, args: [BIN, 'stdio', '--record', db, '--', process.execPath, META_ECHO] });
  try {
    const s = new McpSession(new StdioChannel(client), { era: 'legacy' });
    await s.initialize();
    for (const c of calls) await s.request(c.method, c.params);
  } finally {
    await client.close();
  }
}

const receivedMeta = (rec: CallRecord): unknown => {
  const content = (rec.response as { result?: { content?: { text?: string }[] } } | undefined)?.result?.content;
  return JSON.parse(content?.[0]?.text ?? 'undefined');
};

describe('recorded _meta and picking a recording', () => {
  let db: string;

  beforeAll(async () => {
    db = path.join(mkdtempSync(path.join(os.tmpdir(), 'mcptap-replay-meta-')), 'tap.db');
    await recordMetaEcho(db, [
      { method: 'tools/call', params: { name: 'show-meta', arguments: {}, _meta: { progressToken: 'rec-a', 'x-trace': 't-1' } } },
      { method: 'tools/call', params: { name: 'show-meta', arguments: {}, _meta: { progressToken: 7 } } },
      { method: 'tools/call', params: { name: 'show-meta', arguments: {} } },
    ]);
    // a second recording in the same file: the default (latest) would take this one
    await recordMetaEcho(db, [{ method: 'tools/list', params: {} }]);
  }, 60_000);

  const target = `target: { command: ${JSON.stringify([process.execPath, META_ECHO])} }`;

  it('the server receives a fresh progress token where the recorded call had one, and the rest of its _meta', async () => {
    const recs: CallRecord[] = [];
    const s = scenario(
      `${target}\nfrom: { file: ${db}, recording: 1 }\nphases:\n  - { name: rp, replay: { speed: 1 } }\n  - { name: mix, closed: { vus: 2, iterations: 3 } }\n`,
    );
    const result = await runLoad(s, { onRecord: (rec) => recs.push(rec) });
    expect(result.methods['tools/call']!.counters).toMatchObject({ requests: 9, ok: 9 });
    expect(recs).toHaveLength(9);
    recs.sort((a, b) => a.sample.intendedUs - b.sample.intendedUs); // the replay phase's come first
    const replayed = recs.slice(0, 3).map(receivedMeta);
    expect(replayed).toEqual([{ progressToken: 'p-rp-0', 'x-trace': 't-1' }, { progressToken: 'p-rp-1' }, null]);
    // the mix: recorded params in turn, each token unique to its iteration
    const mixed = recs.slice(3).map(receivedMeta) as ({ progressToken?: string } | null)[];
    const tokens = mixed.flatMap((m) => (m?.progressToken ? [m.progressToken] : []));
    expect(tokens.length).toBe(4);
    expect(new Set(tokens).size).toBe(4);
    expect(tokens.every((t) => t.startsWith('p-mix-'))).toBe(true);
  }, 30_000);

  it('from: file takes the latest recording; from: {file, recording: N} picks N; a missing N is a clear error', async () => {
    expect((await loadRecordedTraffic({ file: db })).calls.map((c) => c.method)).toEqual(['tools/list']);
    expect((await loadRecordedTraffic({ file: db, recording: 1 })).calls.map((c) => c.target)).toEqual(['show-meta', 'show-meta', 'show-meta']);
    const err = await loadRecordedTraffic({ file: db, recording: 9 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McptapError);
    expect((err as McptapError).code).toBe('MCPTAP_RECORDING_NOT_FOUND');
    expect((err as McptapError).message).toContain('has no recording 9 (it has 1, 2)');
  });

  it('mcptap load with a recording id the file does not have exits 4 with that message', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'mcptap-replay-cli-'));
    writeFileSync(path.join(dir, 'replay.yaml'), `${target}\nfrom: { file: ${db}, recording: 9 }\nphases: [ { replay: { speed: 2 } } ]\n`);
    const out = await promisify(execFile)(process.execPath, [BIN, 'load', 'replay.yaml'], { cwd: dir, timeout: 30_000 }).then(
      () => ({ code: 0, stderr: '' }),
      (e: { code?: number; stderr?: string }) => ({ code: e.code, stderr: e.stderr ?? '' }),
    );
    expect(out.code).toBe(4);
    expect(out.stderr).toContain('has no recording 9 (it has 1, 2)');
    expect(out.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('replay phase validation', () => {
  const invalid = (yaml: string): string => {
    try {
      scenario(yaml, 'bad.yaml');
    } catch (err) {
      return (err as Error).message;
    }
    throw new Error('expected the scenario to be refused');
  };

  it('names the field and line of every problem', () => {
    expect(invalid(`target: { reference: true }\nphases:\n  - replay: { speed: 2 }\n`)).toContain(
      'bad.yaml:3: phases[0].replay: replays a recording: add `from: recording.db` (or {file, recording}) to the scenario',
    );
    const m = invalid(
      `target: { reference: true }\nfrom: { file: tap.db, recording: 0 }\nphases:\n  - replay: { speed: fast }\n  - replay: { speed: 0, maxInFlight: 0 }\n  - { open: { rate: 1, duration: 1s }, replay: {} }\n`,
    );
    expect(m).toContain('bad.yaml:2: from.recording: must be');
    expect(m).toContain('bad.yaml:4: phases[0].replay.speed: must be a factor of the recorded rate more than 0 and at most 1000, like 2 or "2x" (got "fast")');
    expect(m).toContain('bad.yaml:5: phases[1].replay.speed');
    expect(m).toContain('bad.yaml:5: phases[1].replay.maxInFlight');
    expect(m).toContain('bad.yaml:6: phases[2]: needs exactly one of open (arrival rate), closed (virtual users) or replay');
    expect(invalid(`target: { reference: true }\nfrom: { recording: 2 }\nphases: [ { replay: {} } ]\n`)).toContain('from: "file" is required');
  });

  it('accepts a factor or "Nx", 1x by default, and from as a file or {file, recording}', () => {
    const s = scenario(
      `target: { reference: true }\nfrom: { file: tap.db, recording: 3 }\nphases:\n  - replay: {}\n  - replay: { speed: "2.5x", maxInFlight: 10 }\n  - replay: { speed: 4 }\n`,
    );
    expect(s.from).toEqual({ file: path.join(FIXTURES, 'tap.db'), recording: 3 });
    expect(s.phases).toEqual([
      { kind: 'replay', name: 'phase-1', speed: 1 },
      { kind: 'replay', name: 'phase-2', speed: 2.5, maxInFlight: 10 },
      { kind: 'replay', name: 'phase-3', speed: 4 },
    ]);
    expect(scenario(`target: { reference: true }\nfrom: tap.db\nphases: [ { replay: {} } ]\n`).from).toEqual({ file: path.join(FIXTURES, 'tap.db') });
  });
});
