/** Scenario validation and loading: located messages (file, line, field), YAML and TypeScript. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { McptapError } from '../../src/errors.js';
import { ExitCode, exitCodeFor } from '../../src/cli/exit-codes.js';
import { loadScenarioFile } from '../../src/load/scenario/scenario-loader.js';
import { ROOT } from '../client/peers.js';
import { scenario } from './scenario-fixtures.js';

function invalid(yaml: string): McptapError {
  try {
    scenario(yaml, 'bad.yaml');
  } catch (err) {
    expect(err).toBeInstanceOf(McptapError);
    expect(exitCodeFor(err)).toBe(ExitCode.InvalidInput);
    return err as McptapError;
  }
  throw new Error('expected the scenario to be rejected');
}

const OK_TAIL = `phases: [ { open: { rate: 10, duration: 1s } } ]\nsteps: [ { tool: echo } ]\n`;

describe('scenario validation', () => {
  it('accepts a full scenario and fills defaults', () => {
    const s = scenario(`
name: full
target: { url: "http://127.0.0.1:1/mcp", headers: { Authorization: "Bearer x" } }
era: 2026-07-28
timeout: 5s
data: { users: users.csv, q: { file: queries.jsonl, order: random } }
phases:
  - { name: warm, closed: { vus: 2, iterations: 3, thinkTime: { min: 10ms, max: 20ms } } }
  - open: { from: 10, to: "50/s", duration: 2s }
steps:
  - { tool: echo, weight: 3, arguments: { text: "{{data.users.name}}" }, check: [ { isError: false }, { path: "result.content[0].text", matches: "^a" } ] }
  - { method: resources/read, uri: "mcptap://reference/info" }
  - { prompt: greet, arguments: { name: x } }
  - { method: tools/list }
  - { method: server/discover }
thresholds:
  all: [ "p(99) < 300ms", "tool_errors < 5%" ]
  tool:echo: "p95 < 1s"
  tools/call: [ "jsonrpc(-32020) == 0" ]
`);
    expect(s.era).toBe('modern');
    expect(s.timeoutMs).toBe(5000);
    expect(s.phases[0]).toEqual({ kind: 'closed', name: 'warm', vus: 2, iterations: 3, thinkTime: { minMs: 10, maxMs: 20 } });
    expect(s.phases[1]).toMatchObject({ kind: 'open', name: 'phase-2', fromRate: 10, toRate: 50, durationMs: 2000 });
    expect(s.steps.map((x) => [x.name, x.method, x.weight])).toEqual([
      ['echo', 'tools/call', 3],
      ['mcptap://reference/info', 'resources/read', 1],
      ['greet', 'prompts/get', 1],
      ['tools/list', 'tools/list', 1],
      ['server/discover', 'server/discover', 1],
    ]);
    expect(s.thresholds.map((t) => `${t.scope.kind}:${t.expression}`)).toEqual([
      'all:p(99) < 300ms',
      'all:tool_errors < 5%',
      'tool:p95 < 1s',
      'method:jsonrpc(-32020) == 0',
    ]);
    expect(s.data.map((d) => [d.name, d.format, d.order])).toEqual([
      ['users', 'csv', 'sequential'],
      ['q', 'jsonl', 'random'],
    ]);
  });

  it('names file, line and field for an unknown field, with a suggestion', () => {
    const e = invalid(`target: { url: "http://127.0.0.1:1/mcp" }
phases:
  - open:
      rate: 10
      duraton: 5s
steps: [ { tool: echo } ]
`);
    expect(e.message).toContain('bad.yaml:5: phases[0].open.duraton: unknown field (did you mean "duration"?)');
    expect(e.message).not.toMatch(/\n\s+at /); // no stack trace
  });

  it('reports a bad threshold expression at its line', () => {
    const e = invalid(`target: { url: "http://127.0.0.1:1/mcp" }\n${OK_TAIL}thresholds:\n  - "p(99) < 300ms"\n  - "p(99) <<< fast"\n  - "tool_errors < 5ms"\n`);
    expect(e.message).toContain('bad.yaml:6: thresholds[1]: cannot parse threshold "p(99) <<< fast"');
    expect(e.message).toContain('bad.yaml:7: thresholds[2]: threshold "tool_errors < 5ms": tool_errors is not a time');
  });

  it('rejects a missing target, a missing data file and bad templates', () => {
    expect(invalid(OK_TAIL).message).toContain('target: is required');
    const d = invalid(`target: { reference: true }\ndata: { users: nope.csv }\n${OK_TAIL}`);
    expect(d.message).toMatch(/bad\.yaml:2: data\.users: data file .*nope\.csv does not exist/);
    const t = invalid(
      `target: { reference: true }\nphases: [ { open: { rate: 1, duration: 1s } } ]\nsteps:\n  - tool: echo\n    arguments: { text: "{{data.x.y}} {{random.dice(3)}}" }\n`,
    );
    expect(t.message).toContain('bad.yaml:5: steps[0].arguments.text: {{data.x.y}}: unknown data set "x"');
    expect(t.message).toContain('unknown generator random.dice');
  });

  it('rejects contradictions: open phases on the raw driver, churn on stdio, scopes naming nothing', () => {
    expect(invalid(`target: { reference: true }\ndriver: raw\n${OK_TAIL}`).message).toContain('the raw driver runs closed phases only');
    expect(invalid(`target: { command: "node x.js" }\nsession: { churn: 5 }\n${OK_TAIL}`).message).toContain('session churn needs an HTTP target');
    expect(invalid(`target: { reference: true }\n${OK_TAIL}thresholds: { "tool:ehco": ["p(99) < 1s"] }\n`).message).toContain(
      'no step calls tool "ehco" (steps call: echo)',
    );
  });

  it('refuses a duration without a unit, at its line, saying what to write instead', () => {
    const e = invalid(`target: { reference: true }
timeout: 5000
phases:
  - open: { rate: 10, duration: 30 }
  - closed: { vus: 1, duration: "2", thinkTime: 100 }
  - closed: { vus: 1, iterations: 1, thinkTime: { min: 50, max: 150ms } }
steps: [ { tool: echo } ]
`);
    expect(e.message).toContain('bad.yaml:2: timeout: 5000 has no unit; write 5000s or 5000ms');
    expect(e.message).toContain('bad.yaml:4: phases[0].open.duration: 30 has no unit; write 30s or 30ms');
    expect(e.message).toContain('bad.yaml:5: phases[1].closed.duration: 2 has no unit; write 2s or 2ms');
    expect(e.message).toContain('bad.yaml:5: phases[1].closed.thinkTime: 100 has no unit; write 100s or 100ms');
    expect(e.message).toContain('bad.yaml:6: phases[2].closed.thinkTime.min: 50 has no unit; write 50s or 50ms');
    expect(e.message).toContain('(5 problems)');
    // a unit on each is accepted; 0 needs none (nothing in any unit)
    const s = scenario(
      `target: { reference: true }\ntimeout: 5000ms\nphases:\n  - open: { rate: 10, duration: 30s }\n  - closed: { vus: 1, duration: 2m, thinkTime: 0 }\nsteps: [ { tool: echo } ]\n`,
    );
    expect(s.timeoutMs).toBe(5000);
    expect(s.phases[0]).toMatchObject({ kind: 'open', durationMs: 30_000 });
    expect(s.phases[1]).toMatchObject({ kind: 'closed', durationMs: 120_000, thinkTime: { minMs: 0, maxMs: 0 } });
    expect(invalid(`target: { reference: true }\nphases: [ { open: { rate: 1, duration: 10 parsecs } } ]\nsteps: [ { tool: echo } ]\n`).message).toContain(
      'bad.yaml:2: phases[0].open.duration: must be a duration with a unit like 500ms, 10s or 2m (got "10 parsecs")',
    );
  });

  it('reports invalid YAML with its line', () => {
    expect(invalid('target: { reference: true\nphases: [\n').message).toMatch(/^bad\.yaml:\d+: not valid YAML/);
  });
});

describe('scenario files', () => {
  it('loads the example scenarios', async () => {
    for (const f of [
      'demo.yaml',
      'closed-model.yaml',
      'open-ramp.yaml',
      'scripted.ts',
      'server-everything.yaml',
      'replay.yaml',
      'cancel-scripted.ts',
      'listen-stdio.yaml',
    ]) {
      const s = await loadScenarioFile(path.join(ROOT, 'scenarios', f));
      expect(s.phases.length).toBeGreaterThan(0);
    }
  });

  it('refuses a bare-number duration in a TypeScript scenario as in YAML (no line to name there)', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'mcptap-scn-'));
    const file = path.join(dir, 'bare.js');
    writeFileSync(file, `export default { target: { reference: true }, phases: [{ open: { rate: 5, duration: 30 } }], steps: [{ tool: 'echo' }] };\n`);
    const err = await loadScenarioFile(file).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McptapError);
    expect((err as McptapError).message).toMatch(/bare\.js: phases\[0\]\.open\.duration: 30 has no unit; write 30s or 30ms/);
  });

  it('loads a TypeScript defineScenario module with an iteration function', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'mcptap-scn-'));
    const file = path.join(dir, 'scripted.ts');
    const define = path.join(ROOT, 'src/load/scenario/define-scenario.js');
    writeFileSync(
      file,
      `import { defineScenario } from ${JSON.stringify(define)};
const n: number = 2;
export default defineScenario({
  target: { reference: true },
  phases: [{ closed: { vus: n, iterations: 1 } }],
  async iteration(ctx) { await ctx.tool('echo', { text: 'x' }); },
});
`,
    );
    const s = await loadScenarioFile(file);
    expect(typeof s.iteration).toBe('function');
    expect(s.phases[0]).toMatchObject({ kind: 'closed', vus: 2 });
  });

  it('checks a scenario against --raw as against driver: raw (it used to run nothing and fail every threshold)', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'mcptap-scn-'));
    const file = path.join(dir, 'open.yaml');
    writeFileSync(file, 'target: { url: http://127.0.0.1:1/mcp }\nphases:\n  - open: { rate: 5, duration: 1s }\nsteps:\n  - tool: echo\n');
    expect((await loadScenarioFile(file)).driver).toBe('auto');
    const err = await loadScenarioFile(file, { driver: 'raw' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McptapError);
    expect((err as McptapError).message).toMatch(/open\.yaml:3: phases\[0\]\.open: the raw driver runs closed phases only/);
    writeFileSync(file, 'target: { url: http://127.0.0.1:1/mcp }\nphases:\n  - closed: { vus: 1, iterations: 1 }\nsteps:\n  - tool: echo\n');
    expect((await loadScenarioFile(file, { driver: 'raw' })).driver).toBe('raw');
  });

  it('says which file is missing, and rejects a module without a default export', async () => {
    await expect(loadScenarioFile('/nonexistent/x.yaml')).rejects.toThrow(/cannot read the scenario .*x\.yaml: no such file/);
    const dir = mkdtempSync(path.join(os.tmpdir(), 'mcptap-scn-'));
    writeFileSync(path.join(dir, 'none.mjs'), 'export const x = 1;\n');
    await expect(loadScenarioFile(path.join(dir, 'none.mjs'))).rejects.toThrow(/must `export default defineScenario/);
    await expect(loadScenarioFile(dir)).rejects.toThrow(/ is a directory: give a scenario file \(\.yaml\/\.yml, or \.ts\/\.js\)$/);
  });
});
