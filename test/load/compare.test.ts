/**
 * `mcptap compare`: the verdicts on results of exactly known runs (virtual time and the simulated
 * driver, as the executor tests), then the real thing: runs against the reference server, one
 * slowed with `--stall`, compared through the CLI.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compareResults, parseTolerances, quantileBounds } from '../../src/load/results/compare-results.js';
import { VirtualScheduler } from '../../src/load/executors/virtual-scheduler.js';
import type { LoadResult } from '../../src/load/results/load-result.js';
import { renderComparison } from '../../src/load/report/compare-report.js';
import { runLoad } from '../../src/load/run/run-load.js';
import { McptapError } from '../../src/errors.js';
import { runCli } from '../helpers/run-cli.js';
import { scenario } from './scenario-fixtures.js';
import { simulatedDriver, type SimServer } from './simulated-driver.js';

const MIX = `
target: { url: "http://127.0.0.1:1/mcp" }
seed: 5
phases:
  - open: { rate: 200, duration: 2s }
steps:
  - { tool: echo, weight: 3, arguments: { text: hi } }
  - { tool: delay, weight: 1, arguments: { ms: 1 } }
  - { tool: tiny, weight: 1, arguments: {} }
`;

async function simulate(server: SimServer): Promise<LoadResult> {
  const sched = new VirtualScheduler(1_000_000_000_000);
  const clock = { nowUs: () => sched.nowUs() };
  return sched.run(runLoad(scenario(MIX), { scheduler: sched, clock, driverFactory: async () => simulatedDriver(sched, server) }));
}

/** Service times spread over 2-12 ms, the same sequence on every run. */
function spread(factor = (_tool?: string) => 1): SimServer['serviceUs'] {
  let i = 0;
  return (c) => Math.round((2000 + ((i++ * 7919) % 10_000)) * factor(c.tool));
}

describe('compareResults', () => {
  it('a run compared with an identical one: no regression anywhere', async () => {
    const a = await simulate({ serviceUs: spread() });
    const b = await simulate({ serviceUs: spread() });
    const c = compareResults(a, b);
    expect(c.regressions).toEqual([]);
    expect(c.rows.map((r) => r.scope)).toEqual(['all', 'method tools/call', 'tool delay', 'tool echo', 'tool tiny']);
    expect(c.rows.find((r) => r.scope === 'tool tiny')!.verdict).toBe('ok');
  });

  it('one tool three times slower: that tool (and the scopes holding it) regress, the others do not', async () => {
    const a = await simulate({ serviceUs: spread() });
    const b = await simulate({ serviceUs: spread((tool) => (tool === 'delay' ? 3 : 1)) });
    const c = compareResults(a, b);
    expect(c.regressions).toContain('tool delay');
    expect(c.regressions).not.toContain('tool echo');
    expect(c.regressions).not.toContain('tool tiny');
    const delay = c.rows.find((r) => r.scope === 'tool delay')!;
    expect(delay.cells.find((x) => x.metric === 'p95')!.verdict).toBe('regressed');
    const text = renderComparison(c, { color: false });
    expect(text).toMatch(/tool delay: p95 .* → /);
    expect(text).toContain('REGRESSED');
  });

  it('errors: a tool that starts failing regresses on the error rate; its latency is unchanged', async () => {
    const a = await simulate({ serviceUs: spread() });
    const b = await simulate({ serviceUs: spread(), outcome: (c) => (c.tool === 'tiny' ? 'tool_error' : 'ok') });
    const c = compareResults(a, b);
    const tiny = c.rows.find((r) => r.scope === 'tool tiny')!;
    expect(tiny.verdict).toBe('regressed');
    expect(tiny.cells.filter((x) => x.verdict === 'regressed').map((x) => x.metric)).toEqual(['errors']);
    expect(tiny.layers.find((l) => l.layer === 'tool')).toEqual({ layer: 'tool', baseline: 0, candidate: 1 });
  });

  it('too few samples on either side: no verdict, however different', async () => {
    const a = await simulate({ serviceUs: spread() });
    const b = await simulate({ serviceUs: spread(() => 10) });
    const c = compareResults(a, b, { minSamples: 100_000 });
    expect(c.rows.every((r) => r.verdict === 'no_verdict')).toBe(true);
    expect(c.regressions).toEqual([]);
  });

  it('a percentile past its tolerance but within its sampling noise is ok, marked ~ and explained', async () => {
    // tiny gets a fifth of 400 calls: at 80 samples its p95 is known to a few ranks either way.
    const a = await simulate({ serviceUs: spread() });
    const b = await simulate({ serviceUs: spread((tool) => (tool === 'tiny' ? 1.25 : 1)) });
    const c = compareResults(a, b, { tolerances: parseTolerances('p95=+20%') });
    const p95 = c.rows.find((r) => r.scope === 'tool tiny')!.cells.find((x) => x.metric === 'p95')!;
    expect(p95.candidate).toBeGreaterThan(p95.baseline * 1.2);
    expect(p95).toMatchObject({ verdict: 'ok', withinNoise: true });
    const text = renderComparison(c, { color: false });
    expect(text).toMatch(/tool tiny .* → .* \+2\d% ~/);
    expect(text).toContain("~ past its tolerance, but within the percentile's sampling noise at these counts (99% bounds): ok");
    // A cell well inside its tolerance is not marked.
    expect(c.rows.find((r) => r.scope === 'tool echo')!.cells.find((x) => x.metric === 'p95')!.withinNoise).toBeUndefined();
  });

  it('percentile bounds widen as samples shrink and stay around p', () => {
    const [lo10, hi10] = quantileBounds(100, 95);
    const [lo1k, hi1k] = quantileBounds(10_000, 95);
    expect(lo10).toBeLessThan(lo1k);
    expect(hi10).toBeGreaterThan(hi1k);
    expect(lo1k).toBeLessThan(95);
    expect(hi1k).toBeGreaterThan(95);
  });
});

