/**
 * The HTML reports of real runs, as a person sees them: `mcptap load --html` against the bundled
 * reference server, `mcptap report` of its JSON, and `mcptap compare --html` of a run against one
 * slowed with a stall, each opened in headless Chromium (Debian `chromium`): every chart drawn (its
 * screenshot has many colours, not one), the titles in the DOM, no request but the file itself, no
 * script error, and a tool named `<script>…` shown as text, never run.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPARE_CHART_TITLES } from '../../src/load/report/compare-html.js';
import type { LoadResult } from '../../src/load/results/load-result.js';
import { LOAD_CHART_TITLES } from '../../src/load/report/html-report.js';
import { CHROMIUM, openReport, xTickLabels, type DrawnText, type OpenedReport } from '../helpers/browser.js';
import { MCPTAP } from '../helpers/paths.js';
import { runCli } from '../helpers/run-cli.js';
import { ON_CI } from '../helpers/prometheus.js';

const EVIL = '<script>window.__pwned=1</script>';

if (!CHROMIUM) {
  if (ON_CI) throw new Error('chromium is missing on CI: .ci/run installs the Debian package `chromium`');
  console.warn('html-report-browser: SKIPPED: no `chromium` on PATH (apt-get install chromium to run these tests)');
}

describe.skipIf(!CHROMIUM)('HTML reports of real runs in headless Chromium', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-html-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const mcptap = (args: string[]) => spawnSync(process.execPath, [MCPTAP, ...args], { encoding: 'utf8', timeout: 90_000 });

  const mcptapAsync = (args: string[]) => runCli(args, 90_000);

  async function run(name: string, stall?: string, html?: string): Promise<string> {
    const target = stall ? `{ reference: { stall: "${stall}" } }` : '{ reference: true }';
    const file = join(dir, `${name}.yaml`);
    writeFileSync(
      file,
      // preflight off: the evil step calls a tool the server lacks, on purpose (an error row in the report).
      `name: html-e2e\ntarget: ${target}\nera: 2026-07-28\nseed: 3\npreflight: false\nphases:\n` +
        `  - { name: ramp, open: { from: 20, to: 60, duration: 3s } }\n  - { name: steady, open: { rate: 40, duration: 2s } }\nsteps:\n` +
        `  - { name: echo, tool: echo, weight: 6, arguments: { text: "x {{iteration}}" } }\n` +
        `  - { name: slow, tool: delay, weight: 2, arguments: { ms: 3 } }\n` +
        `  - { name: streamed, tool: progress, weight: 1, progress: true, arguments: { steps: 3, intervalMs: 5 } }\n` +
        `  - { name: bad, tool: fail, weight: 1 }\n` +
        `  - { name: evil, tool: ${JSON.stringify(EVIL)}, weight: 1 }\n` +
        `thresholds:\n  all: [ "p(99) < 30s" ]\n  "tool:fail": [ "errors == 0" ]\n`,
    );
    const out = join(dir, `${name}.json`);
    const r = await mcptapAsync(['load', file, '--json', out, '--progress', 'none', ...(html ? ['--html', html] : [])]);
    // tool:fail's threshold fails on purpose (the report shows a failed one): exit 3.
    expect(r.code, r.stderr).toBe(3);
    return out;
  }

  function expectRendered(page: OpenedReport, file: string, titles: readonly string[]): void {
    expect(page.errors).toEqual([]);
    expect(page.requests).toEqual([pathToFileURL(file).href]);
    for (const t of titles) expect(page.headings).toContain(t);
    expect(Object.keys(page.chartColours)).toHaveLength(titles.length);
    expect(page.chartsDrawn).toBe(titles.length);
    // A drawn chart has axes, grid, text and coloured series: dozens of colours (anti-aliasing);
    // an empty box has one or two.
    for (const [id, colours] of Object.entries(page.chartColours)) expect(colours, `chart ${id}`).toBeGreaterThan(20);
    expect(page.pageColours).toBeGreaterThan(50);
  }

  /** Each chart's x-axis labels inside its canvas, and no tick's label (all its lines) over its neighbour's. */
  function expectAxisLegible(page: OpenedReport): void {
    for (const [id, texts] of Object.entries(page.chartTexts)) {
      const labels = xTickLabels(texts);
      expect(labels.length, id).toBeGreaterThan(0);
      for (const l of labels) expect([l.x0 >= 0, l.x1 <= l.canvasWidth], `${id}: "${l.text}" ${l.x0}..${l.x1} of ${l.canvasWidth}`).toEqual([true, true]);
      // Level labels by tick (a tick's lines share its centre); each must stay in its tick's column,
      // up to half-way to the next tick on either side.
      const ticks = new Map<number, DrawnText[]>();
      for (const l of labels.filter((x) => !x.rotated)) {
        const c = Math.round((l.x0 + l.x1) / 2);
        ticks.set(c, [...(ticks.get(c) ?? []), l]);
      }
      const spans = [...ticks.entries()]
        .map(([c, ls]) => ({ c, x0: Math.min(...ls.map((l) => l.x0)), x1: Math.max(...ls.map((l) => l.x1)), text: ls.map((l) => l.text).join(' / ') }))
        .sort((a, b) => a.c - b.c);
      for (let i = 1; i < spans.length; i++) {
        const [a, b] = [spans[i - 1]!, spans[i]!];
        const mid = (a.c + b.c) / 2;
        expect([a.x1 <= mid, b.x0 >= mid], `${id}: "${a.text}" (${a.x0}..${a.x1}) and "${b.text}" (${b.x0}..${b.x1}) cross ${mid}`).toEqual([true, true]);
      }
    }
  }

  const loadHtml = join(dir, 'load.html');
  let base = '';
  // The two runs (5 s of load each, a reference server each) side by side, from the start; each
  // test awaits the one it reads, so a failed run fails that test.
  let baseRun: Promise<string>;
  let stalledRun: Promise<string>;
  beforeAll(() => {
    baseRun = run('base', undefined, loadHtml);
    stalledRun = run('stalled', '1000:900');
    // Awaited by their tests; caught here only so that a failure waiting for its test is not "unhandled".
    baseRun.catch(() => {});
    stalledRun.catch(() => {});
  });

  it('load --html: every chart drawn, titles present, no request, the <script> tool inert', async () => {
    base = await baseRun;
    const page = await openReport(loadHtml, join(dir, 'load.png'), 'window.__pwned');
    expectRendered(page, loadHtml, Object.values(LOAD_CHART_TITLES));
    expectAxisLegible(page);
    expect(page.probe).toBeUndefined();
    expect(page.text).toContain(`tool ${EVIL}`);
    expect(page.text).toMatch(/FAIL\s+tool:fail\s+errors == 0/);
    for (const h of ['Thresholds', 'Per method, tool and step', 'SSE', 'Phases', 'Scenario']) expect(page.headings).toContain(h);
    // SSE figures of the progress tool, the phases as planned, the step mix
    expect(page.text).toMatch(/tool progress\s+\d+\s+\d/);
    expect(page.text).toContain('open: 20/s → 60/s for 3s');
    expect(page.text).toMatch(/streamed\s+tools\/call\s+progress/);
  });

  it('report RESULT.json --html writes the same report from the saved JSON', async () => {
    const html = join(dir, 'report.html');
    const r = mcptap(['report', base, '--html', html]);
    expect(r.status, r.stderr).toBe(3);
    expect(r.stdout).toContain('scenario html-e2e');
    const page = await openReport(html);
    expectRendered(page, html, Object.values(LOAD_CHART_TITLES));
    expect(readFileSync(html, 'utf8')).toBe(readFileSync(loadHtml, 'utf8'));
  });

  it("a minute-long run's time axes: no tick label runs into the next (the first carried the date)", async () => {
    // The real run's series, repeated 12 times end to end: the report of a 60 s run.
    const r = JSON.parse(readFileSync(base, 'utf8')) as LoadResult;
    const s = r.series!;
    const span = s.points[s.points.length - 1]!.t - s.points[0]!.t + s.intervalMs;
    s.points = Array.from({ length: 12 }, (_, k) => s.points.map((p) => ({ ...p, t: p.t + k * span }))).flat();
    const long = join(dir, 'minute.json');
    writeFileSync(long, JSON.stringify(r));
    const html = join(dir, 'minute.html');
    expect(mcptap(['report', long, '--html', html]).status).toBe(3);
    expectAxisLegible(await openReport(html));
  });

  it('compare --html of a run against a stalled one: charts of both, regressed rows marked', async () => {
    const stalled = await stalledRun;
    const html = join(dir, 'compare.html');
    const r = mcptap(['compare', base, stalled, '--max-regression', 'p50=+50%,p50=+100ms,p95=+50%,p95=+300ms', '--html', html]);
    expect(r.status, r.stdout + r.stderr).toBe(1);
    expect(existsSync(html)).toBe(true);
    const page = await openReport(html, join(dir, 'compare.png'), 'window.__pwned');
    expectRendered(page, html, Object.values(COMPARE_CHART_TITLES));
    expectAxisLegible(page);
    expect(page.probe).toBeUndefined();
    expect(page.text).toMatch(/Regressed: .*tool echo/);
    expect(page.text).toMatch(/tool echo\s.*REGRESSED/);
    expect(page.text).toContain(`tool ${EVIL}`);
  });
});
