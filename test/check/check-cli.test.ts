/**
 * `mcptap check` end to end (built CLI, `npx tsc -p .` first): a raw scripted server serves schema
 * breaches through the real tap; check exits 1 naming rule, exchange and pointer, and the same session
 * without the breaches exits 0. Text, JSON, JUnit (parsed as XML) and SARIF (validated against the
 * official SARIF 2.1.0 schema) agree on the findings.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { XMLParser } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES } from '../helpers/paths.js';
import { mcptap, recordSearch, SEARCH_OK, SEARCH_TOOL } from './scripted-session.js';

const TOOL = SEARCH_TOOL;
const OK_CALL = SEARCH_OK;

let dir: string;
let breached: string;
let clean: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mcptap-check-'));
  const { inputSchema: _dropped, ...toolWithoutSchema } = TOOL;
  breached = await recordSearch(dir, 'breached', toolWithoutSchema, { ...OK_CALL, isError: 'true' });
  clean = await recordSearch(dir, 'clean', TOOL, OK_CALL);
}, 60_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The SARIF 2.1.0 schema is draft-04: its only draft-04 spelling is the root `id`, read here as `$id`. */
function sarifValidator() {
  const { $schema: _s, id, ...schema } = JSON.parse(readFileSync(join(FIXTURES, 'sarif', 'sarif-schema-2.1.0.json'), 'utf8')) as Record<string, unknown>;
  const ajv = new Ajv.default({ strict: false, allErrors: true });
  addFormats.default(ajv);
  return ajv.compile({ ...schema, $id: id });
}

