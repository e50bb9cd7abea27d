import { describe, expect, it } from 'vitest';
import { parseScope, parseThreshold } from '../../src/load/results/thresholds.js';
import { compileTemplate, type TemplateIssue } from '../../src/load/scenario/template.js';
import { parseCsv } from '../../src/load/scenario/data-tables.js';
import { smoothRoundRobin } from '../../src/load/scenario/step-mix.js';
import { renderJunit } from '../../src/load/report/junit-report.js';
import type { LoadResult } from '../../src/load/results/load-result.js';

describe('threshold expressions', () => {
  it('parses latencies with units, counters as counts or shares, coded counters and rate', () => {
    expect(parseThreshold('p(99) < 300ms')).toMatchObject({
      metric: { kind: 'latency', series: 'latency', stat: 'p', percentile: 99 },
      op: '<',
      value: 300_000,
    });
    expect(parseThreshold('p99.9<=1.5s')).toMatchObject({ metric: { percentile: 99.9 }, op: '<=', value: 1_500_000 });
    expect(parseThreshold('first_event.p(95) < 50')).toMatchObject({ metric: { series: 'first_event' }, value: 50_000 });
    for (const series of ['headers', 'gap', 'progress', 'final', 'tail']) {
      expect(parseThreshold(`${series}.max < 2s`)).toMatchObject({ metric: { kind: 'latency', series, stat: 'max' }, value: 2_000_000 });
    }
    expect(parseThreshold('tool_errors < 5%')).toMatchObject({ metric: { kind: 'counter', counter: 'tool_errors' }, value: 0.05, percent: true });
    expect(parseThreshold('transport_errors == 0')).toMatchObject({ value: 0, percent: false });
    expect(parseThreshold('jsonrpc(-32020) == 10')).toMatchObject({ metric: { counter: 'jsonrpc', code: -32020 }, value: 10 });
    expect(parseThreshold('rate >= 1960')).toMatchObject({ metric: { kind: 'rate' }, op: '>=', value: 1960 });
  });

  it('explains what is wrong', () => {
    expect(parseThreshold('p(99) <<< fast')).toMatch(/expected METRIC OP VALUE/);
    expect(parseThreshold('latency < 3ms')).toMatch(/unknown metric "latency"/);
    expect(parseThreshold('p(99) < 5%')).toMatch(/takes a time unit/);
    expect(parseThreshold('p(120) < 5ms')).toMatch(/not in \(0, 100\]/);
    expect(parseThreshold('rate > 5', { kind: 'tool', name: 'x' })).toMatch(/whole run only/);
    expect(parseScope('tools/call')).toEqual({ kind: 'method', name: 'tools/call' });
    expect(parseScope('bogus')).toMatch(/unknown threshold scope/);
  });
});

describe('templates', () => {
  const ctx = { vu: 3, iteration: 7, phase: 'p', rows: { u: { name: 'ada', n: '42', nested: { a: 1 } } }, random: () => 0.5 };

  it('keeps the type of a whole-string expression and interpolates otherwise', () => {
    const issues: TemplateIssue[] = [];
    const t = compileTemplate(
      {
        a: '{{random.int(1, 10)}}',
        b: 'it {{iteration}} vu {{vu}}',
        c: ['{{data.u.name}}', 5],
        d: '{{data.u.n | number}}',
        e: '{{data.u.nested}}',
        f: '{{ random.pick(x, "y, z") }}',
      },
      new Set(['u']),
      issues,
    );
    expect(issues).toEqual([]);
    expect(t.isStatic).toBe(false);
    expect(t.render(ctx)).toEqual({ a: 6, b: 'it 7 vu 3', c: ['ada', 5], d: 42, e: { a: 1 }, f: 'y, z' });
    const st = compileTemplate({ x: 1, y: 'plain' }, new Set(), issues);
    expect(st.isStatic).toBe(true);
  });

  it('reports bad expressions with their path', () => {
    const issues: TemplateIssue[] = [];
    compileTemplate({ a: { b: '{{ nope }}' }, c: '{{random.int(1)}}', d: '{{vu | upper}}' }, new Set(), issues);
    expect(issues.map((i) => [i.path.join('.'), i.message.split(':')[1]!.trim()])).toEqual([
      ['a.b', 'unknown expression "nope" (use data.SET.FIELD, vu, iteration, phase or random.*)'],
      ['c', 'random.int takes 2 numbers'],
      ['d', 'unknown filter "upper" (use number, string or json)'],
    ]);
  });
});

describe('data and mix', () => {
  it('parses RFC 4180 CSV (quotes, escaped quotes, CRLF)', () => {
    expect(parseCsv('name,city\r\nada,"London, UK"\r\n"gr""ace",x\r\n')).toEqual([
      { name: 'ada', city: 'London, UK' },
      { name: 'gr"ace', city: 'x' },
    ]);
  });

  it('spreads weights exactly over each cycle (smooth weighted round-robin)', () => {
    const seq = smoothRoundRobin([5, 2, 2, 1]);
    expect(seq.length).toBe(10);
    expect([0, 1, 2, 3].map((i) => seq.filter((x) => x === i).length)).toEqual([5, 2, 2, 1]);
    expect(seq.slice(0, 2)).toEqual([0, 1]);
  });
});

describe('JUnit report', () => {
  it('stays well-formed XML whatever a name holds: control characters become U+FFFD, markup is escaped', () => {
    const result = {
      scenario: 'demo\u0001<x>',
      shards: [{ index: 1, count: 1 }],
      wallMs: 1000,
      startedAt: '2026-12-01T00:00:00.000Z',
      thresholds: [{ scope: 'step:a&b', expression: 'p(99) < 3ms', ok: false, observedText: '5ms \u001b[31m' }],
    } as unknown as LoadResult;
    const xml = renderJunit(result);
    expect(xml).not.toMatch(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/);
    expect(xml).toContain('mcptap.load.demo\ufffd&lt;x&gt;.step:a&amp;b');
    expect(xml).toContain('observed 5ms \ufffd[31m');
  });
});
