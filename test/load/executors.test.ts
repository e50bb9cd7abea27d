/**
 * Executors on virtual time (VirtualScheduler + the simulated FAKE driver): exact, timing-free
 * checks of the schedule, of coordinated-omission-free latency, of dropped iterations, and of
 * shard results merging into exactly the single run's numbers.
 */
import { describe, expect, it } from 'vitest';
import { arrivalOffsetSec, totalArrivals } from '../../src/load/executors/open-executor.js';
import { VirtualScheduler } from '../../src/load/executors/virtual-scheduler.js';
import { decodeHistogram, newHistogram, recordUs, sameCounts } from '../../src/util/histogram.js';
import type { LoadResult } from '../../src/load/results/load-result.js';
import { mergeResults } from '../../src/load/results/merge-results.js';
import { runLoad } from '../../src/load/run/run-load.js';
import type { Scenario } from '../../src/load/scenario/scenario.js';
import type { ShardSpec } from '../../src/load/executors/iteration.js';
import { scenario } from './scenario-fixtures.js';
import { simulatedDriver, stallDelayUs, type SimServer } from './simulated-driver.js';

const START = 1_000_000_000_000;

async function simulate(s: Scenario, server: SimServer, shard?: ShardSpec): Promise<LoadResult> {
  const sched = new VirtualScheduler(START);
  const clock = { nowUs: () => sched.nowUs() };
  return sched.run(runLoad(s, { scheduler: sched, clock, shard, driverFactory: async () => simulatedDriver(sched, server) }));
}

const base = (phases: string, steps = '  - { tool: echo, arguments: { text: hi } }') => `
target: { url: "http://127.0.0.1:1/mcp" }
phases:
${phases}
steps:
${steps}
`;

describe('open executor schedule', () => {
  it('a constant rate gives exactly rate x duration arrivals, each started at its intended time', async () => {
    const s = scenario(base('  - open: { rate: 100, duration: 2s }'));
    const r = await simulate(s, { serviceUs: () => 1000 });
    expect(r.phases[0]).toMatchObject({ scheduled: 200, started: 200, dropped: 0, completed: 200 });
    expect(r.overall.latency.summary).toMatchObject({ count: 200, min: 1000, max: 1000 });
    expect(decodeHistogram(r.scheduleLag.hdr).maxValue).toBe(0);
  });

  it("the next phase starts on schedule, whatever the previous phase's requests still take (no coordinated omission across phases)", async () => {
    const s = scenario(base('  - open: { rate: 20, duration: 1s }\n  - open: { rate: 20, duration: 1s }'));
    // Every request of the first phase (the first 20) takes 3 s: the second phase must still start at 1 s.
    let calls = 0;
    const r = await simulate(s, { serviceUs: () => (calls++ < 20 ? 3_000_000 : 1000) });
    expect(r.phases.map((p) => (p.startUs - START) / 1e6)).toEqual([0, 1]);
    expect(r.phases[1]).toMatchObject({ scheduled: 20, started: 20, dropped: 0, completed: 20 });
    expect(r.phases[0]!.endUs - START).toBeGreaterThanOrEqual(3_000_000); // its last request ended past the next phase's start
  });

  it("maxInFlight holds at a phase boundary: the previous phase's stragglers count against the next phase's cap", async () => {
    const s = scenario(base('  - open: { rate: 100, duration: 1s, maxInFlight: 100 }\n  - open: { rate: 100, duration: 1s, maxInFlight: 100 }'));
    // Every call takes 5 s: the first phase's 100 are all still running through the second phase.
    const r = await simulate(s, { serviceUs: () => 5_000_000 });
    expect(r.maxInFlight).toBe(100);
    expect(r.phases[1]).toMatchObject({ scheduled: 100, started: 0, dropped: 100 });
  });

  it("a closed phase ended by its duration schedules only what it started: it cannot dilute an open phase's drops", async () => {
    const s = scenario(base('  - open: { rate: 50, duration: 2s, maxInFlight: 2 }\n  - closed: { vus: 1, duration: 1s, iterations: 100000 }'));
    const r = await simulate(s, { serviceUs: () => 200_000 });
    const [open, closed] = r.phases;
    expect(open!.dropped).toBeGreaterThan(70);
    expect(closed!.scheduled).toBe(closed!.started);
    expect(closed!.started).toBeLessThanOrEqual(6);
  });

  it('the rate threshold counts the time an iterations-only closed phase ran (not zero)', async () => {
    const s = scenario(`${base('  - closed: { vus: 5, iterations: 40 }\n  - open: { rate: 10, duration: 2s }')}thresholds: { all: [ "rate >= 100" ] }\n`);
    const r = await simulate(s, { serviceUs: () => 10_000 });
    // 200 closed iterations of 10 ms on 5 VUs: 0.4 s; then 20 arrivals in 2 s: 220 over 2.4 s.
    const [t] = r.thresholds;
    expect(t).toMatchObject({ ok: false });
    expect(t!.observed).toBeCloseTo(220 / 2.4, 0);
  });

  it('a ramp from 0 to 100/s over 2 s puts 25 arrivals in the first second and 75 in the second', () => {
    const p = { fromRate: 0, toRate: 100, durationMs: 2000 };
    expect(totalArrivals(p)).toBe(100);
    const offsets = Array.from({ length: 100 }, (_, j) => arrivalOffsetSec(j, p));
    expect(offsets.filter((t) => t < 1 - 1e-9).length).toBe(25);
    expect(Math.max(...offsets)).toBeLessThan(2);
  });

  it('counts arrivals that find maxInFlight iterations running as dropped: scheduled = started + dropped', async () => {
    const s = scenario(base('  - open: { rate: 1000, duration: 1s, maxInFlight: 10 }'));
    const r = await simulate(s, { serviceUs: () => 50_000 });
    const p = r.phases[0]!;
    expect(p.scheduled).toBe(1000);
    expect(p.started + p.dropped).toBe(1000);
    // 10 slots, 50 ms each: about 200 starts in one second
    expect(p.started).toBeGreaterThanOrEqual(190);
    expect(p.started).toBeLessThanOrEqual(210);
    expect(r.maxInFlight).toBe(10);
  });
});

