/**
 * The pure parts of cancel steps: the `cancel:` block and the `cancel: honoured` threshold as
 * scenarios write them, one call's verdict from what was seen, and shards' cancel sections merging.
 */
import { describe, expect, it } from 'vitest';
import { CancelStats, judgeCall, verdictOf, type CancelObservation, type CpuWindow } from '../../src/load/results/cancel-stats.js';
import { parseThreshold } from '../../src/load/results/thresholds.js';
import { scriptCancel } from '../../src/load/scenario/scenario-cancel.js';
import { scenario } from './scenario-fixtures.js';

const head = 'target: { reference: true }\nphases: [ { closed: { vus: 1, iterations: 1 } } ]\n';

describe('the cancel: block', () => {
  it('parses after / afterProgress, defaults, and turns progress on', () => {
    const s = scenario(
      `${head}steps:\n  - tool: progress\n    cancel: { after: 300ms, probe: in-flight }\n  - tool: delay\n    cancel: { afterProgress: 2, close: true, observe: 2s, grace: 10ms }\n`,
    );
    expect(s.steps[0]).toMatchObject({ progress: true, cancel: { afterMs: 300, close: false, observeMs: 1000, graceMs: 50, probe: 'in-flight' } });
    expect(s.steps[1]!.cancel).toEqual({ afterProgress: 2, close: true, observeMs: 2000, graceMs: 10 });
  });

  it.each([
    ['{ close: true }', /give one of after \(a duration, e\.g\. 300ms\) or afterProgress/],
    ['{ after: 1s, afterProgress: 1 }', /give one of after/],
    ['{ after: 300 }', /cancel\.after: 300 has no unit; write 300s or 300ms/],
    ['{ afterProgress: 0 }', /afterProgress/],
    ['{ after: 1s, observe: soon }', /cancel\.observe: must be a duration like 300ms or 2s/],
    ['{ after: 1s, nope: 1 }', /unknown field/],
  ])('refuses %s', (block, message) => {
    expect(() => scenario(`${head}steps:\n  - tool: progress\n    cancel: ${block}\n`)).toThrow(message);
  });

  it('the raw driver cannot cancel', () => {
    expect(() => scenario(`${head}driver: raw\nsteps:\n  - tool: progress\n    cancel: { after: 1s }\n`)).toThrow(/the raw driver cannot cancel calls/);
  });

  it('thresholds: "cancel: honoured", the YAML mapping form, the US spelling; a method scope is refused', () => {
    const s = scenario(
      `${head}steps:\n  - tool: progress\n    cancel: { after: 1s }\nthresholds:\n  tool:progress:\n    - cancel: honoured\n  all: [ "cancel == ignored", "cancel: honored" ]\n`,
    );
    expect(s.thresholds.map((t) => [t.scope.kind, t.metric])).toEqual([
      ['tool', { kind: 'cancel', expect: 'honoured' }],
      ['all', { kind: 'cancel', expect: 'ignored' }],
      ['all', { kind: 'cancel', expect: 'honoured' }],
    ]);
    expect(parseThreshold('cancel: maybe')).toMatch(/the cancel verdict is honoured or ignored/);
    expect(parseThreshold('cancel: honoured', { kind: 'method', name: 'tools/call' })).toMatch(/per tool/);
  });
});

const obs = (o: Partial<CancelObservation>): CancelObservation => ({
  key: 't',
  mechanism: 'notifications/cancelled',
  fired: true,
  progressBefore: 1,
  progressAfterUs: [],
  streamEnd: 'observe_end',
  streamEndAfterUs: 1_000_000,
  ...o,
});