describe('mcptap check on a scripted server', () => {
  it('exits 1 on schema breaches, naming rule, exchange, pointer and schema rule', () => {
    const r = mcptap('check', breached);
    expect(r.err).toBe('');
    expect(r.code).toBe(1);
    expect(r.out).toContain('protocol/result-schema (error): 2 finding(s)');
    expect(r.out).toMatch(
      /row #2 id 2 tools\/list from server: at \/result\/tools\/0\/inputSchema; expected present, found absent; schema rule #\/definitions\/Tool\/required; spec 2025-06-18/,
    );
    expect(r.out).toMatch(
      /id 3 tools\/call search from server: at \/result\/isError; expected boolean, found string "true"; schema rule #\/definitions\/CallToolResult\/properties\/isError\/type/,
    );
  });

  it('exits 0 on the same session without the breaches', () => {
    const r = mcptap('check', clean);
    expect(r.out).toMatch(/: 0 finding\(s\): 0 error, 0 warning, 0 note; passed/);
    expect(r.code).toBe(0);
  });

  it('agrees across text, JSON, JUnit and SARIF, and the SARIF is valid SARIF 2.1.0', () => {
    const out = (f: string) => join(dir, f);
    const r = mcptap('check', breached, '--json', out('c.json'), '--junit', out('c.xml'), '--sarif', out('c.sarif'));
    expect(r.code).toBe(1);
    // The missing inputSchema is a schema breach and also what makes SDK clients drop the list (surface).
    expect(r.out).toMatch(/: 3 finding\(s\): 3 error, 0 warning, 0 note; FAILED/);
    const json = JSON.parse(readFileSync(out('c.json'), 'utf8')) as {
      total: number;
      rules: unknown[];
      findings: { ruleId: string; pointer: string }[];
      verdict: { failing: number };
    };
    expect(json.total).toBe(3);
    expect(json.verdict.failing).toBe(3);
    const RULES = ['protocol/result-schema', 'surface/invalid-definition', 'protocol/result-schema'];
    expect(json.findings.map((f) => [f.ruleId, f.pointer])).toEqual([
      [RULES[0], '/result/tools/0/inputSchema'],
      [RULES[1], '/result/tools/0/inputSchema'],
      [RULES[2], '/result/isError'],
    ]);

    const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(readFileSync(out('c.xml'), 'utf8')) as {
      testsuites: { failures: string; testsuite: { name: string; testcase: { classname: string; failure?: unknown }[] } | { name: string }[] };
    };
    const suites = [xml.testsuites.testsuite].flat() as { name: string; testcase: { classname: string; failure?: unknown }[] }[];
    const cases = suites.flatMap((s) => [s.testcase].flat());
    expect(xml.testsuites.failures).toBe('3');
    expect(cases.filter((c) => c.failure !== undefined).map((c) => c.classname)).toEqual([...RULES].sort());
    // One passing case per rule that found nothing: every rule but the two that did.
    expect(cases.filter((c) => c.failure === undefined).length).toBe(json.rules.length - 2);

    const sarif = JSON.parse(readFileSync(out('c.sarif'), 'utf8')) as {
      runs: { results: { ruleId: string; locations: { physicalLocation: { region: { startLine: number } }; logicalLocations?: { name: string }[] }[] }[] }[];
    };
    const validate = sarifValidator();
    expect(validate(sarif), JSON.stringify(validate.errors)).toBe(true);
    expect(sarif.runs[0]!.results.map((x) => x.ruleId)).toEqual(RULES);
    expect(sarif.runs[0]!.results[2]!.locations[0]!.logicalLocations?.map((l) => l.name)).toEqual(['tools/call', 'search']);
    // Located at the exchange's row, as `mcptap show` numbers it (initialize #1, tools/list #2, tools/call #3).
    expect(sarif.runs[0]!.results.map((x) => x.locations[0]!.physicalLocation.region.startLine)).toEqual([2, 2, 3]);
  });

  it('judges every recording of a file, each alone; --recording N only that one', async () => {
    // Two runs into one file (as several taps may record): a broken build, then a clean one.
    const { inputSchema: _dropped, ...toolWithoutSchema } = TOOL;
    await recordSearch(dir, 'two', toolWithoutSchema, OK_CALL);
    const two = await recordSearch(dir, 'two', TOOL, OK_CALL);
    const out = (f: string) => join(dir, f);
    const r = mcptap('check', two, '--json', out('two.json'), '--junit', out('two.xml'), '--sarif', out('two.sarif'));
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/\(recording 1\): 2 finding\(s\): 2 error, 0 warning, 0 note; FAILED/);
    expect(r.out).toMatch(/\(recording 2\): 0 finding\(s\)[^\n]*passed/);
    expect(r.out).toMatch(/2 recordings checked \(pick one with --recording N\); FAILED: recording\(s\) 1\n$/);
    const json = JSON.parse(readFileSync(out('two.json'), 'utf8')) as { verdict: { failing: number }; recordings: { recording: number; total: number }[] };
    expect([json.verdict.failing, json.recordings.map((x) => [x.recording, x.total])]).toEqual([
      2,
      [
        [1, 2],
        [2, 0],
      ],
    ]);
    const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(readFileSync(out('two.xml'), 'utf8')) as {
      testsuites: { failures: string; testsuite: { name: string; failures: string }[] };
    };
    expect(xml.testsuites.failures).toBe('2');
    expect(xml.testsuites.testsuite.filter((x) => x.failures !== '0').map((x) => x.name)).toEqual(['recording 1 protocol', 'recording 1 surface']);
    const sarif = JSON.parse(readFileSync(out('two.sarif'), 'utf8')) as { runs: { automationDetails: { id: string }; results: unknown[] }[] };
    const validate = sarifValidator();
    expect(validate(sarif), JSON.stringify(validate.errors)).toBe(true);
    expect(sarif.runs.map((x) => [x.automationDetails.id, x.results.length])).toEqual([
      ['mcptap-check/recording-1/', 2],
      ['mcptap-check/recording-2/', 0],
    ]);
    // The clean recording alone passes; the broken one alone fails.
    expect(mcptap('check', two, '--recording', '2').code).toBe(0);
    expect(mcptap('check', two, '--recording', '1').code).toBe(1);
  }, 60_000);

  it('JUnit fails only what the verdict counts; rules it could not judge are skipped, not passed', () => {
    const out = (f: string) => join(dir, `u.${f}`);
    const r = mcptap('check', breached, '--fail-on', 'none,protocol/result-schema', '--json', out('json'), '--junit', out('xml'));
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/rule\(s\) not judged \(no --baseline\): drift\/removed, /);
    expect(r.out).toContain('1 rule(s) not judged (no maxToolTokens option): surface/tool-tokens.');
    type Case = { classname: string; failure?: unknown; skipped?: { message: string }; 'system-out'?: string };
    const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(readFileSync(out('xml'), 'utf8')) as {
      testsuites: { failures: string; testsuite: { testcase: Case | Case[] }[] };
    };
    const cases = xml.testsuites.testsuite.flatMap((s) => [s.testcase].flat());
    expect(xml.testsuites.failures).toBe('2');
    expect(cases.filter((c) => c.failure !== undefined).map((c) => c.classname)).toEqual(['protocol/result-schema', 'protocol/result-schema']);
    const passing = cases.find((c) => c.classname === 'surface/invalid-definition');
    expect(passing?.failure).toBeUndefined();
    expect(passing?.['system-out']).toMatch(/^error: /);
    expect(cases.find((c) => c.classname === 'drift/removed')?.skipped?.message).toBe('no --baseline');
    expect(cases.find((c) => c.classname === 'surface/total-tokens')?.skipped?.message).toBe('no maxTotalTokens option');
    const json = JSON.parse(readFileSync(out('json'), 'utf8')) as { rules: { id: string; judged: boolean; notJudged?: string }[] };
    expect(json.rules.find((x) => x.id === 'drift/removed')).toMatchObject({ judged: false, notJudged: 'no --baseline' });
    expect(json.rules.find((x) => x.id === 'protocol/result-schema')).toMatchObject({ judged: true });
  });

  it('takes a rules file: off silences a rule, a severity changes the verdict', () => {
    const rules = join(dir, 'rules.yaml');
    writeFileSync(rules, 'rules:\n  protocol/result-schema: warning\n  surface/invalid-definition: warning\n');
    expect(mcptap('check', breached, '--rules', rules).code).toBe(0);
    expect(mcptap('check', breached, '--rules', rules, '--fail-on', 'warning').code).toBe(1);
    writeFileSync(rules, 'rules:\n  protocol/result-schema: off\n  surface/invalid-definition: off\n');
    const r = mcptap('check', breached, '--rules', rules, '--fail-on', 'note');
    expect(r.out).toContain('0 finding(s)');
    expect(r.code).toBe(0);
  });

  it('fails on a rule id named in --fail-on in addition to the error level; none,RULE on the rule only', () => {
    expect(mcptap('check', breached, '--fail-on', 'protocol/result-schema').code).toBe(1);
    const added = mcptap('check', breached, '--fail-on', 'protocol/pending');
    expect(added.out).toContain('FAILED: 3 finding(s) at --fail-on error,protocol/pending');
    expect(added.code).toBe(1);
    expect(mcptap('check', breached, '--fail-on', 'none,protocol/pending').code).toBe(0);
    expect(mcptap('check', breached, '--fail-on', 'none,protocol/result-schema').code).toBe(1);
  });

  it('exits 4 on a rules file naming an unknown rule, at its line', () => {
    const rules = join(dir, 'bad.yaml');
    writeFileSync(rules, '# tuning\nrules:\n  protocol/pending: off\n  protocol/result-shema: warning\n');
    const r = mcptap('check', breached, '--rules', rules);
    expect(r.code).toBe(4);
    expect(r.err).toContain(`${rules}:4: rules.protocol/result-shema: unknown rule (did you mean "protocol/result-schema"?)`);
  });

  it('takes rule options flat, and refuses an options: mapping and a misspelt option at their line', () => {
    const rules = join(dir, 'opts.yaml');
    writeFileSync(rules, 'rules:\n  surface/tool-tokens: { severity: error, maxToolTokens: 5 }\n');
    const flat = mcptap('check', clean, '--rules', rules);
    expect(flat.out).toContain('surface/tool-tokens (error): 1 finding(s)');
    expect(flat.code).toBe(1);
    writeFileSync(rules, 'rules:\n  protocol/pending: off\n  surface/tool-tokens: { options: { maxToolTokens: 5 } }\n');
    const nested = mcptap('check', clean, '--rules', rules);
    expect(nested.code).toBe(4);
    expect(nested.err).toContain(`${rules}:3: rules.surface/tool-tokens.options: write options flat, beside severity`);
    writeFileSync(rules, 'rules:\n  surface/tool-tokens:\n    severity: error\n    maxToolToken: 5\n');
    const misspelt = mcptap('check', clean, '--rules', rules);
    expect(misspelt.code).toBe(4);
    expect(misspelt.err).toContain(`${rules}:4: rules.surface/tool-tokens.maxToolToken: unknown option (did you mean "maxToolTokens"?)`);
  });

  it('exits 2 on a --snapshot into a missing directory, naming it; says what a --baseline may be', () => {
    const r = mcptap('check', clean, '--snapshot', '/nonexistent/dir/t.json');
    expect(r.code).toBe(2);
    expect(r.err).toContain('--snapshot /nonexistent/dir/t.json: cannot write there');
    const notBaseline = join(dir, 'other.json');
    writeFileSync(notBaseline, '{"tools": []}\n');
    const b = mcptap('check', clean, '--baseline', notBaseline);
    expect(b.code).toBe(4);
    expect(b.err).toContain('not a baseline; give a snapshot written by mcptap check --snapshot, or a recording (SQLite, or mcptap JSONL)');
  });

  it('exits 4 on a file that is not a recording, and 2 on a bad --fail-on', () => {
    const notRec = join(dir, 'not.db');
    writeFileSync(notRec, 'hello');
    expect(mcptap('check', notRec).code).toBe(4);
    const r = mcptap('check', clean, '--fail-on', 'severe');
    expect(r.code).toBe(2);
    expect(r.err).toContain('--fail-on severe: not a level');
  });
});
