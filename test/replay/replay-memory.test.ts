/**
 * A replay's memory follows what it lists, not how many exchanges it replays: the streamed report
 * keeps a bounded number of differences and values whatever the count, and the plan is a few
 * numbers per step. Structural bounds (what is held), not RSS: `npm run bench -- bigrec` measures that.
 */
import { describe, expect, it } from 'vitest';
import type { ReplayedAnswer } from '../../src/replay/compare.js';
import { planReplay, ReplayPlanBuilder } from '../../src/replay/replay-plan.js';
import { EXACT_VALUES, MAX_LISTED, Quantiles, ReplayReportBuilder, finishReport } from '../../src/replay/replay-report.js';
import { NO_RULES } from '../../src/replay/rules.js';
import { REMEMBERED, ReplayRemap } from '../../src/replay/replay-remap.js';
import { renderText } from '../../src/report/replay-diff.js';
import type { ExchangeHead, StoredExchange } from '../../src/store/types.js';

function recorded(i: number, method = 'tools/call', target: string | null = 'echo'): StoredExchange {
  return {
    key: `c/c2s/${i}`,
    connectionId: 'c',
    direction: 'c2s',
    id: i,
    idType: 'number',
    method,
    ...(target !== null ? { target } : {}),
    era: 'legacy',
    request: { jsonrpc: '2.0', id: i, method, params: { name: target ?? undefined, arguments: { text: `hello ${i}` } } },
    response: { jsonrpc: '2.0', id: i, result: { content: [{ type: 'text', text: `hello ${i}` }] } },
    startUs: i * 1000,
    endUs: i * 1000 + 200 + (i % 97),
    latencyUs: 200 + (i % 97),
    outcome: 'ok',
    isError: false,
    progress: [],
    responseAfterCancel: false,
    requestSeq: 2 * i,
    responseSeq: 2 * i + 1,
    rowid: i + 1,
    recordingId: 1,
    state: 'completed',
  };
}

/** The replayed answer: the recorded one, or a changed text for every `everyNth` exchange. */
function replayed(ex: StoredExchange, i: number, everyNth: number): ReplayedAnswer {
  const text = i % everyNth === 0 ? `HELLO ${i}` : `hello ${i}`;
  return {
    response: { jsonrpc: '2.0', id: ex.id, result: { content: [{ type: 'text', text }] } },
    outcome: 'ok',
    isError: false,
    latencyUs: 300 + (i % 89),
    progressCount: 0,
    unexpectedServerRequests: [],
  };
}

function feed(n: number, everyNth: number): ReplayReportBuilder {
  const b = new ReplayReportBuilder(NO_RULES, { listAll: false });
  for (let i = 0; i < n; i++) {
    const ex = recorded(i, i % 3 === 0 ? 'tools/list' : 'tools/call', i % 3 === 0 ? null : 'echo');
    b.add(i, ex, replayed(ex, i, everyNth));
  }
  return b;
}

