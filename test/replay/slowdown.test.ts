/**
 * `replay --max-slowdown`: which calls are timed (the same on both sides), the floor, the minimum
 * sample count and the sign test; on reports built from pairs.
 */
import { describe, expect, it } from 'vitest';
import type { ReplayedAnswer } from '../../src/replay/compare.js';
import { finishReport, ReplayReportBuilder, type ReplayedPair } from '../../src/replay/replay-report.js';
import { NO_RULES } from '../../src/replay/rules.js';
import { LoopLag } from '../../src/util/loop-lag.js';
import { CANCELLED_ANSWER } from '../../src/replay/replayed-answer.js';
import { parseMaxSlowdown, slowdownLimit, slowerNeeded, type SlowdownLimit } from '../../src/replay/slowdown.js';
import { renderJson, renderText } from '../../src/report/replay-diff.js';
import type { StoredExchange } from '../../src/store/types.js';

let row = 0;
function call(tool: string, latencyUs: number, over: Partial<StoredExchange> = {}): StoredExchange {
  row++;
  return {
    key: `c/c2s/${row}`,
    connectionId: 'c',
    direction: 'c2s',
    id: row,
    idType: 'number',
    method: 'tools/call',
    target: tool,
    era: 'legacy',
    request: { jsonrpc: '2.0', id: row, method: 'tools/call', params: { name: tool } },
    response: { jsonrpc: '2.0', id: row, result: { content: [] } },
    startUs: row * 10_000_000,
    endUs: row * 10_000_000 + latencyUs,
    latencyUs,
    outcome: 'ok',
    isError: false,
    progress: [],
    responseAfterCancel: false,
    requestSeq: 2 * row,
    responseSeq: 2 * row + 1,
    rowid: row,
    recordingId: 1,
    state: 'completed',
    ...over,
  };
}

/** A call the client cancelled when recorded: no answer, its latency the time of the cancel. */
function cancelled(tool: string, atUs: number): StoredExchange {
  const { response: _r, ...ex } = call(tool, atUs, { outcome: 'cancelled', cancel: { by: 'c2s', timeUs: 0 } as StoredExchange['cancel'] });
  return ex;
}

const ok = (latencyUs: number): ReplayedAnswer => ({
  response: { jsonrpc: '2.0', id: 1, result: { content: [] } },
  outcome: 'ok',
  isError: false,
  latencyUs,
  progressCount: 0,
  unexpectedServerRequests: [],
});

function report(pairs: [StoredExchange, ReplayedAnswer][], limit: SlowdownLimit = slowdownLimit({ factor: 1.5 })) {
  const ps: ReplayedPair<StoredExchange>[] = pairs.map(([recorded, replayed]) => ({ recorded, replayed, differences: [] }));
  return finishReport({ file: 'f.db', recordingIds: [1], target: 'node s.js', slowdown: limit, pairs: ps });
}

