/**
 * examples/replay-ci: the GitHub Actions workflow's replay step, run as written (only `mcptap` and
 * the server command swapped for the built CLI and the reference server), against a
 * real recording of the reference server, with the example's rules file. The workflow is parsed
 * with `yaml`; the JUnit file it publishes is checked with a real XML parser.
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { parse as parseYaml } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { McpSession, McpStdioClient, StdioChannel } from '../../src/client/index.js';
import { loadRules } from '../../src/replay/rules.js';
import { MCPTAP, ROOT } from '../helpers/paths.js';

const EXAMPLE = join(ROOT, 'examples', 'replay-ci');

interface Step {
  name?: string;
  uses?: string;
  run?: string;
  with?: Record<string, string>;
}

const workflow = parseYaml(readFileSync(join(EXAMPLE, 'github-actions.yml'), 'utf8')) as {
  on: { workflow_dispatch: { inputs: { update: { type: string } } } };
  jobs: { replay: { steps: Step[] } };
};
const steps = workflow.jobs.replay.steps;
const replayStep = steps.find((s) => s.run?.includes('mcptap replay'))!;

/** The step's shell command with the expression for `inputs.update` resolved, mcptap and the server swapped for local ones. */
function localCommand(update: boolean): string {
  const cmd = replayStep
    .run!.replace(/\$\{\{\s*inputs\.update && '([^']*)' \|\| '' \}\}/, update ? '$1' : '')
    .replace(/^mcptap /, `"${process.execPath}" "${MCPTAP}" `)
    .replace(/-- node dist\/server\.js\s*$/, `-- "${process.execPath}" "${MCPTAP}" reference --stdio`);
  expect(cmd).not.toMatch(/\$\{\{|npx|^mcptap |dist\/server/); // every substitution applied
  return cmd;
}

async function sh(command: string, cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)('sh', ['-c', command], { cwd, timeout: 60_000, env: { ...process.env, NO_COLOR: '1' } });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** A legacy session with the reference server through `mcptap stdio --record`, the clock tool included. */
async function recordBaseline(db: string): Promise<void> {
  const client = await McpStdioClient.spawn({ command: process.execPath, args: [MCPTAP, 'stdio', '--record', db, '--', process.execPath, MCPTAP, 'reference', '--stdio'] });
  try {
    const s = new McpSession(new StdioChannel(client), { era: 'legacy' });
    await s.initialize();
    await s.request('tools/list', {});
    await s.request('tools/call', { name: 'echo', arguments: { text: 'ci baseline' } });
    await s.request('tools/call', { name: 'clock', arguments: {} });
    await s.request('tools/call', { name: 'fail', arguments: { message: 'expected' } });
  } finally {
    await client.close();
  }
}

describe('examples/replay-ci', () => {
  const repo = mkdtempSync(join(tmpdir(), 'mcptap-replay-ci-'));

  beforeAll(async () => {
    mkdirSync(join(repo, 'recordings'));
    // Committed as text, as the README's loop says: recorded, then exported as JSONL.
    const db = join(repo, 'baseline.db');
    await recordBaseline(db);
    expect((await sh(`"${process.execPath}" "${MCPTAP}" export "${db}" --jsonl recordings/baseline.jsonl`, repo)).code).toBe(0);
    cpSync(join(EXAMPLE, 'replay-rules.yaml'), join(repo, 'recordings', 'replay-rules.yaml'));
  }, 60_000);

  it('the workflow publishes and uploads the files the replay step writes', () => {
    expect(workflow.on.workflow_dispatch.inputs.update.type).toBe('boolean');
    const junit = /--junit (\S+)/.exec(replayStep.run!)![1]!;
    const json = /--json (\S+)/.exec(replayStep.run!)![1]!;
    const next = /--update (\S+?)'/.exec(replayStep.run!)![1]!;
    const publish = steps.find((s) => s.uses?.startsWith('mikepenz/action-junit-report@'))!;
    expect(publish.with!.report_paths).toBe(junit);
    const upload = steps.find((s) => s.uses?.startsWith('actions/upload-artifact@'))!;
    expect(upload.with!.path.split('\n').filter(Boolean)).toEqual([junit, json, next]);
    const rules = /--rules (\S+)/.exec(replayStep.run!)![1]!;
    expect(rules).toBe('recordings/replay-rules.yaml'); // where the test put the example's rules
  });

  it('installs mcptap from a pinned release tarball before it runs it, never through npx (not on npm)', () => {
    const install = steps.findIndex((s) => s.name === 'Install mcptap');
    expect(steps[install]!.run).toMatch(/^npm install -g .*\/mcptap-\d+\.\d+\.\d+\.tgz$/); // run as written by test/package/npm-install.test.ts
    expect(install).toBeLessThan(steps.indexOf(replayStep));
    expect(steps.filter((s) => s.run?.includes('npx'))).toEqual([]);
  });

  it('the example rules file is valid', () => {
    expect(() => loadRules(join(EXAMPLE, 'replay-rules.yaml'))).not.toThrow();
  });

  it('replays the baseline as the workflow does: exit 0, a JUnit file with no failure, the clock call passing by its rule', async () => {
    const r = await sh(localCommand(false), repo);
    expect(r.stderr).not.toMatch(/error/i);
    expect(r.stdout).toMatch(/5 exchanges replayed: 5 same.*no differences/s);
    expect(r.code).toBe(0);
    const xml = readFileSync(join(repo, 'mcp-replay.xml'), 'utf8');
    expect(XMLValidator.validate(xml)).toBe(true);
    const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', isArray: (n) => n === 'testsuite' || n === 'testcase' }).parse(xml) as {
      testsuites: { tests: string; failures: string; testsuite: { name: string; testcase: unknown[] }[] };
    };
    expect(Number(doc.testsuites.tests)).toBe(5);
    expect(Number(doc.testsuites.failures)).toBe(0);
    expect(doc.testsuites.testsuite.map((s) => s.name)).toContain('tools/call clock');
    expect(JSON.parse(readFileSync(join(repo, 'mcp-replay.json'), 'utf8'))).toMatchObject({ counts: { differences: 0 } });
    expect(existsSync(join(repo, 'next-baseline.jsonl'))).toBe(false);

    // Without the example's rules, the clock call is the one difference: the rule is what passes it.
    const strict = await sh(localCommand(false).replace(/--rules \S+/, ''), repo);
    expect(strict.stdout).toMatch(/tools\/call clock\n {4}\/result\/content\/0\/text: changed/);
    expect(strict.stdout).toMatch(/5 exchanges replayed: 4 same, 1 different/);
    expect(strict.code).toBe(1);
  }, 60_000);

  it('with "update" ticked it also writes the next baseline as JSONL, green when written (changed answers accepted)', async () => {
    const r = await sh(localCommand(true), repo);
    expect(r.stderr).toContain('mcptap: wrote next-baseline.jsonl: 0 changed answers accepted\n');
    expect(r.code).toBe(0);
    const requests = readFileSync(join(repo, 'next-baseline.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { dir?: string; message?: { method?: string; id?: unknown } })
      .filter((l) => l.dir === 'c2s' && l.message?.id !== undefined)
      .map((l) => l.message!.method);
    expect(requests).toEqual(['initialize', 'tools/list', 'tools/call', 'tools/call', 'tools/call']);

    // Without the rule the clock call differs: accepting it is still the step's success, not a red run.
    rmSync(join(repo, 'next-baseline.jsonl'));
    const accepting = await sh(localCommand(true).replace(/--rules \S+/, ''), repo);
    expect(accepting.stderr).toContain('mcptap: wrote next-baseline.jsonl: 1 changed answer accepted\n');
    expect(accepting.code).toBe(0);
  }, 60_000);
});
