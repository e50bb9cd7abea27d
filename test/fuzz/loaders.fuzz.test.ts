/**
 * Fuzzing the three data-file loaders (load scenarios, replay match rules, redaction rules): any
 * text, YAML built from their own field names with any values, and cut-short copies of the shipped
 * files either load or are refused with the loader's documented McptapError (exit 4), never another
 * exception; an error message stays bounded by the input (no quadratic reports).
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { stringify } from 'yaml';
import { McptapError, type McptapErrorCode } from '../../src/errors.js';
import { loadYaml } from '../../src/load/scenario/scenario-loader.js';
import { SCENARIO_FIELDS } from '../../src/load/scenario/scenario-validate.js';
import { parseRules } from '../../src/replay/rules.js';
import { parseRedactionRules } from '../../src/redact/redaction-rules.js';
import { ROOT } from '../helpers/paths.js';
import { fuzz } from './fuzz-harness.js';

/** Loads or refuses with one of `codes`; returns whether it loaded. */
function loadsOrRefuses(load: () => unknown, codes: McptapErrorCode[], input: string): boolean {
  try {
    load();
    return true;
  } catch (err) {
    assert.ok(err instanceof McptapError, `not an McptapError: ${String(err)}`);
    assert.ok(codes.includes(err.code), err.code);
    assert.ok(err.message.length <= 4000 + 40 * input.length, `a ${err.message.length}-char message for ${input.length} chars`);
    return false;
  }
}

const scalar = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom(
    '10s',
    '5/s',
    '1m',
    '-1',
    '0',
    '/a/b',
    '/params/arguments/x',
    'sk-[a-z]{8}',
    '(a+)+$',
    '(?=x)',
    '\\1',
    'x{99}',
    '5%',
    'timestamp',
    'legacy',
    '2026-07-28',
  ),
);
/** A value built of `keys` (the loader's own field names) and any scalars, lists and maps below. */
const shaped = (keys: string[]) =>
  fc.letrec((tie) => ({
    value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, scalar, tie('list'), tie('map')),
    list: fc.array(tie('value'), { maxLength: 3 }),
    map: fc.dictionary(fc.oneof(fc.constantFrom(...keys), fc.string({ maxLength: 6 })), tie('value'), { maxKeys: 5 }),
  })).map;

/** Any text, YAML of `keys`, or a shipped file cut short or with a line dropped. */
function documents(keys: string[], samples: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    fc.string({ maxLength: 200 }),
    fc.string({ unit: 'binary', maxLength: 100 }),
    shaped(keys).map((v) => stringify(v)),
    shaped(keys).map((v) => JSON.stringify(v)),
    fc.tuple(fc.constantFrom(...samples), fc.nat(), fc.nat()).map(([s, cut, drop]) => {
      const lines = s.slice(0, (cut % (s.length + 1)) + 1).split('\n');
      lines.splice(drop % (lines.length + 1), 1);
      return lines.join('\n');
    }),
  );
}

// The top-level fields and some of those below them (phases, steps, thresholds, targets).
const SCENARIO_KEYS = [
  ...SCENARIO_FIELDS,
  'open',
  'closed',
  'rate',
  'duration',
  'vus',
  'call',
  'tool',
  'arguments',
  'weight',
  'check',
  'url',
  'command',
  'args',
  'p95',
  'error_rate',
];
const RULE_KEYS = [
  'version',
  'rules',
  'method',
  'tool',
  'path',
  'with',
  'ignore',
  'normalise',
  'replace',
  'tolerance',
  'jsonInText',
  'unordered',
  'allowAdded',
];
const REDACT_KEYS = ['version', 'paths', 'fields', 'headers', 'patterns'];

const read = (p: string) => readFileSync(join(ROOT, p), 'utf8');
const baseDir = mkdtempSync(join(tmpdir(), 'mcptap-fuzz-'));

describe('fuzz: data-file loaders', () => {
  it('scenario files load or are refused with MCPTAP_LOAD_SCENARIO_*', () => {
    const samples = ['scenarios/demo.yaml', 'scenarios/open-ramp.yaml', 'scenarios/closed-model.yaml', 'scenarios/server-everything.yaml'].map(read);
    fuzz(
      'scenario loader: any text',
      fc.property(documents(SCENARIO_KEYS, samples), (text) => {
        loadsOrRefuses(() => loadYaml(text, { source: 'fuzz.yaml', baseDir }), ['MCPTAP_LOAD_SCENARIO_YAML', 'MCPTAP_LOAD_SCENARIO_INVALID'], text);
      }),
    );
  });

  it('replay match rules load or are refused with MCPTAP_REPLAY_RULES_INVALID; every replace regex is linear-time', () => {
    const samples = [read('docs/replay-rules.md').split('```yaml')[1]!.split('```')[0]!];
    fuzz(
      'match rules loader: any text',
      fc.property(documents(RULE_KEYS, samples), (text) => {
        let rules: ReturnType<typeof parseRules> | undefined;
        loadsOrRefuses(() => (rules = parseRules(text, 'fuzz.yaml')), ['MCPTAP_REPLAY_RULES_INVALID'], text);
        for (const r of rules?.rules ?? []) if (r.action.kind === 'replace') assert.ok(r.action.regex.flags.includes('l'));
      }),
    );
  });

  it('redaction rules load or are refused with MCPTAP_REDACT_RULES_INVALID; every pattern is linear-time', () => {
    const samples = [read('docs/redaction.md').split('```yaml')[1]?.split('```')[0] ?? 'version: 1\npaths: [/params/arguments/note]\n'];
    fuzz(
      'redaction rules loader: any text',
      fc.property(documents(REDACT_KEYS, samples), (text) => {
        loadsOrRefuses(() => parseRedactionRules(text, 'fuzz.yaml'), ['MCPTAP_REDACT_RULES_INVALID'], text);
      }),
    );
  });
});