describe('one call’s verdict', () => {
  it('progress past the grace is ignored, for as long as the last one', () => {
    expect(judgeCall(obs({ progressAfterUs: [10_000, 400_000, 900_000] }), 50)).toMatchObject({ verdict: 'ignored', workAfterUs: 900_000 });
  });
  it('a final result past the grace is ignored; an error answer is no evidence the work stopped: unknown', () => {
    expect(judgeCall(obs({ final: { kind: 'result', afterUs: 700_000 }, streamEnd: 'response' }), 50)).toMatchObject({
      verdict: 'ignored',
      workAfterUs: 700_000,
    });
    // A framework may answer a cancelled call at once while its handler runs on.
    expect(judgeCall(obs({ final: { kind: 'error', afterUs: 3_000 }, streamEnd: 'response' }), 50).verdict).toBe('unknown');
  });
  it('the server ending the stream, or a message within the grace, is no evidence either: unknown', () => {
    // A server may end the stream at the cancel while its work runs on: from outside, the same sight.
    expect(judgeCall(obs({ progressAfterUs: [4_000], streamEnd: 'server', streamEndAfterUs: 6_000 }), 50).verdict).toBe('unknown');
  });
  it('no work seen after notifications/cancelled is no evidence (SDK 1.x drops it): unknown, with the reason', () => {
    const v = judgeCall(obs({}), 50);
    expect(v.verdict).toBe('unknown');
    expect(v.evidence).toMatch(/SDK 1\.x servers drop progress after a cancel, so seeing no work is no evidence: give --probe TOOL/);
  });
  it('a probe with no record of the call: unknown, saying so', () => {
    const probe = { found: false, running: false, askedAfterUs: 1_000_000, error: 'probe: the server has no record of the call' };
    expect(judgeCall(obs({ probe }), 50)).toMatchObject({
      verdict: 'unknown',
      evidence: 'notifications/cancelled: probe: the server has no record of the call',
    });
  });
  it("the probe's end of the work is the stop delay, and its running work is ignored", () => {
    const probe = { found: true, running: false, lastWorkAfterUs: -5_000, endedAfterUs: 2_500, askedAfterUs: 1_000_000 };
    expect(judgeCall(obs({ mechanism: 'close', streamEnd: 'client', streamEndAfterUs: 0, probe }), 50)).toMatchObject({
      verdict: 'honoured',
      stopDelayUs: 2_500,
    });
    const running = { ...probe, running: true, endedAfterUs: undefined };
    expect(judgeCall(obs({ mechanism: 'close', streamEnd: 'client', probe: running }), 50)).toMatchObject({ verdict: 'ignored', workAfterUs: 1_000_000 });
  });
  it('work before the server saw the cancel (the probe says when) is not held against it', () => {
    const probe = { found: true, running: false, lastWorkAfterUs: 120_000, endedAfterUs: 125_000, cancelSeenAfterUs: 118_000, askedAfterUs: 1_000_000 };
    expect(judgeCall(obs({ progressAfterUs: [60_000, 121_000], probe }), 50)).toMatchObject({ verdict: 'honoured', stopDelayUs: 125_000 });
    expect(judgeCall(obs({ progressAfterUs: [60_000, 400_000], probe: { ...probe, lastWorkAfterUs: 400_000 } }), 50).verdict).toBe('ignored');
  });
  it('a closed stream without a probe shows nothing: unknown', () => {
    expect(judgeCall(obs({ mechanism: 'close', streamEnd: 'client', streamEndAfterUs: 0 }), 50).verdict).toBe('unknown');
  });
});

describe("a stdio server process's CPU after the cancel", () => {
  // 950 ms watched after the grace, from a process idle before the call, nothing else asked of it.
  const cpu = (c: Partial<CpuWindow>): CpuWindow => ({ fromUs: 50_000, toUs: 1_000_000, busyUs: 300_000, idleRate: 0, alone: true, cores: 2, ...c });

  it('busy well above its idle rate: ignored, saying how much CPU it used; at least that over its cores', () => {
    const v = judgeCall(obs({ cpu: cpu({}) }), 50);
    expect(v).toMatchObject({ verdict: 'ignored', workAfterUs: 200_000 });
    expect(judgeCall(obs({ cpu: cpu({ cores: 1 }) }), 50)).toMatchObject({ verdict: 'ignored', workAfterUs: 350_000 });
    expect(v.evidence).toBe(
      'notifications/cancelled: cpu: the server process used 300ms of CPU in the 950ms after the grace, nothing else asked of it (idle before the call: 0%)',
    );
  });
  it('no claim from a little CPU, a process busy when idle, another request, or a short window', () => {
    for (const c of [
      cpu({ busyUs: 60_000 }), // a GC, the cancel's handling: under 100 ms
      cpu({ idleRate: 0.2 }), // the process works when nothing is asked of it
      cpu({ busyUs: 300_000, idleRate: 0.05, toUs: 4_050_000 }), // 4 s watched: 300 ms is under 10% above idle
      cpu({ alone: false }), // someone else's request may have used it
      cpu({ toUs: 200_000, busyUs: 150_000 }), // 150 ms: a few clock ticks
    ])
      expect(judgeCall(obs({ cpu: c }), 50).verdict).toBe('unknown');
  });
  it("the probe's word, when it found the work, goes before the CPU", () => {
    const probe = { found: true, running: false, lastWorkAfterUs: -5_000, endedAfterUs: 30_000, askedAfterUs: 1_000_000 };
    expect(judgeCall(obs({ cpu: cpu({}), probe }), 50)).toMatchObject({ verdict: 'honoured', stopDelayUs: 30_000 });
  });
});