describe('replay --max-slowdown', () => {
  it('leaves a cancelled call out of both sides: an unchanged server is not slower', () => {
    // The recorded p50 once landed on the cancelled calls (100 ms) against the replayed full calls.
    const r = report([
      ...[1, 2, 3].map((): [StoredExchange, ReplayedAnswer] => [cancelled('summarize', 100_000), CANCELLED_ANSWER]),
      ...[1, 2, 3].map((): [StoredExchange, ReplayedAnswer] => [call('summarize', 400_000), ok(402_000)]),
    ]);
    expect(r.groupDifferences).toEqual([]);
    expect(r.latency).toEqual([expect.objectContaining({ name: 'tools/call summarize', count: 6, timed: 3, recordedP50Us: 400_000, replayedP50Us: 402_000 })]);
    expect(renderText(r, { color: false })).toContain(
      '(percentiles of the calls timed on both sides: cancelled, unanswered and not-compared ones are left out of both: tools/call summarize 3 of 6)',
    );
  });

  it('flags the same calls twice as slow, with the factor as measured', () => {
    const r = report([
      [cancelled('summarize', 100_000), CANCELLED_ANSWER],
      ...[400_000, 410_000, 2_000_000].map((us): [StoredExchange, ReplayedAnswer] => [call('summarize', us), ok(2 * us)]),
    ]);
    expect(r.groupDifferences).toEqual([
      {
        group: 'tools/call summarize',
        difference: {
          kind: 'slowdown',
          recorded: 410_000,
          replayed: 820_000,
          message: 'p50 410.0 ms -> 820.0 ms (2.00x per call, median); 3 of 3 calls more than 1.5x and 5.0 ms slower',
        },
      },
    ]);
    expect(renderText(r, { color: false })).toContain('✗ tools/call summarize: slower\n    p50 410.0 ms -> 820.0 ms (2.00x per call');
  });

  it('pairs each call with its own replay: a group of short and long calls twice as slow is flagged', () => {
    const r = report([100_000, 100_000, 100_000, 2_000_000].map((us): [StoredExchange, ReplayedAnswer] => [call('summarize', us), ok(2 * us)]));
    expect(r.groupDifferences.map((g) => g.group)).toEqual(['tools/call summarize']);
  });

  it('does not flag sub-millisecond calls the replayer times a few ms longer, nor one slow outlier', () => {
    const r = report([
      ...[200, 300, 250, 400, 220].map((us): [StoredExchange, ReplayedAnswer] => [call('delete_note', us), ok(us + 3000)]),
      ...[40_000, 41_000, 42_000, 40_500].map((us, i): [StoredExchange, ReplayedAnswer] => [call('search', us), ok(i === 2 ? 200_000 : us)]),
    ]);
    expect(r.groupDifferences).toEqual([]);
    // With a floor of 1 ms asked for, the delete calls are slower every time: flagged.
    const tight = report(
      [200, 300, 250, 400, 220].map((us): [StoredExchange, ReplayedAnswer] => [call('delete_note', us), ok(us + 3000)]),
      slowdownLimit(parseMaxSlowdown('1.5x,+1ms')),
    );
    expect(tight.groupDifferences.map((g) => g.group)).toEqual(['tools/call delete_note']);
  });

  it('gives no verdict under the minimum sample count, and says so', () => {
    const pairs: [StoredExchange, ReplayedAnswer][] = [
      [call('tools/list', 300), ok(40_000)],
      [call('tools/list', 300), ok(40_000)],
    ];
    const r = report(pairs);
    expect(r.groupDifferences).toEqual([]);
    expect(r.unjudged).toEqual([{ group: 'tools/call tools/list', timed: 2 }]);
    expect(renderText(r, { color: false })).toContain('(slowdown not judged, fewer than 3 calls timed on both sides: tools/call tools/list 2)');
    expect(JSON.parse(renderJson(r))).toMatchObject({ slowdown: { factor: 1.5, floorUs: 5000, minSamples: 3 }, unjudged: [{ timed: 2 }] });
    expect(report(pairs, slowdownLimit({ factor: 1.5 }, 2)).groupDifferences).toHaveLength(1);
  });

  it('needs every pair slower under 7, then a 1% sign test', () => {
    expect([1, 3, 6, 7, 10, 20].map((n) => slowerNeeded(n))).toEqual([1, 3, 6, 7, 10, 16]);
    const many = (slow: number): [StoredExchange, ReplayedAnswer][] =>
      Array.from({ length: 20 }, (_, i): [StoredExchange, ReplayedAnswer] => [call('search', 40_000), ok(i < slow ? 80_000 : 40_000)]);
    expect(report(many(16)).groupDifferences).toHaveLength(1);
    expect(report(many(15)).groupDifferences).toHaveLength(0);
  });

  it('reads a factor and an optional floor', () => {
    expect(parseMaxSlowdown('1.5x')).toEqual({ factor: 1.5 });
    expect(parseMaxSlowdown('2')).toEqual({ factor: 2 });
    expect(parseMaxSlowdown('1.5x,+50ms')).toEqual({ factor: 1.5, floorUs: 50_000 });
    expect(parseMaxSlowdown('3x, +1s')).toEqual({ factor: 3, floorUs: 1_000_000 });
    // The floor reads as a scenario's durations do (data-file/duration.ts): every unit they know.
    expect(parseMaxSlowdown('2x,+500us')).toEqual({ factor: 2, floorUs: 500 });
    expect(parseMaxSlowdown('2x,+1m')).toEqual({ factor: 2, floorUs: 60_000_000 });
    expect(slowdownLimit({ factor: 1.5, floorUs: 0 })).toEqual({ factor: 1.5, floorUs: 1000, minSamples: 3 });
    for (const bad of ['0.5x', 'fast', '1.5x,50', '1.5x,+0', '1.5x,+50%', '1.5x,+5ms,+1s', ''])
      expect(() => parseMaxSlowdown(bad), bad).toThrow(/--max-slowdown must be/);
  });
});

describe('replay --max-slowdown on a busy machine', () => {
  it("widens each call's floor by how late the replayer ran: a busy machine is no slowdown, twice as slow still is", () => {
    const limit = slowdownLimit(parseMaxSlowdown('1.5x,+1ms'));
    const build = (lagUs: number, factor: number) => {
      const b = new ReplayReportBuilder(NO_RULES, { listAll: false, slowdown: limit, lagUs: () => lagUs });
      [20_000, 21_000, 22_000].forEach((us, i) => b.add(i, call('create_note', us), ok(us * factor + 30_000)));
      return b.finish({ file: 'f.db', recordingIds: [1], target: 't' }).groupDifferences.map((g) => g.group);
    };
    expect(build(0, 1)).toEqual(['tools/call create_note']);
    expect(build(40_000, 1)).toEqual([]);
    expect(build(40_000, 3)).toEqual(['tools/call create_note']);
  });

  it('measures how late the event loop runs', async () => {
    const lag = new LoopLag(5, 1000).start();
    try {
      await new Promise((r) => setTimeout(r, 20));
      const until = Date.now() + 60;
      while (Date.now() < until); // the loop held for 60 ms: the next tick is at least 55 ms late
      await new Promise((r) => setTimeout(r, 20));
      expect(lag.recentUs()).toBeGreaterThanOrEqual(40_000);
      expect(lag.maxUs).toBeGreaterThanOrEqual(lag.recentUs());
    } finally {
      lag.stop();
    }
  });
});
