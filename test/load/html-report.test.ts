/**
 * The HTML reports as text: escaping of everything a result carries (a tool named `<script>`, a
 * scenario named `</script>`), the page's offline guarantees (inlined library, a CSP that allows
 * no source, no URL to fetch), results of the previous format (no series, no scenario), and the
 * numbers behind the charts. Results come from runs on virtual time with the simulated driver (as
 * the executor tests) or samples made up for the pure series recorder; the browser tests open
 * reports of real runs.
 */
import { describe, expect, it } from 'vitest';
import { compareResults } from '../../src/load/results/compare-results.js';
import { VirtualScheduler } from '../../src/load/executors/virtual-scheduler.js';
import { decodeHistogram, newHistogram, recordUs } from '../../src/util/histogram.js';
import type { LoadResult } from '../../src/load/results/load-result.js';
import { loadChartLibrary } from '../../src/load/report/chart-library.js';
import { renderCompareHtml } from '../../src/load/report/compare-html.js';
import { LOAD_CHART_TITLES, renderLoadHtml } from '../../src/load/report/html-report.js';
import { intervals, logBins, targetRateAt } from '../../src/load/report/load-charts.js';
import { runLoad } from '../../src/load/run/run-load.js';
import type { Sample } from '../../src/load/results/sample.js';
import { mergeSeries, SeriesRecorder } from '../../src/load/results/series.js';
import { scenario } from './scenario-fixtures.js';
import { simulatedDriver } from './simulated-driver.js';

const EVIL_TOOL = '<script>window.__pwned=1</script>';
const EVIL_NAME = '</script><script>window.__pwned=2</script><!--';

async function simulate(name = 'html'): Promise<LoadResult> {
  const yaml = `
name: ${JSON.stringify(name)}
target: { url: "http://127.0.0.1:1/mcp?token=secret" }
seed: 5
phases:
  - open: { from: 20, to: 100, duration: 3s }
steps:
  - { tool: echo, weight: 3, arguments: { text: hi } }
  - { tool: ${JSON.stringify(EVIL_TOOL)}, weight: 1 }
thresholds:
  all: [ "p(95) < 1s" ]
`;
  const sched = new VirtualScheduler(1_000_000_000_000);
  const clock = { nowUs: () => sched.nowUs() };
  let i = 0;
  const server = { serviceUs: () => 2000 + ((i++ * 7919) % 20_000) };
  return sched.run(runLoad(scenario(yaml), { scheduler: sched, clock, driverFactory: async () => simulatedDriver(sched, server) }));
}

/** What the page's scripts hold, and the markup outside them. */
function split(html: string): { scripts: string[]; markup: string } {
  const scripts: string[] = [];
  const markup = html.replace(/<script\b[^>]*>([\s\S]*?)<\/script>/g, (_, body: string) => (scripts.push(body), ''));
  return { scripts, markup };
}