describe('parseTolerances', () => {
  it('reads percent, milliseconds, points and drops', () => {
    expect(parseTolerances('p95=+20%, p95=+5ms, p99=+1s, errors=+0.5%, rate=-10%')).toEqual({
      p95: { relative: 0.2, absolute: 5000 },
      p99: { absolute: 1_000_000 },
      errors: { absolute: 0.005 },
      rate: { relative: 0.1 },
    });
  });

  it.each([
    ['p97=+20%', 'unknown metric'],
    ['p95=20', 'give a unit'],
    ['p95=-20%', 'latency takes an increase'],
    ['rate=+10%', 'rate takes a drop'],
    ['errors=+1ms', 'errors takes an increase'],
    ['p95', 'write METRIC'],
  ])('%s is refused: %s', (spec, why) => {
    expect(() => parseTolerances(spec)).toThrow(McptapError);
    expect(() => parseTolerances(spec)).toThrow(why);
  });
});

describe('mcptap compare against the reference server', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-compare-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const mcptap = (args: string[]) => runCli(args);

  /** Three short runs: the build, a rerun of it, and the server holding answers 900 ms of every second. */
  async function run(name: string, stall?: string): Promise<string> {
    const target = stall ? `{ reference: { stall: "${stall}" } }` : '{ reference: true }';
    const file = join(dir, `${name}.yaml`);
    writeFileSync(
      file,
      `name: compare-e2e\ntarget: ${target}\nera: 2026-07-28\nseed: 9\nphases:\n  - open: { rate: 40, duration: 3s }\nsteps:\n` +
        `  - { tool: echo, weight: 3, arguments: { text: "x {{iteration}}" } }\n  - { tool: delay, weight: 1, arguments: { ms: 2 } }\n`,
    );
    const out = join(dir, `${name}.json`);
    const r = await mcptap(['load', file, '--json', out, '--progress', 'none']);
    expect(r.code, r.stderr).toBe(0);
    return out;
  }
  // The machine is shared and noisy: a regression must also be 100 ms worse at p50, 300 ms at p95.
  const TOLERANCE = 'p50=+50%,p50=+100ms,p95=+50%,p95=+300ms,errors=+5%';

  it('flags the stalled run as a regression naming its tools (exit 1), and a rerun as none (exit 0)', async () => {
    // One after another: run side by side (with another test file beside them), the base run's own
    // latency grew past what the stall adds to the delay tool's 30-odd calls.
    const base = await run('base');
    const rerun = await run('rerun');
    const stalled = await run('stalled', '1000:900');

    const json = join(dir, 'cmp.json');
    const [same, slow] = await Promise.all([
      mcptap(['compare', base, rerun, '--max-regression', TOLERANCE]),
      mcptap(['compare', base, stalled, '--max-regression', TOLERANCE, '--json', json]),
    ]);
    expect(same.code, same.stdout + same.stderr).toBe(0);
    expect(same.stdout).toContain('no regression');

    expect(slow.code, slow.stdout + slow.stderr).toBe(1);
    expect(slow.stdout).toMatch(/^ {2}tool echo: p50 .* → /m);
    expect(slow.stdout).toMatch(/^ {2}tool delay: p50 .* → /m);
    const written = JSON.parse(readFileSync(json, 'utf8')) as { regressions: string[] };
    expect(written.regressions).toEqual(expect.arrayContaining(['all', 'tool echo', 'tool delay']));
  });

  it('a file that is not a load result exits 4, a bad tolerance 2, each with a one-line reason', async () => {
    const notResult = join(dir, 'not.json');
    writeFileSync(notResult, '{"hello": 1}');
    const recording = join(dir, 'rec.db');
    writeFileSync(recording, Buffer.concat([Buffer.from('SQLite format 3\0', 'latin1'), Buffer.alloc(100)]));
    // An output that is an input, a recording or the other output: refused before anything is read.
    const refusals = [
      [['--html', notResult], 'is the input'],
      [['--json', recording], 'is a recording'],
      [['--json', join(dir, 'o.json'), '--html', join(dir, 'o.json')], 'is given to --json too'],
    ] as const;
    // Each only reads its inputs, or is refused before: all at once.
    const [bad, db, tol, ...refused] = await Promise.all([
      mcptap(['compare', notResult, notResult]),
      mcptap(['compare', recording, recording]),
      mcptap(['compare', notResult, notResult, '--max-regression', 'p95=20']),
      ...refusals.map(([args]) => mcptap(['compare', notResult, notResult, ...args])),
    ]);
    expect(bad!.code).toBe(4);
    expect(bad!.stderr).toContain('not an mcptap load result (no "format" field; mcptap load --json writes one)');
    expect(db!.code).toBe(4);
    expect(db!.stderr).toContain(`${recording} is a recording (SQLite), not a load result`);
    expect(tol!.code).toBe(2);
    expect(tol!.stderr).toContain('--max-regression: "p95=20"');
    for (const [i, [args, why]] of refusals.entries()) {
      const r = refused[i]!;
      expect([r.code, r.stderr], args.join(' ')).toEqual([2, expect.stringContaining(why)]);
    }
    expect(readFileSync(notResult, 'utf8')).toBe('{"hello": 1}');
  });
});