describe('the cancel section', () => {
  it('counts calls, keeps ignored evidence first, and merges shards into the same verdict', () => {
    const a = new CancelStats();
    const b = new CancelStats();
    const stopped = obs({ probe: { found: true, running: false, endedAfterUs: 1000, askedAfterUs: 1_000_000 } });
    for (let i = 0; i < 6; i++) a.record(stopped, judgeCall(stopped, 50));
    a.record(obs({ fired: false }), undefined);
    const late = obs({ progressAfterUs: [500_000] });
    b.record(late, judgeCall(late, 50));
    const ra = a.toJSON();
    expect(ra).toMatchObject({ verdict: 'honoured', calls: 7, cancelled: 6, completedBeforeCancel: 1, honoured: 6 });
    const part = CancelStats.fromJSON(ra);
    part.merge(CancelStats.fromJSON(b.toJSON()));
    const merged = part.toJSON();
    expect(merged).toMatchObject({ verdict: 'ignored', calls: 8, cancelled: 7, honoured: 6, ignored: 1, progressAfterCancel: 1 });
    expect(merged.stopDelay.summary.count).toBe(6);
    expect(merged.evidence[0]).toMatch(/^ignored: /);
    expect(merged.evidence).toHaveLength(5);
  });
});

describe('the evidence of a few calls', () => {
  it('an ignored call judged after an unknown one still leads the evidence, as the verdict it decides', () => {
    const s = new CancelStats();
    s.record(obs({}), judgeCall(obs({}), 50));
    const late = obs({ progressAfterUs: [500_000] });
    s.record(late, judgeCall(late, 50));
    const g = s.toJSON();
    expect(g.verdict).toBe('ignored');
    expect(g.evidence.map((e) => e.split(':')[0])).toEqual(['ignored', 'unknown']);
  });
});

describe("a tool's verdict", () => {
  it('honoured only when every cancelled call showed it; one without evidence makes it unknown, first in the evidence', () => {
    expect(verdictOf({ honoured: 3, ignored: 0, unknown: 0 })).toBe('honoured');
    expect(verdictOf({ honoured: 3, ignored: 0, unknown: 1 })).toBe('unknown');
    expect(verdictOf({ honoured: 3, ignored: 1, unknown: 1 })).toBe('ignored');
    const s = new CancelStats();
    const stopped = obs({ probe: { found: true, running: false, endedAfterUs: 1000, askedAfterUs: 1_000_000 } });
    for (let i = 0; i < 5; i++) s.record(stopped, judgeCall(stopped, 50));
    s.record(obs({}), judgeCall(obs({}), 50));
    const g = s.toJSON();
    expect(g).toMatchObject({ verdict: 'unknown', honoured: 5, unknown: 1 });
    expect(g.evidence[0]).toMatch(/^unknown: notifications\/cancelled: SDK 1\.x servers drop progress/);
  });
});

describe("a scripted call's cancel option", () => {
  it('takes a signal alone or with after, with durations as strings, and says what is wrong', () => {
    const signal = new AbortController().signal;
    expect(scriptCancel({ signal })).toMatchObject({ signal, observeMs: 1000, graceMs: 50, close: false });
    expect(scriptCancel({ signal, after: '300ms', probe: 'in-flight' })).toMatchObject({ signal, afterMs: 300, probe: 'in-flight' });
    expect(() => scriptCancel({ signal: 'soon' })).toThrow(/cancel\.signal: must be an AbortSignal/);
    expect(() => scriptCancel({ after: '1s', afterProgress: 1 })).toThrow(/give one of after .* and\/or a signal/);
    expect(() => scriptCancel({ observe: '1s' })).toThrow(/give one of after/);
    expect(() => scriptCancel({ after: 300 })).toThrow(/cancel\.after: 300 has no unit/);
  });
});