describe('HTML load report', () => {
  it('escapes every name: a tool named <script> and a scenario named </script> stay text', async () => {
    const r = await simulate(EVIL_NAME);
    const html = renderLoadHtml(r, loadChartLibrary());
    const { scripts, markup } = split(html);
    // exactly the page's own three blocks: chart data, the library, the drawing code
    expect(scripts).toHaveLength(3);
    expect(html).not.toContain(EVIL_TOOL);
    expect(html).not.toContain('window.__pwned=2</script>');
    expect(markup).toContain('tool &#60;script&#62;window.__pwned=1&#60;/script&#62;');
    expect(markup).toContain('&#60;/script&#62;&#60;script&#62;window.__pwned=2');
    // the data block is JSON with `<` escaped: it parses back to the names
    expect(JSON.parse(scripts[0]!)).toBeInstanceOf(Array);
    expect(scripts[0]).not.toContain('<');
  });

  it('works offline: the library inlined, a CSP that allows nothing to load, no URL to fetch', async () => {
    const html = renderLoadHtml(await simulate(), loadChartLibrary());
    const lib = loadChartLibrary();
    expect(html).toContain(lib.js.slice(0, 200));
    expect(lib.js.length).toBeGreaterThan(20_000);
    const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(html)![1]!;
    expect(csp).toContain('default-src &#39;none&#39;');
    expect(csp).toMatch(/script-src &#39;sha256-[^ ]+&#39; &#39;sha256-[^ ]+&#39;;/);
    const { markup } = split(html);
    expect(markup).not.toMatch(/\b(src|href)="(?!data:)/);
    expect(html).not.toMatch(/@import|url\(\s*['"]?(?!data:)/);
    // the target's query string (a token) never reaches the report
    expect(html).not.toContain('secret');
    for (const t of Object.values(LOAD_CHART_TITLES)) expect(markup).toContain(`<h3>${t}</h3>`);
  });

  it('a result of the previous format (no series, no scenario) still renders, saying what is missing', async () => {
    const { series: _s, plan: _p, ...old } = await simulate();
    const html = renderLoadHtml(old as LoadResult, loadChartLibrary());
    expect(html).toContain('has no per-interval series');
    expect(html).toContain('does not carry its scenario');
    expect(html).toContain(`<h3>${LOAD_CHART_TITLES.histogram}</h3>`);
    expect(html).not.toContain(`<h3>${LOAD_CHART_TITLES.latency}</h3>`);
  });

  it('the compare page escapes labels and names too', async () => {
    const a = await simulate();
    const b = await simulate();
    const html = renderCompareHtml(compareResults(a, b, { labels: ['<b>a.json', 'b.json'] }), a, b, loadChartLibrary());
    const { scripts, markup } = split(html);
    expect(scripts).toHaveLength(3);
    expect(html).not.toContain(EVIL_TOOL);
    expect(markup).toContain('&#60;b&#62;a.json');
    expect(markup).toContain('no regression');
  });
});

describe('chart numbers', () => {
  it('per-second intervals: every request and start counted once; the target follows the ramp', async () => {
    const r = await simulate();
    const ivs = intervals(r);
    expect(ivs.reduce((a, iv) => a + iv.counts.requests, 0)).toBe(r.overall.counters.requests);
    expect(ivs.reduce((a, iv) => a + iv.counts.started, 0)).toBe(180);
    expect(ivs.reduce((a, iv) => a + iv.latencyCount, 0)).toBe(r.overall.counters.requests);
    const start = r.phases[0]!.startUs / 1000;
    expect(targetRateAt(r.phases, start)).toBeCloseTo(20);
    expect(targetRateAt(r.phases, start + 1500)).toBeCloseTo(60);
    expect(targetRateAt(r.phases, start + 3001)).toBeNull();
    // merged k at a time when there are more intervals than a chart shows
    const two = intervals(r, 2);
    expect(two).toHaveLength(2);
    expect(two.reduce((a, iv) => a + iv.counts.requests, 0)).toBe(r.overall.counters.requests);
  });

  it('log bins hold every value, in bins whose edges grow by a constant factor', () => {
    const h = newHistogram();
    for (const us of [150, 900, 1100, 5000, 5000, 80_000]) recordUs(h, us);
    const b = logBins(h, 10);
    expect(b.counts.reduce((a, n) => a + n, 0)).toBe(6);
    expect(b.edgesUs[0]).toBeGreaterThanOrEqual(150);
    expect(b.edgesUs.at(-1)).toBeGreaterThanOrEqual(80_000);
    expect(b.edgesUs[5]! / b.edgesUs[4]!).toBeCloseTo(Math.pow(10, 0.1), 1);
  });
});

describe('series of long runs', () => {
  const sample = (endUs: number): Sample => ({
    step: 's',
    method: 'tools/call',
    intendedUs: endUs - 5000,
    sentUs: endUs - 4000,
    endUs,
    outcome: 'ok',
    isError: false,
    violations: [],
    sse: false,
    checks: 0,
    checkFailures: 0,
  });
  const T0 = 1_700_000_000_000_000; // µs, on an 8 s boundary

  it('past the point limit the interval doubles, on epoch multiples, and nothing is lost', () => {
    const rec = new SeriesRecorder(8);
    for (let s = 0; s < 40; s++) for (let j = 0; j < 3; j++) rec.record(sample(T0 + s * 1e6 + j * 1000));
    const out = rec.snapshot();
    expect(out.intervalMs).toBe(8000);
    expect(out.points.length).toBeLessThanOrEqual(8);
    expect(out.points.every((p) => p.t % 8000 === 0)).toBe(true);
    expect(out.points.reduce((a, p) => a + p.requests, 0)).toBe(120);
    expect(out.points.reduce((a, p) => a + decodeHistogram(p.latency).totalCount, 0)).toBe(120);
  });

  it('series of different intervals merge on the longer one', () => {
    const fine = new SeriesRecorder();
    const coarse = new SeriesRecorder(8);
    for (let s = 0; s < 20; s++) {
      fine.record(sample(T0 + s * 1e6));
      coarse.record(sample(T0 + s * 1e6 + 500_000));
    }
    const merged = mergeSeries(fine.snapshot(), coarse.snapshot())!;
    expect(coarse.snapshot().intervalMs).toBe(4000);
    expect(merged.intervalMs).toBe(4000);
    expect(merged.points.map((p) => p.requests)).toEqual([8, 8, 8, 8, 8]);
    expect(mergeSeries({ intervalMs: 3000, points: [] }, { intervalMs: 2000, points: [] })).toBeUndefined();
  });
});
