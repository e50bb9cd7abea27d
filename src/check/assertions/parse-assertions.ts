/**
 * The `assertions:` list of a rules file, read with located issues (`file:line: field: message`).
 *
 *   assertions:
 *     - name: search is fast and finds something
 *       select: { method: tools/call, tool: search }
 *       expect: [p95 <= 200ms, error_rate < 1%, /result/structuredContent/count >= 1]
 *     - name: tools listed before they are called
 *       select: { method: tools/call }
 *       preceded_by: { method: tools/list }
 */
import { OUTCOMES, type Outcome } from '../../model/outcome.js';
import { parseDurationMs } from '../../data-file/duration.js';
import { type Path, type Reader } from '../../data-file/validation.js';
import { parseCheckPath } from '../../data-file/check-path.js';
import { parsePointer } from '../../data-file/json-pointer.js';
import { AGGREGATES, type Aggregate, type Assertion, type CompareOp, type Expectation, type Selector, type ValueTest } from './assertion.js';

const ASSERTION_KEYS = ['name', 'severity', 'select', 'preceded_by', 'expect'] as const;
const SELECTOR_KEYS = ['method', 'tool', 'prompt', 'outcome', 'era', 'session', 'where'] as const;
const SEVERITIES = ['error', 'warning', 'note'] as const;
const ERAS = ['legacy', 'modern', 'unknown'] as const;
const COMPARISON = /^(\S+?)\s*(!=|<=|>=|==|=|<|>)\s*(.+)$/;
const MATCHES = /^(\S+)\s+matches\s+(.+)$/;

/** `rule` from a name: `search is fast` -> `assert/search-is-fast`. */
export function assertionRuleId(name: string): string {
  return `assert/${
    name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '') || 'unnamed'
  }`;
}

export function parseAssertions(v: unknown, r: Reader, path: Path, lineOf: (p: Path) => string): Assertion[] {
  if (!Array.isArray(v)) return r.fail(path, 'must be a list of assertions') ?? [];
  const out: Assertion[] = [];
  const ids = new Set<string>();
  v.forEach((item, i) => {
    const p = [...path, i];
    const o = r.obj(item, p, ASSERTION_KEYS);
    if (!o) return;
    const name = r.str(o, 'name', p, true);
    if (name === undefined) return;
    const ruleId = assertionRuleId(name);
    if (ids.has(ruleId)) r.fail([...p, 'name'], `another assertion has the same rule id ${ruleId}; names must differ`);
    ids.add(ruleId);
    const select = o.select === undefined ? {} : parseSelector(o.select, r, [...p, 'select']);
    const precededBy = o.preceded_by === undefined ? undefined : parseSelector(o.preceded_by, r, [...p, 'preceded_by']);
    const written = o.expect === undefined ? [] : typeof o.expect === 'string' ? [o.expect] : o.expect;
    if (!Array.isArray(written)) return r.fail([...p, 'expect'], 'must be a list of expectations such as "p95 <= 200ms"');
    const expect = written.flatMap((e, j) => parseExpectation(e, r, [...p, 'expect', j]) ?? []);
    if (written.length === 0 && precededBy === undefined) return r.fail(p, 'needs "expect" or "preceded_by": an assertion that checks nothing always passes');
    if (select === undefined) return;
    out.push({ name, ruleId, severity: r.oneOf(o, 'severity', p, SEVERITIES) ?? 'error', select, precededBy, expect, source: lineOf(p) });
  });
  return out;
}

function parseSelector(v: unknown, r: Reader, path: Path): Selector | undefined {
  const o = r.obj(v, path, SELECTOR_KEYS);
  if (!o) return undefined;
  const where =
    o.where === undefined
      ? undefined
      : typeof o.where === 'string'
        ? parseValueTest(o.where, r, [...path, 'where'])
        : r.fail([...path, 'where'], 'must be a test such as "/params/arguments/q = \\"x\\""');
  return {
    method: r.str(o, 'method', path),
    tool: r.str(o, 'tool', path),
    prompt: r.str(o, 'prompt', path),
    outcome: r.oneOf<Outcome>(o, 'outcome', path, OUTCOMES),
    era: r.oneOf(o, 'era', path, ERAS),
    session: r.str(o, 'session', path),
    where,
  };
}

function parseExpectation(v: unknown, r: Reader, path: Path): Expectation | undefined {
  if (typeof v !== 'string') return r.fail(path, 'must be a string such as "p95 <= 200ms" or "/result/isError = false"');
  const text = v.trim();
  if (text === 'progress increases') return { kind: 'progress-increases', text };
  if (text === 'no progress after cancel') return { kind: 'no-progress-after-cancel', text };
  if (text.startsWith('/')) {
    const test = parseValueTest(text, r, path);
    return test && { kind: 'value', text, test };
  }
  const m = COMPARISON.exec(text);
  const metric = m?.[1];
  if (!m || !(AGGREGATES as readonly string[]).includes(metric!))
    return r.fail(
      path,
      `expected "METRIC OP VALUE" with METRIC one of ${AGGREGATES.join(', ')}, a JSON Pointer (/result/...), "progress increases" or "no progress after cancel" (got ${JSON.stringify(text)})`,
    );
  const bound = parseBound(metric as Aggregate, m[3]!.trim());
  if (typeof bound === 'string') return r.fail(path, bound);
  return { kind: 'aggregate', text, metric: metric as Aggregate, op: normalOp(m[2]!), bound };
}

/** Durations in microseconds, rates as fractions, counts as integers; a message when it is none. */
function parseBound(metric: Aggregate, text: string): number | string {
  if (metric === 'count') return /^\d+$/.test(text) ? Number(text) : `${metric} compares with a whole number (got ${JSON.stringify(text)})`;
  if (metric.endsWith('_rate')) {
    const pct = /^(\d+(?:\.\d+)?)\s*%$/.exec(text);
    const n = pct ? Number(pct[1]) / 100 : /^\d+(?:\.\d+)?$/.test(text) ? Number(text) : NaN;
    return n >= 0 && n <= 1 ? n : `${metric} compares with a rate such as 1% or 0.01 (got ${JSON.stringify(text)})`;
  }
  const ms = parseDurationMs(text);
  return ms === undefined ? `${metric} compares with a duration such as 200ms or 1.5s (got ${JSON.stringify(text)})` : ms * 1000;
}

function parseValueTest(text: string, r: Reader, path: Path): ValueTest | undefined {
  const mm = MATCHES.exec(text);
  const m = mm ? undefined : COMPARISON.exec(text);
  if (!mm && !m)
    return r.fail(path, `expected "POINTER OP VALUE", e.g. /result/isError = false or /result/content/0/text matches ^Found (got ${JSON.stringify(text)})`);
  const pointer = (mm ?? m)![1]!;
  const segments = pointer.startsWith('/params') ? parsePointer(pointer) : parseCheckPath(pointer);
  if (typeof segments === 'string')
    return r.fail(path, `${pointer} ${segments.replace('starts at the response', "starts at the request's params or the response")}`);
  if (mm) {
    try {
      return { pointer, segments, op: 'matches', value: mm[2], pattern: new RegExp(mm[2]!) };
    } catch (err) {
      return r.fail(path, `not a regular expression: ${(err as Error).message}`);
    }
  }
  return { pointer, segments, op: normalOp(m![2]!), value: jsonOrText(m![3]!.trim()) };
}

const normalOp = (op: string): CompareOp => (op === '==' ? '=' : (op as CompareOp));

/** `1`, `true`, `"x"`, `{"a":1}` as JSON; anything else as the text written. */
function jsonOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
