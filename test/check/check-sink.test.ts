/**
 * The engine: a CheckSink over the sample event stream with real checkers; rule settings applied
 * centrally (off, severity), counts exact past the findings cap, the cap said, and the anomaly rules.
 */
import { describe, expect, it } from 'vitest';
import type { CheckerFactory } from '../../src/check/checker.js';
import { CheckSink } from '../../src/check/check-sink.js';
import { CHECKER_FACTORIES } from '../../src/check/checkers.js';
import { failingCount } from '../../src/check/run-check.js';
import type { TapEvent } from '../../src/model/events.js';

/** A checker that emits one finding per event of its rule, for exercising the engine alone. */
const perEvent: CheckerFactory = () => ({
  rules: [{ id: 'assert/per-event', family: 'assert', severity: 'warning', title: 'one per event', help: 'test' }],
  onEvent: (_e, emit) => emit({ ruleId: 'assert/per-event', severity: 'warning', message: 'seen', where: {} }),
  finish: () => undefined,
});

const anomaly = (kind: 'duplicate_id' | 'stdout_pollution', i: number): TapEvent => ({
  type: 'anomaly',
  kind,
  connectionId: 'c1',
  timeUs: i,
  detail: `${kind} ${i}`,
  frameSeq: i,
  direction: 's2c',
});

describe('CheckSink', () => {
  it('keeps findings up to the cap, counts them all, and keeps examples per rule', () => {
    const sink = new CheckSink({ factories: [perEvent], maxFindings: 3, examplesPerRule: 2 });
    for (let i = 0; i < 10; i++) sink.onEvent(anomaly('duplicate_id', i));
    const r = sink.finish();
    expect(r.findings.length).toBe(3);
    expect(r.omitted).toBe(7);
    expect(r.counts['assert/per-event']).toEqual({ error: 0, warning: 10, note: 0 });
    expect(r.examples['assert/per-event']!.length).toBe(2);
  });

  it('applies severities and off from the settings, and fails on what --fail-on names', () => {
    const settings = new Map([
      ['protocol/duplicate-id', { severity: 'note' as const }],
      ['protocol/stdout-pollution', { severity: 'off' as const }],
    ]);
    const sink = new CheckSink({ factories: CHECKER_FACTORIES, settings });
    sink.onEvent(anomaly('duplicate_id', 1));
    sink.onEvent(anomaly('stdout_pollution', 2));
    const r = sink.finish();
    expect(r.findings.map((f) => [f.ruleId, f.severity, f.where.side])).toEqual([['protocol/duplicate-id', 'note', 'server']]);
    expect(r.rules.find((x) => x.id === 'protocol/stdout-pollution')!.enabled).toBe(false);
    expect(failingCount(r, { level: 'error', rules: new Set() })).toBe(0);
    expect(failingCount(r, { level: 'note', rules: new Set() })).toBe(1);
    expect(failingCount(r, { rules: new Set(['protocol/duplicate-id']) })).toBe(1);
  });

  it('reports pending exchanges, an INCOMPLETE recording and dropped events at the end', () => {
    const sink = new CheckSink({
      factories: CHECKER_FACTORIES,
      context: { recording: { incomplete: 'tap killed', droppedQueue: 2, droppedWrite: 0, ended: true } },
    });
    sink.onEvent({
      type: 'exchange-started',
      exchange: {
        key: 'c1/c2s/1',
        connectionId: 'c1',
        direction: 'c2s',
        id: 7,
        idType: 'number',
        method: 'tools/call',
        target: 'search',
        era: 'legacy',
        request: { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'search' } },
        startUs: 1,
        outcome: 'unanswered',
        isError: false,
        progress: [],
        responseAfterCancel: false,
        requestSeq: 4,
      },
    } as TapEvent);
    const r = sink.finish();
    expect(r.findings.map((f) => f.ruleId).sort()).toEqual([
      'protocol/dropped-events',
      'protocol/incomplete-recording',
      'protocol/pending',
      'protocol/unknown-version',
    ]);
    expect(r.findings.find((f) => f.ruleId === 'protocol/pending')!.where).toMatchObject({ jsonRpcId: 7, method: 'tools/call', tool: 'search', frameSeq: 4 });
  });

  it('isolates a checker that throws: counted, the others still run', () => {
    const broken: CheckerFactory = () => ({
      rules: [],
      onEvent: () => {
        throw new Error('bug');
      },
      finish: () => undefined,
    });
    const sink = new CheckSink({ factories: [broken, perEvent] });
    sink.onEvent(anomaly('duplicate_id', 1));
    const r = sink.finish();
    expect(r.checkerErrors).toBe(1);
    expect(r.findings.length).toBe(1);
  });
});
