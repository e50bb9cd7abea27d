/**
 * `mcptap compare --html`: the comparison as one self-contained page: the verdict, a row per scope
 * (baseline → candidate per metric, regressed cells marked), error rates per layer, and charts of
 * both runs (p95 per scope, latency percentiles and request rate over time from each run's start,
 * the latency distributions). Pure.
 */
import { formatDurationUs } from '../../data-file/duration.js';
import type { CompareMetric, CompareRow, Comparison, MetricCell } from '../results/compare-results.js';
import { histogramOf, type LoadResult } from '../results/load-result.js';
import { newHistogram } from '../../util/histogram.js';
import { chartBox, esc, htmlPage, htmlTable, PALETTE, type Cell, type ChartLibrary, type ChartSpec } from './html-page.js';
import { pct, signed, valueText, WITHIN_NOISE_NOTE } from './compare-report.js';
import { binCounts, intervals, logEdges } from './load-charts.js';

export const COMPARE_CHART_TITLES = {
  scopes: 'p95 per scope: baseline vs candidate',
  latency: 'Latency percentiles over time, both runs',
  rate: 'Request rate over time, both runs',
  histogram: 'Latency histogram, both runs',
} as const;

const BASE = PALETTE[0]!;
const CAND = PALETTE[1]!;

export function renderCompareHtml(c: Comparison, baseline: LoadResult, candidate: LoadResult, lib: ChartLibrary): string {
  const charts: ChartSpec[] = [];
  const verdict =
    c.regressions.length > 0
      ? `<span class="badge fail">regressed: ${c.regressions.length} of ${c.rows.length} scopes</span>`
      : '<span class="badge pass">no regression</span>';
  const body = [
    `<h1>mcptap compare ${verdict}</h1>`,
    runs(c),
    `<p class="meta">No verdict under ${c.minSamples} requests on either side; a latency change under 1 ms is never a regression, nor an error-rate change within chance.</p>`,
    c.regressions.length ? `<p class="warnbox">Regressed: ${c.regressions.map((s) => `<b>${esc(s)}</b>`).join(', ')}</p>` : '',
    '<h2>Per scope</h2>',
    rowsTable(c.rows),
    c.rows.some((r) => r.cells.some((x) => x.withinNoise)) ? `<p class="meta">${esc(WITHIN_NOISE_NOTE)}.</p>` : '',
    '<h2>Error rate per layer</h2>',
    layersTable(c.rows),
    '<h2>Charts</h2>',
    `<div class="grid">${[scopesChart(c, charts), ...timeCharts(baseline, candidate, charts), histogramChart(baseline, candidate, charts)].join('')}</div>`,
  ].join('\n');
  return htmlPage({ title: `mcptap compare: ${c.baseline.label} vs ${c.candidate.label}`, body, charts, lib });
}

function runs(c: Comparison): string {
  const rows = [
    ['baseline', c.baseline],
    ['candidate', c.candidate],
  ].map(([role, r]) => {
    const run = r as Comparison['baseline'];
    return [role as string, run.label, run.scenario, run.target, run.startedAt, `${(run.wallMs / 1000).toFixed(1)}s`];
  });
  return htmlTable(['', 'result', 'scenario', 'target', 'started', 'ran'], rows, { numeric: 5 });
}

function cell(x: MetricCell): Cell {
  const change = x.metric === 'errors' || x.baseline === 0 ? '' : ` (${signed((x.candidate - x.baseline) / x.baseline)})`;
  const cls = x.verdict === 'regressed' ? 'regressed' : x.verdict === 'improved' ? 'improved' : '';
  return { html: esc(`${valueText(x.metric, x.baseline)} → ${valueText(x.metric, x.candidate)}${change}${x.withinNoise ? ' ~' : ''}`), cls };
}

const VERDICT: Record<CompareRow['verdict'], Cell> = {
  regressed: { html: 'REGRESSED', cls: 'regressed' },
  improved: { html: 'improved', cls: 'improved' },
  ok: { html: 'ok', cls: 'ok' },
  no_verdict: { html: 'too few samples', cls: 'none' },
};

function rowsTable(rows: CompareRow[]): string {
  const metrics: CompareMetric[] = ['p50', 'p95', 'p99', 'errors', 'rate'];
  return htmlTable(
    ['scope', 'requests', 'p50', 'p95', 'p99', 'errors', 'rate/s', 'verdict'],
    rows.map((r) => [
      r.scope,
      `${r.baselineCount} → ${r.candidateCount}`,
      ...metrics.map((m) => cell(r.cells.find((x) => x.metric === m)!)),
      VERDICT[r.verdict],
    ]),
  );
}

