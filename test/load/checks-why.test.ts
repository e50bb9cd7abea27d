/**
 * Checks that say why (issue 31, item 3), against the SDK 1.x notes server as users write it: each
 * check's name and pass rate, the first failure's expected and got values in the summary, the JSON
 * result and the HTML report; JSON Pointer and dotted paths read alike; `matches` on a non-string;
 * a run whose checks failed never "all passed" (a default `check_failures == 0`, exit 3).
 * Needs `npm run build` first (the CLI runs from dist/).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { McptapError } from '../../src/errors.js';
import { CheckStats } from '../../src/load/results/check-stats.js';
import type { LoadResult } from '../../src/load/results/load-result.js';
import { ROOT } from '../client/peers.js';
import { scenario } from './scenario-fixtures.js';

const run = promisify(execFile);
const BIN = path.join(ROOT, 'bin/mcptap.js');
const NOTES = path.join(ROOT, 'test/fixtures/notes-server.mjs');

async function load(args: string[]): Promise<{ code: number; stdout: string }> {
  try {
    const { stdout } = await run(process.execPath, [BIN, 'load', ...args], { timeout: 45_000 });
    return { code: 0, stdout };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

/** A search for "milk" (finds n1 "groceries") and an in_flight probe of nothing (found: false). */
const notesScenario = (title: string) => `
name: notes-checks
target: { command: [${JSON.stringify(process.execPath)}, ${JSON.stringify(NOTES)}] }
phases: [ { closed: { vus: 1, iterations: 8 } } ]
steps:
  - tool: search
    arguments: { query: milk }
    check:
      - { name: first title, path: /result/structuredContent/results/0/title, equals: ${JSON.stringify(title)} }
      - { path: "result.structuredContent.results[0].id", matches: "^n1$" }
  - tool: in_flight
    arguments: { progressToken: none }
    check: { path: /result/structuredContent/found, matches: "^false$" }
`;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'mcptap-checks-'));
});

