import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { McptapError } from '../../src/errors.js';
import { canonical, NO_RULES, normalise, parseRules } from '../../src/replay/rules.js';

const ECHO = { method: 'tools/call', tool: 'echo' };

function rulesError(text: string): string {
  try {
    parseRules(text, 'rules.yaml');
  } catch (err) {
    expect(err).toBeInstanceOf(McptapError);
    expect((err as McptapError).code).toBe('MCPTAP_REPLAY_RULES_INVALID');
    return (err as Error).message;
  }
  throw new Error('the rules were accepted');
}

describe('rules file', () => {
  it('says a check rules file (rule ids mapped to severities) was given where replay rules go', () => {
    expect(rulesError('rules:\n  protocol/pending: off\n')).toMatch(
      /rules.yaml:2.*must be a list of rules \(a mapping of rule ids is a check rules file: give it to replay --check/s,
    );
    expect(rulesError('rules: 3\n')).not.toMatch(/check rules file/);
  });

  it('reads YAML and JSON into scoped actions', () => {
    const yaml = parseRules(
      ['rules:', '  - ignore: /result/_meta', '  - tool: clock', '    normalise: timestamp', '    path: /result/content/*/text', '  - tolerance: "5%"'].join(
        '\n',
      ),
      'r.yaml',
    );
    expect(yaml.rules.map((r) => [r.tool, r.action.kind, r.source])).toEqual([
      [undefined, 'ignore', 'r.yaml:2'],
      ['clock', 'normalise', 'r.yaml:3'],
      [undefined, 'tolerance', 'r.yaml:6'],
    ]);
    const json = parseRules('{"rules": [{"unordered": "/result/tools", "method": "tools/list"}]}', 'r.json');
    expect(json.rules[0]).toMatchObject({ method: 'tools/list', action: { kind: 'unordered', path: ['result', 'tools'] } });
  });

  it('names file, line and field of every problem', () => {
    const msg = rulesError(['rules:', '  - ignore: /a', '  - ignroe: /b', '  - normalise: epoch', '  - replace: "("', '    with: x'].join('\n'));
    expect(msg).toContain('rules.yaml:3: rules[1].ignroe: unknown field (did you mean "ignore"?)');
    expect(msg).toContain('rules.yaml:4: rules[2].normalise: must be one of timestamp, uuid, duration');
    expect(msg).toContain('rules.yaml:5: rules[3].replace: not a valid regular expression');
    expect(rulesError('rules:\n  - ignore: result')).toContain('rules.yaml:2: rules[0].ignore: a JSON Pointer starts with "/"');
    expect(rulesError('rules:\n  - ignore: /a\n    unordered: /b')).toContain('has ignore and unordered: one action per rule');
    expect(rulesError('rules: [\n')).toMatch(/^rules\.yaml:\d+: not valid YAML or JSON/);
    expect(rulesError('colour: red')).toContain('rules.yaml:1: colour: unknown field');
  });
});

describe('normalise', () => {
  const rules = parseRules(
    [
      'rules:',
      '  - jsonInText: true',
      '  - tool: echo',
      '    ignore: /result/content/*/text/at',
      '  - normalise: uuid',
      '  - unordered: /result/tags',
      '  - replace: "req-[0-9]+"',
      '    with: req-N',
    ].join('\n'),
    'r.yaml',
  );

  it('parses JSON in text, removes ignored paths, replaces, and sorts unordered arrays', () => {
    const msg = {
      result: {
        content: [{ type: 'text', text: JSON.stringify({ at: '12:00:01', id: '0b7c3a52-1111-4222-8333-444455556666', n: 1 }) }],
        tags: ['b', 'a', { z: 1 }],
        note: 'req-17 done',
      },
    };
    expect(normalise(rules, ECHO, msg)).toEqual({
      result: { content: [{ type: 'text', text: { id: '<uuid>', n: 1 } }], tags: ['a', 'b', { z: 1 }], note: 'req-N done' },
    });
    // Scoped rules stay in their scope: another tool keeps its `at`.
    expect(
      (normalise(rules, { method: 'tools/call', tool: 'other' }, msg) as { result: { content: [{ text: { at?: string } }] } }).result.content[0].text.at,
    ).toBe('12:00:01');
  });

  it('normalises JavaScript Date.toString() and RFC 1123 dates as timestamps, whole', () => {
    const ts = parseRules('rules:\n  - normalise: timestamp', 'r.yaml');
    const info = (when: string, http: string) => ({
      result: { modified: `modified ${when}.`, header: `Last-Modified: ${http}`, iso: '2026-12-05T12:10:01.123Z' },
    });
    const a = info('Sat Dec 05 2026 12:10:01 GMT+0000 (Coordinated Universal Time)', 'Sat, 05 Dec 2026 12:10:01 GMT');
    expect(normalise(ts, ECHO, a)).toEqual({ result: { modified: 'modified <timestamp>.', header: 'Last-Modified: <timestamp>', iso: '<timestamp>' } });
    const b = info('Mon Feb 01 2027 09:00:59 GMT-0500 (Eastern Standard Time)', 'Mon, 1 Feb 2027 14:00:59 GMT');
    expect(normalise(ts, ECHO, b)).toEqual(normalise(ts, ECHO, a));
  });

  it('never changes its input and is idempotent', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const before = JSON.stringify(v);
        const once = normalise(rules, ECHO, { result: v });
        expect(JSON.stringify(v)).toBe(before);
        expect(canonical(normalise(rules, ECHO, once))).toBe(canonical(once));
      }),
      { numRuns: 200 },
    );
    expect(normalise(NO_RULES, ECHO, { a: 1 })).toEqual({ a: 1 });
  });
});