describe('coordinated omission', () => {
  // The reference server's schedule: every 2 s, responses leaving in the last 500 ms wait for its end.
  const server: SimServer = { serviceUs: () => 20_000, stall: { everyUs: 2_000_000, forUs: 500_000, anchorUs: START } };

  it('open-model latency equals the true latency of every request computed from the stall schedule', async () => {
    const s = scenario(base('  - open: { rate: 100, duration: 4s }'));
    const r = await simulate(s, server);
    const truth = newHistogram();
    for (let j = 0; j < 400; j++) {
      const ready = START + j * 10_000 + 20_000;
      recordUs(truth, 20_000 + stallDelayUs(server.stall, ready));
    }
    expect(sameCounts(decodeHistogram(r.overall.latency.hdr), truth)).toBe(true);
    expect(r.overall.latency.summary.p50).toBe(truth.getValueAtPercentile(50));
    expect(r.overall.latency.summary.p99).toBe(truth.getValueAtPercentile(99));
    // p99: 25% of requests wait up to 500 ms; the 99th percentile sits near 20 + 480 ms
    expect(r.overall.latency.summary.p99).toBeGreaterThan(480_000);
  });

  it('a closed loop on the same server sends less during stalls and under-reports the tail', async () => {
    const s = scenario(base('  - closed: { vus: 1, duration: 4s }'));
    const closed = await simulate(s, server);
    // only ~2 of ~160 requests see a stall: p90 stays at the bare service time
    expect(closed.overall.latency.summary.p90).toBeLessThan(25_000);
  });
});

describe('shards', () => {
  const yaml = base(
    `  - open: { from: 50, to: 250, duration: 2s }
  - closed: { vus: 5, iterations: 20, thinkTime: { min: 5ms, max: 25ms } }`,
    `  - { name: a, tool: echo, weight: 3, arguments: { text: "{{data.users.name}} {{random.int(1, 9)}}" } }
  - { name: b, tool: fail, weight: 1 }
  - { name: c, method: tools/list, weight: 1 }`,
  ).replace('phases:', 'data: { users: users.csv }\nphases:');
  // service time depends on the arguments, so any difference in choices would show in the histograms
  const server: SimServer = {
    serviceUs: (c) => 1000 + JSON.stringify(c.params ?? {}).length * 97,
    stall: { everyUs: 1_000_000, forUs: 200_000, anchorUs: START },
    outcome: (c) => (c.tool === 'fail' ? 'tool_error' : 'ok'),
  };

  it('merged shard results equal the single run exactly (histograms bucket for bucket, all counters)', async () => {
    const s = scenario(yaml);
    const single = await simulate(s, server);
    const shards = [];
    for (let i = 1; i <= 3; i++) shards.push(await simulate(s, server, { index: i, count: 3 }));
    const merged = mergeResults(shards);
    expect(merged.overall.counters).toEqual(single.overall.counters);
    for (const key of ['echo', 'fail'] as const) {
      expect(sameCounts(decodeHistogram(merged.tools[key]!.latency.hdr), decodeHistogram(single.tools[key]!.latency.hdr))).toBe(true);
    }
    expect(sameCounts(decodeHistogram(merged.overall.latency.hdr), decodeHistogram(single.overall.latency.hdr))).toBe(true);
    expect(merged.overall.latency.summary).toEqual(single.overall.latency.summary);
    expect(merged.phases.map((p) => [p.scheduled, p.started, p.dropped])).toEqual(single.phases.map((p) => [p.scheduled, p.started, p.dropped]));
    expect(merged.shards).toEqual([1, 2, 3].map((index) => ({ index, count: 3 })));
    // the per-second series add up too, point by point (in flight is a sum of maxima: an upper bound)
    const points = (r: LoadResult) => r.series!.points.map(({ latency: _l, inFlight: _f, ...counts }) => counts);
    expect(points(merged)).toEqual(points(single));
    expect(single.series!.points.reduce((a, p) => a + p.requests, 0)).toBe(single.overall.counters.requests);
    expect(single.series!.points.reduce((a, p) => a + p.started, 0)).toBe(400);
    merged.series!.points.forEach((p, i) => expect(sameCounts(decodeHistogram(p.latency), decodeHistogram(single.series!.points[i]!.latency))).toBe(true));
    // known shares: weights 3:1:1 over 300 (open: average 150/s for 2 s) + 100 (closed) iterations
    expect(single.steps.a!.counters.requests + single.steps.b!.counters.requests + single.steps.c!.counters.requests).toBe(400);
    expect(single.steps.b!.counters.toolErrors).toBe(80);
    expect(single.steps.a!.counters.requests).toBe(240);
  });

  it('refuses to merge the same shard twice', async () => {
    const s = scenario(base('  - open: { rate: 10, duration: 1s }'));
    const one = await simulate(s, { serviceUs: () => 1000 }, { index: 1, count: 2 });
    expect(() => mergeResults([one, one])).toThrow(/shard 1\/2 appears twice/);
  });
});