// The CLI runs of the groups below are independent (a scenario file, outputs and a notes server
// each): they run at once.
describe.concurrent('a check that fails on every call says which and why', () => {
  it('names the check, its pass rate, expected and got; thresholds fail; exit 3', async () => {
    writeFileSync(path.join(dir, 'fail.yaml'), notesScenario('shopping'));
    const json = path.join(dir, 'fail.json');
    const html = path.join(dir, 'fail.html');
    const { code, stdout } = await load([path.join(dir, 'fail.yaml'), '--json', json, '--html', html]);
    expect(stdout).toMatch(/FAIL  step search: first title  0\/[1-9]\d* passed \(0\.0%\)/);
    expect(stdout).toContain('first failure: expected "shopping", got "groceries"');
    expect(stdout).toMatch(/pass  step search: \/result\/structuredContent\/results\/0\/id matches \/\^n1\$\/  (\d+)\/\1 passed/);
    expect(stdout).toMatch(/pass  step in_flight: \/result\/structuredContent\/found matches \/\^false\$\/  ([1-9]\d*)\/\1 passed/);
    expect(stdout).toContain('thresholds: 1 of 1 FAILED');
    expect(stdout).not.toContain('all passed');
    expect(code).toBe(3);
    const r = JSON.parse(readFileSync(json, 'utf8')) as LoadResult;
    const failing = r.checks?.find((c) => c.name === 'first title');
    expect(failing).toMatchObject({ step: 'search', passed: 0, firstFailure: { expected: '"shopping"', got: '"groceries"' } });
    expect(failing!.failed).toBe(r.steps.search!.counters.requests);
    expect(r.thresholds).toMatchObject([{ expression: 'check_failures == 0', ok: false, observed: failing!.failed }]);
    const page = readFileSync(html, 'utf8');
    expect(page).toContain('<span class="badge fail">1 of 1 thresholds failed</span>');
    expect(page).toContain('<h2>Checks</h2>');
    expect(page).toMatch(/<td>first title<\/td><td>0\/\d+ passed \(0\.0%\)<\/td><td>&#34;shopping&#34;<\/td><td>&#34;groceries&#34;<\/td>/);
  }, 60_000);

  it('the same checks against the right value: all passed, exit 0', async () => {
    writeFileSync(path.join(dir, 'pass.yaml'), notesScenario('groceries'));
    const html = path.join(dir, 'pass.html');
    const { code, stdout } = await load([path.join(dir, 'pass.yaml'), '--html', html]);
    expect(stdout).toMatch(/pass  step search: first title  ([1-9]\d*)\/\1 passed \(100\.0%\)/);
    expect(stdout).not.toContain('first failure');
    expect(stdout).toContain('thresholds: all passed\n');
    expect(code).toBe(0);
    expect(readFileSync(html, 'utf8')).toContain('<span class="badge pass">thresholds passed</span>');
  }, 60_000);

  it('a check_failures threshold of the scenario replaces the default, and the headline says checks failed', async () => {
    writeFileSync(path.join(dir, 'tolerant.yaml'), `${notesScenario('shopping')}thresholds: [ "check_failures < 50%" ]\n`);
    const { code, stdout } = await load([path.join(dir, 'tolerant.yaml')]);
    expect(stdout).toMatch(/thresholds: all passed; [1-9]\d* checks? failed, within the scenario's check_failures threshold/);
    expect(stdout).not.toContain('check_failures == 0');
    expect(code).toBe(0);
  }, 60_000);
});

describe('check paths: one syntax (JSON Pointer), the dotted one read alike or refused where it stands', () => {
  const tail = (check: string) => `target: { url: "http://127.0.0.1:1/mcp" }
phases: [ { open: { rate: 10, duration: 1s } } ]
steps:
  - tool: echo
    check: ${check}
`;
  it('reads a pointer and the dotted form as the same place', () => {
    const a = scenario(tail('{ path: "/result/content/0/text", matches: "^a" }')).steps[0]!.checks[0]!;
    const b = scenario(tail('{ path: "result.content[0].text", matches: "^a" }')).steps[0]!.checks[0]!;
    expect(a).toMatchObject({ kind: 'path', path: ['result', 'content', '0', 'text'], name: '/result/content/0/text matches /^a/' });
    expect(b).toEqual(a);
  });

  it('refuses a path that does not start at result or error, with file, line and field', () => {
    for (const [p, hint] of [
      ['/structuredContent/results', '"/result/structuredContent/results"'],
      ['content[0].text', '"result.content[0].text"'],
    ] as const) {
      let err: unknown;
      try {
        scenario(tail(`{ path: "${p}", equals: 1 }`), 'bad.yaml');
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(McptapError);
      expect((err as Error).message).toContain(`bad.yaml:5: steps[0].check.path: starts at the response's result or error, e.g. ${hint}`);
    }
  });

  it('refuses what is neither a pointer nor a dotted path', () => {
    expect(() => scenario(tail('{ path: "result content", equals: 1 }'), 'bad.yaml')).toThrow(/bad\.yaml:5: steps\[0\]\.check\.path: must be a JSON Pointer/);
  });
});

describe('merged results', () => {
  it('sum each check and keep the first failure found', () => {
    const a = [{ step: 's', name: 'c', passed: 3, failed: 0 }];
    const b = [{ step: 's', name: 'c', passed: 1, failed: 2, firstFailure: { expected: '1', got: '2' } }];
    const merged = CheckStats.fromJSON(a);
    merged.merge(CheckStats.fromJSON(b));
    expect(merged.toJSON()).toEqual([{ step: 's', name: 'c', passed: 4, failed: 2, firstFailure: { expected: '1', got: '2' } }]);
  });
});

describe.concurrent('expect: a step whose errors are the point', () => {
  const target = `target: { command: [${JSON.stringify(process.execPath)}, ${JSON.stringify(NOTES)}] }\nphases: [ { closed: { vus: 1, iterations: 6 } } ]\n`;
  /** Writes a scenario of the notes server with these steps (and whatever follows them); its path. */
  const withSteps = (name: string, steps: string): string => {
    writeFileSync(path.join(dir, name), `${target}steps:${steps}\n`);
    return path.join(dir, name);
  };

  it('counts the declared errors apart: not errors, not tool_errors or jsonrpc_errors', async () => {
    const steps = `
  - { tool: delete_note, arguments: { id: nope }, expect: tool_error }
  - { method: notes/none, expect: protocol_error }
thresholds: [ "errors == 0", "tool_errors == 0", "jsonrpc_errors == 0" ]`;
    const json = path.join(dir, 'expect.json');
    const { code, stdout } = await load([withSteps('expect.yaml', steps), '--json', json]);
    expect(stdout).toMatch(/\+ 6 expected errors \(steps with expect:, ok above, not errors\): delete_note \d, notes\/none \d/);
    expect(stdout).toContain('thresholds: all passed\n');
    expect(code).toBe(0);
    const r = JSON.parse(readFileSync(json, 'utf8')) as LoadResult;
    expect(r.overall.counters).toMatchObject({ errors: 0, toolErrors: 0, jsonrpc: {}, expectedErrors: 6, checkFailures: 0 });
  }, 60_000);

  it('a step that does not get its declared error fails the check `expect KIND`, saying what came', async () => {
    const steps = `
  - { tool: search, arguments: { query: milk }, expect: tool_error }
  - { method: tools/list, expect: protocol_error }`;
    const { code, stdout } = await load([withSteps('unexpected.yaml', steps)]);
    expect(stdout).toMatch(/FAIL  step search: expect tool_error  0\/\d+ passed/);
    expect(stdout).toContain('first failure: expected a tool error (isError: true), got result {"content":[{"type":"text","text":"{\\"results\\"');
    expect(stdout).toMatch(/FAIL  step tools\/list: expect protocol_error  0\/\d+ passed/);
    expect(stdout).toContain('first failure: expected a JSON-RPC error, got result {"tools":');
    expect(stdout).not.toContain('expected errors');
    expect(code).toBe(3);
  }, 60_000);
});

describe.concurrent('abortOnFail: a threshold that stops the run (k6)', () => {
  const aborting = (title: string, extra = '') => `
target: { command: [${JSON.stringify(process.execPath)}, ${JSON.stringify(NOTES)}] }
phases: [ { open: { rate: 20, duration: 60s } } ]
steps:
  - { tool: search, arguments: { query: milk }, check: { path: /result/structuredContent/results/0/title, equals: ${JSON.stringify(title)} } }
thresholds:
  all:
    - { threshold: "check_failures == 0", abortOnFail: true${extra} }
`;

  it('stops a 60 s run once the threshold fails, not before its delayAbortEval; exit 3', async () => {
    writeFileSync(path.join(dir, 'abort.yaml'), aborting('shopping', ', delayAbortEval: 2s'));
    const json = path.join(dir, 'abort.json');
    const { code, stdout } = await load([path.join(dir, 'abort.yaml'), '--json', json]);
    expect(stdout).toMatch(/STOPPED EARLY \(threshold all: check_failures == 0 failed \(observed \d+; abortOnFail\)\)/);
    expect(code).toBe(3);
    const r = JSON.parse(readFileSync(json, 'utf8')) as LoadResult;
    expect(r.stopped).toMatch(/^threshold all: check_failures == 0 failed/);
    expect(r.phases[0]!.scheduled).toBeLessThan(1200); // the 60 s schedule did not run out
    expect(r.wallMs).toBeGreaterThanOrEqual(2000); // judged only from its delayAbortEval on
  }, 60_000);

  it('a threshold that holds does not stop the run', async () => {
    writeFileSync(path.join(dir, 'holds.yaml'), aborting('groceries').replace('open: { rate: 20, duration: 60s }', 'closed: { vus: 1, iterations: 6 }'));
    const { code, stdout } = await load([path.join(dir, 'holds.yaml')]);
    expect(stdout).not.toContain('STOPPED');
    expect(stdout).toMatch(/phase-1\s+closed\s+-\s+\S+\s+6\s+6\s+0\s+6/);
    expect(code).toBe(0);
  }, 60_000);

  it('refuses a bad abort threshold where it stands', () => {
    const bad = `target: { url: "http://127.0.0.1:1/mcp" }
phases: [ { open: { rate: 10, duration: 1s } } ]
steps: [ { tool: echo } ]
thresholds:
  all:
    - { threshold: "p(99) < 1s", abortOnFail: true, delayAbortEval: soon }
`;
    expect(() => scenario(bad, 'bad.yaml')).toThrow(/bad\.yaml:6: thresholds\.all\[0\]\.delayAbortEval: must be a duration like 10s \(got "soon"\)/);
  });
});