function layersTable(rows: CompareRow[]): string {
  const layers = rows[0]?.layers.map((l) => l.layer) ?? [];
  return htmlTable(
    ['scope', ...layers],
    rows.map((r) => [r.scope, ...r.layers.map((l) => `${pct(l.baseline)} → ${pct(l.candidate)}`)]),
  );
}

function scopesChart(c: Comparison, charts: ChartSpec[]): string {
  const p95 = (r: CompareRow, side: 'baseline' | 'candidate') => r.cells.find((x) => x.metric === 'p95')![side] / 1000;
  const spec: ChartSpec = {
    id: 'chart-scopes',
    x: { kind: 'category', values: c.rows.map((_, i) => i), label: 'scope', categories: c.rows.map((r) => r.scope) },
    yLabel: 'p95, ms',
    series: [
      { label: 'baseline', values: c.rows.map((r) => p95(r, 'baseline')), color: BASE, bars: { align: -1 } },
      { label: 'candidate', values: c.rows.map((r) => p95(r, 'candidate')), color: CAND, bars: { align: 1 } },
    ],
  };
  charts.push(spec);
  return chartBox(spec, COMPARE_CHART_TITLES.scopes, 'Latency from the intended start.');
}

function timeCharts(a: LoadResult, b: LoadResult, charts: ChartSpec[]): string[] {
  const ia = intervals(a);
  const ib = intervals(b);
  if (ia.length === 0 || ib.length === 0)
    return ['<p class="note">Charts over time need per-interval series in both results (results of older versions of mcptap have none).</p>'];
  // Each run from its own start, on one axis of seconds; the longer run sets the length.
  const step = Math.max(ia[0]!.ms, ib[0]!.ms) / 1000;
  const n = Math.max(Math.ceil((ia.length * ia[0]!.ms) / 1000 / step), Math.ceil((ib.length * ib[0]!.ms) / 1000 / step));
  const xs = Array.from({ length: n }, (_, i) => i * step);
  const at = <T>(ivs: ReturnType<typeof intervals>, f: (iv: ReturnType<typeof intervals>[number]) => T) =>
    xs.map((x) => {
      const iv = ivs.find((v) => (v.t - ivs[0]!.t) / 1000 <= x && x < (v.t - ivs[0]!.t + v.ms) / 1000);
      return iv ? f(iv) : null;
    });
  const x = { kind: 'number' as const, values: xs, label: 'seconds since start' };
  const latency: ChartSpec = {
    id: 'chart-latency',
    x,
    yLabel: 'ms',
    yLog: true,
    series: [
      { label: 'baseline p50', values: at(ia, (iv) => iv.latencyMs[50]), color: BASE },
      { label: 'baseline p95', values: at(ia, (iv) => iv.latencyMs[95]), color: BASE, dash: true },
      { label: 'candidate p50', values: at(ib, (iv) => iv.latencyMs[50]), color: CAND },
      { label: 'candidate p95', values: at(ib, (iv) => iv.latencyMs[95]), color: CAND, dash: true },
    ],
  };
  const rate: ChartSpec = {
    id: 'chart-rate',
    x,
    yLabel: 'requests per second',
    series: [
      { label: 'baseline', values: at(ia, (iv) => iv.counts.requests / (iv.ms / 1000)), color: BASE },
      { label: 'candidate', values: at(ib, (iv) => iv.counts.requests / (iv.ms / 1000)), color: CAND },
    ],
  };
  charts.push(latency, rate);
  return [chartBox(latency, COMPARE_CHART_TITLES.latency, 'Solid p50, dashed p95, log scale.'), chartBox(rate, COMPARE_CHART_TITLES.rate)];
}

function histogramChart(a: LoadResult, b: LoadResult, charts: ChartSpec[]): string {
  const ha = histogramOf(a.overall, 'latency');
  const hb = histogramOf(b.overall, 'latency');
  const both = newHistogram();
  both.add(ha);
  both.add(hb);
  const edges = logEdges(both, 8);
  if (edges.length === 0) return '<p class="note">No request completed in either run.</p>';
  const share = (h: typeof ha) => binCounts(h, edges).map((n) => (h.totalCount ? (100 * n) / h.totalCount : 0));
  const spec: ChartSpec = {
    id: 'chart-histogram',
    x: { kind: 'category', values: edges.map((_, i) => i), label: 'latency (bin upper edge)', categories: edges.map(formatDurationUs) },
    yLabel: '% of requests',
    series: [
      { label: 'baseline', values: share(ha), color: BASE, bars: { align: -1 } },
      { label: 'candidate', values: share(hb), color: CAND, bars: { align: 1 } },
    ],
  };
  charts.push(spec);
  return chartBox(spec, COMPARE_CHART_TITLES.histogram, 'Share of each run’s requests per bin.');
}