describe('streamed replay report', () => {
  it('holds the same whether it replayed 40,000 or 60,000 exchanges: the first differences, no value one by one', () => {
    // Two groups past EXACT_VALUES each: their figures are histograms by then.
    const small = feed(40_000, 10);
    const big = feed(60_000, 10);
    expect(small.retained).toEqual({ pairs: MAX_LISTED, waiting: 0, values: 0 });
    expect(big.retained).toEqual(small.retained);
    expect(feed(1_000, 10).retained).toEqual({ pairs: 100, waiting: 0, values: 2 * 1_000 });
    const report = big.finish({ file: 'big.db', recordingIds: [1], target: 't' });
    expect(report.pairs).toHaveLength(MAX_LISTED);
    expect(report.counts).toEqual({ exchanges: 60_000, same: 54_000, different: 6_000, differences: 6_000, noResponse: 0, notCompared: 0, notSent: 0 });
    expect(report.unlisted).toEqual({
      listed: MAX_LISTED,
      count: 5_000,
      byGroup: [
        { group: 'tools/call echo', count: 3_334 },
        { group: 'tools/list', count: 1_666 },
      ],
    });
    expect(report.latency!.map((g) => [g.name, g.count])).toEqual([
      ['tools/call echo', 40_000],
      ['tools/list', 20_000],
    ]);
    const text = renderText(report, { color: false });
    expect(text).toContain('✗ 5000 more different exchanges, not listed (only the first 1000 are kept): tools/call echo 3334, tools/list 1666');
    expect(text).toContain('60000 exchanges replayed: 54000 same, 6000 different, 0 without response; 6000 differences');
  });

  it('lists answers in step order whatever order they come in, holding only those that wait for an earlier one', () => {
    const b = new ReplayReportBuilder(NO_RULES, { listAll: true });
    const order = [3, 1, 0, 2, 5, 4];
    const held: number[] = [];
    for (const i of order) {
      const ex = recorded(i);
      b.add(i, ex, replayed(ex, i, 2));
      held.push(b.retained.waiting);
    }
    expect(held).toEqual([1, 2, 1, 0, 1, 0]);
    expect(b.finish({ file: 'f', recordingIds: [1], target: 't' }).pairs.map((p) => p.recorded.rowid)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('gives the same report as the one built from every pair while the figures are exact', () => {
    const n = 500;
    const slowdown = { factor: 1.1, floorUs: 50, minSamples: 3 };
    const b = new ReplayReportBuilder(NO_RULES, { listAll: true, slowdown });
    const pairs = [];
    for (let i = 0; i < n; i++) {
      const ex = recorded(i);
      const a = replayed(ex, i, 7);
      b.add(i, ex, a);
      pairs.push({ recorded: ex, replayed: a, differences: [] });
    }
    const streamed = b.finish({ file: 'f', recordingIds: [1], target: 't' });
    const whole = finishReport({ file: 'f', recordingIds: [1], target: 't', slowdown, pairs });
    expect(streamed.latency).toEqual(whole.latency);
    expect(streamed.groupDifferences).toEqual(whole.groupDifferences);
    expect(streamed.pairs).toHaveLength(n);
    expect(streamed.pairs[0]!.recorded).toEqual({
      rowid: 1,
      id: 0,
      method: 'tools/call',
      target: 'echo',
      outcome: 'ok',
      latencyUs: 200,
      session: '1/connection c',
    });
    expect(streamed.pairs[0]!.replayed).not.toHaveProperty('response');
  });
});

describe('quantiles', () => {
  it('are exact up to the bound, then within 0.1% from a histogram that holds no value', () => {
    const q = new Quantiles();
    const values: number[] = [];
    for (let i = 0; i < 3 * EXACT_VALUES; i++) {
      const v = 100 + ((i * 7919) % 50_000);
      values.push(v);
      q.add(v);
      if (i === EXACT_VALUES - 1) expect(q.retained).toBe(EXACT_VALUES);
    }
    expect(q.retained).toBe(0);
    expect(q.count).toBe(3 * EXACT_VALUES);
    values.sort((a, b) => a - b);
    for (const p of [50, 95]) {
      const exact = values[Math.ceil((p / 100) * values.length) - 1]!;
      expect(Math.abs(q.percentile(p)! - exact) / exact).toBeLessThan(0.001);
    }
  });
});

describe('replay plan as columns', () => {
  const head = (i: number): ExchangeHead => {
    const { rowid, recordingId, state, connectionId, direction, method, target, era, startUs, endUs, latencyUs, outcome, requestSeq } = recorded(i);
    return { rowid, recordingId, state, connectionId, direction, method, target, era, startUs, endUs, latencyUs, outcome, requestSeq, answered: true };
  };

  it('holds a few numbers per step (no exchange), and the same steps as the plan of objects', () => {
    const n = 50_000;
    const builder = new ReplayPlanBuilder<ExchangeHead>();
    for (let i = n - 1; i >= 0; i--) builder.add(head(i));
    const plan = builder.build();
    const columns = [plan.rowids, plan.offsetsUs, plan.sessionOf, plan.afterStart, plan.afterList];
    const bytes = columns.reduce((sum, c) => sum + c.byteLength, 0);
    expect(plan.size).toBe(n);
    expect(bytes / n).toBeLessThanOrEqual(8 + 8 + 4 + 4 + 4 + 1);
    expect(Object.values(plan).filter((v) => Array.isArray(v))).toEqual([plan.sessions]);
    const objects = planReplay(Array.from({ length: 200 }, (_, i) => recorded(i)));
    const small = new ReplayPlanBuilder<ExchangeHead>();
    for (let i = 0; i < 200; i++) small.add(head(i));
    const built = small.build();
    expect([...built.rowids]).toEqual(objects.steps.map((s) => s.exchange.rowid));
    expect([...built.offsetsUs]).toEqual(objects.steps.map((s) => s.offsetUs));
    expect([...built.afterStart]).toEqual([...objects.afterStart]);
    expect(objects.steps[5]!.after).toEqual([4]);
  });
});

describe('replay remap memory', () => {
  it('remembers the ids of the latest requests and of every subscriptions/listen, not of every request', () => {
    const remap = new ReplayRemap();
    remap.outgoing({ jsonrpc: '2.0', id: 'L', method: 'subscriptions/listen', params: {} }, 1);
    const n = REMEMBERED + 10;
    for (let i = 0; i < n; i++) remap.outgoing({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'echo' } }, 100 + i);
    const cancel = (requestId: string | number) =>
      remap.outgoing({ jsonrpc: '2.0', id: 0, method: 'notifications/cancelled', params: { requestId } }, 0).request.params;
    expect(cancel(n - 1)).toEqual({ requestId: 100 + n - 1 });
    expect(cancel('L')).toEqual({ requestId: 1 });
    // Forgotten: sent as recorded.
    expect(cancel(1)).toEqual({ requestId: 1 });
  });
});
