/**
 * A load result as one self-contained HTML page (`mcptap load --html`, `mcptap report --html`):
 * verdict and run facts, thresholds, charts over time (latency percentiles, achieved vs target
 * rate, errors per layer, iterations in flight), the latency histogram, a table per method, tool
 * and step, SSE figures, phases, error codes and the scenario itself. Pure: result in, page out.
 */
import { formatDurationUs } from '../../data-file/duration.js';
import { histogramOf, type GroupResult, type LoadResult } from '../results/load-result.js';
import { httpErrors, sum } from '../results/group-stats.js';
import { checksHtml, toleratedChecksText } from './check-report.js';
import { chartBox, esc, htmlPage, htmlTable, PALETTE, type Cell, type ChartLibrary, type ChartSpec } from './html-page.js';
import { intervals, logBins, targetRateAt } from './load-charts.js';

/** The headings of the charts, in page order (tests look for them). */
export const LOAD_CHART_TITLES = {
  latency: 'Latency percentiles over time',
  histogram: 'Latency histogram',
  rate: 'Achieved vs target rate',
  errors: 'Errors per layer over time',
  inFlight: 'Iterations in flight',
} as const;

export function renderLoadHtml(r: LoadResult, lib: ChartLibrary): string {
  const charts: ChartSpec[] = [];
  const failed = r.thresholds.filter((t) => !t.ok).length;
  const verdict = r.stopped
    ? `<span class="badge warn">STOPPED EARLY (${esc(r.stopped)})</span>`
    : r.thresholds.length === 0
      ? '<span class="badge warn">no thresholds</span>'
      : failed === 0
        ? `<span class="badge pass">thresholds passed${esc(toleratedChecksText(r.overall.counters.checkFailures))}</span>`
        : `<span class="badge fail">${failed} of ${r.thresholds.length} thresholds failed</span>`;
  const body = [
    `<h1>mcptap load: ${esc(r.scenario)} ${verdict}</h1>`,
    runFacts(r),
    r.stopped
      ? `<p class="warnbox">The run was stopped before its schedule ended (${esc(r.stopped)}): the figures and thresholds cover only what ran.</p>`
      : '',
    r.scriptErrors ? `<p class="warnbox">${r.scriptErrors} scripted iteration(s) threw.</p>` : '',
    '<h2>Thresholds</h2>',
    thresholdsTable(r),
    checksHtml(r.checks),
    '<h2>Over time</h2>',
    timeCharts(r, charts),
    '<h2>Latency distribution</h2>',
    histogramChart(r, charts),
    '<h2>Per method, tool and step</h2>',
    '<p class="note">Latency from each iteration\'s intended start (so a stall shows, not just the service time); error columns count requests per layer.</p>',
    groupsTable(r),
    '<h2>Error codes</h2>',
    codesTable(r.overall),
    '<h2>SSE</h2>',
    sseTable(r),
    '<h2>Phases</h2>',
    phasesTable(r),
    '<h2>Scenario</h2>',
    scenarioSection(r),
  ].join('\n');
  return htmlPage({ title: `mcptap load: ${r.scenario}`, body, charts, lib });
}

function runFacts(r: LoadResult): string {
  const sharded = r.shards.length > 1 || (r.shards[0]?.count ?? 1) > 1;
  const c = r.overall.counters;
  const secs = r.wallMs / 1000;
  const facts: [string, string][] = [
    ['target', `${r.target} (${r.driver}, ${r.era} era)`],
    ['started', r.startedAt],
    ['ran', `${secs.toFixed(1)}s`],
    ['requests', `${c.requests} (${secs > 0 ? (c.requests / secs).toFixed(1) : '-'}/s)`],
    [
      'errors',
      `${c.errors} (${c.requests ? ((100 * c.errors) / c.requests).toFixed(2) : '0'}%)${c.expectedErrors ? `, ${c.expectedErrors} expected (expect:) apart` : ''}`,
    ],
    [
      'latency',
      `p50 ${formatDurationUs(r.overall.latency.summary.p50)}, p95 ${formatDurationUs(r.overall.latency.summary.p95)}, p99 ${formatDurationUs(r.overall.latency.summary.p99)}`,
    ],
    ['most in flight', String(r.maxInFlight)],
    ['dropped', String(r.phases.reduce((a, p) => a + p.dropped, 0))],
    ['schedule lag p99', formatDurationUs(r.scheduleLag.summary.p99)],
  ];
  if (sharded) facts.push(['shards', r.shards.map((s) => `${s.index}/${s.count}`).join(', ')]);
  return `<p class="meta">${facts.map(([k, v]) => `${esc(k)}: <b>${esc(v)}</b>`).join(' · ')}</p>`;
}

function thresholdsTable(r: LoadResult): string {
  if (r.thresholds.length === 0) return '<p class="note">The scenario sets no thresholds.</p>';
  return htmlTable(
    ['', 'scope', 'threshold', 'observed'],
    r.thresholds.map((t) => [
      { html: t.ok ? 'pass' : 'FAIL', cls: t.ok ? 'pass' : 'fail' },
      t.scope,
      t.note ? `${t.expression} (${t.note})` : t.expression,
      t.observedText,
    ]),
    { numeric: 3 },
  );
}

function timeCharts(r: LoadResult, charts: ChartSpec[]): string {
  const ivs = intervals(r);
  if (ivs.length === 0)
    return '<p class="note">This result has no per-interval series (written by an older mcptap, or nothing completed): only totals below.</p>';
  // Seconds from the first interval, the clock time in the label: a wall-clock axis put the date
  // under its first tick, overlapping the second.
  const t0 = ivs[0]!.t;
  const x = { kind: 'number' as const, values: ivs.map((i) => (i.t - t0) / 1000), label: `seconds since ${new Date(t0).toISOString().slice(11, 19)} UTC` };
  const secs = ivs[0]!.ms / 1000;
  const per = secs === 1 ? 'per second' : `per ${secs}s interval`;
  const perSec = (n: number) => n / secs;
  const latency: ChartSpec = {
    id: 'chart-latency',
    x,
    yLabel: 'ms',
    yLog: true,
    series: (
      [
        ['p50', 50],
        ['p90', 90],
        ['p95', 95],
        ['p99', 99],
        ['max', 100],
      ] as const
    ).map(([label, p], i) => ({ label, values: ivs.map((iv) => iv.latencyMs[p]), color: PALETTE[i]! })),
  };
  const hasTarget = ivs.some((iv) => targetRateAt(r.phases, iv.t + iv.ms / 2) !== null);
  const rate: ChartSpec = {
    id: 'chart-rate',
    x,
    yLabel: 'per second',
    series: [
      ...(hasTarget ? [{ label: 'target', values: ivs.map((iv) => targetRateAt(r.phases, iv.t + iv.ms / 2)), color: PALETTE[7]!, dash: true }] : []),
      { label: 'iterations started', values: ivs.map((iv) => perSec(iv.counts.started)), color: PALETTE[0]! },
      { label: 'requests completed', values: ivs.map((iv) => perSec(iv.counts.requests)), color: PALETTE[2]! },
      { label: 'dropped', values: ivs.map((iv) => perSec(iv.counts.dropped)), color: PALETTE[3]! },
    ],
  };
  const layers = [
    ['transport', 'transport'],
    ['HTTP ≥ 400', 'http'],
    ['JSON-RPC error', 'jsonrpc'],
    ['isError', 'tool'],
    ['unanswered', 'unanswered'],
    ['violations', 'violations'],
    ['check failures', 'checkFailures'],
  ] as const;
  const errors: ChartSpec = {
    id: 'chart-errors',
    x,
    yLabel: 'per second',
    series: layers.map(([label, key], i) => ({ label, values: ivs.map((iv) => perSec(iv.counts[key])), color: PALETTE[(i + 3) % PALETTE.length]! })),
  };
  const inFlight: ChartSpec = {
    id: 'chart-inflight',
    x,
    yLabel: 'iterations',
    series: [{ label: 'most in flight', values: ivs.map((iv) => iv.counts.inFlight), color: PALETTE[4]! }],
  };
  charts.push(latency, rate, errors, inFlight);
  return `<div class="grid">${[
    chartBox(latency, LOAD_CHART_TITLES.latency, `Of the requests completing in each interval (${per}), log scale.`),
    chartBox(rate, LOAD_CHART_TITLES.rate, hasTarget ? 'Target: the rate the schedule asked for (open and replay phases).' : 'Closed model: no target rate.'),
    chartBox(errors, LOAD_CHART_TITLES.errors, 'Requests failing at each layer (a request can fail at two: HTTP 400 and a JSON-RPC error).'),
    chartBox(inFlight, LOAD_CHART_TITLES.inFlight, 'The most iterations running at once in each interval.'),
  ].join('')}</div>`;
}

function histogramChart(r: LoadResult, charts: ChartSpec[]): string {
  const bins = logBins(histogramOf(r.overall, 'latency'));
  if (bins.counts.length === 0) return '<p class="note">No request completed.</p>';
  const spec: ChartSpec = {
    id: 'chart-histogram',
    x: { kind: 'category', values: bins.counts.map((_, i) => i), label: 'latency (bin upper edge)', categories: bins.edgesUs.map(formatDurationUs) },
    yLabel: 'requests',
    series: [{ label: 'requests', values: bins.counts, color: PALETTE[0]!, bars: {} }],
  };
  charts.push(spec);
  return chartBox(spec, LOAD_CHART_TITLES.histogram, `All ${r.overall.latency.summary.count} requests, in log-spaced bins.`);
}

function groupsTable(r: LoadResult): string {
  const secs = r.wallMs / 1000;
  const row = (label: string, g: GroupResult): Cell[] => {
    const c = g.counters;
    const s = g.latency.summary;
    const pct = (n: number) => (c.requests ? `${((100 * n) / c.requests).toFixed(2)}%` : '-');
    return [
      label,
      c.requests,
      secs > 0 ? (c.requests / secs).toFixed(1) : '-',
      pct(c.errors),
      sum(c.transport),
      httpErrors(c),
      sum(c.jsonrpc),
      c.toolErrors,
      c.unanswered,
      sum(c.violations),
      c.checks ? `${c.checkFailures}/${c.checks}` : '-',
      formatDurationUs(s.p50),
      formatDurationUs(s.p95),
      formatDurationUs(s.p99),
      formatDurationUs(s.max),
      formatDurationUs(g.service.summary.p95),
    ];
  };
  const rows: Cell[][] = [row('all', r.overall)];
  for (const [k, g] of Object.entries(r.methods)) rows.push(row(`method ${k}`, g));
  for (const [k, g] of Object.entries(r.tools)) rows.push(row(`tool ${k}`, g));
  for (const [k, g] of Object.entries(r.steps)) rows.push(row(`step ${k}`, g));
  return htmlTable(
    [
      'scope',
      'requests',
      'rate/s',
      'errors',
      'transport',
      'HTTP ≥400',
      'JSON-RPC',
      'isError',
      'unanswered',
      'violations',
      'checks failed',
      'p50',
      'p95',
      'p99',
      'max',
      'service p95',
    ],
    rows,
  );
}

function codesTable(g: GroupResult): string {
  const c = g.counters;
  const rows: Cell[][] = [];
  for (const [k, n] of Object.entries(c.transport)) rows.push(['transport', k, n]);
  for (const [k, n] of Object.entries(c.http)) rows.push(['HTTP status', k, n]);
  for (const [k, n] of Object.entries(c.jsonrpc)) rows.push(['JSON-RPC code', k, n]);
  if (c.toolErrors) rows.push(['tool result', 'isError: true', c.toolErrors]);
  if (c.unanswered) rows.push(['no answer', 'unanswered', c.unanswered]);
  for (const [k, n] of Object.entries(c.violations)) rows.push(['protocol violation', k, n]);
  if (rows.length === 0) return '<p class="note">No status, code or violation to show.</p>';
  return htmlTable(['layer', 'code', 'count'], rows, { numeric: 2 });
}

function sseTable(r: LoadResult): string {
  const scopes: [string, GroupResult][] = [
    ['all', r.overall],
    ...Object.entries(r.methods).map(([k, g]) => [`method ${k}`, g] as [string, GroupResult]),
    ...Object.entries(r.tools).map(([k, g]) => [`tool ${k}`, g] as [string, GroupResult]),
  ];
  const rows: Cell[][] = [];
  for (const [label, g] of scopes) {
    if (!g.sse || g.sse.final.summary.count === 0) continue;
    const f = (s: { p50: number; p95: number; p99: number }) => `${formatDurationUs(s.p50)} / ${formatDurationUs(s.p95)} / ${formatDurationUs(s.p99)}`;
    const gap = g.sse.gap.summary;
    rows.push([
      label,
      g.sse.final.summary.count,
      f(g.sse.first_event.summary),
      gap.count ? `${f(gap)} (${gap.count})` : 'none (one event per stream)',
      f(g.sse.final.summary),
    ]);
  }
  if (rows.length === 0) return '<p class="note">No answer came as an SSE stream.</p>';
  return htmlTable(['scope', 'streams', 'first event p50 / p95 / p99', 'gaps between events', 'final response p50 / p95 / p99'], rows);
}

function phasesTable(r: LoadResult): string {
  const planned = new Map((r.plan?.phases ?? []).map((p) => [p.name, p.text]));
  const rows = r.phases.map((p): Cell[] => {
    const ranMs = (p.endUs - p.startUs) / 1000;
    const secs = (p.plannedDurationMs !== undefined ? (r.stopped ? Math.min(p.plannedDurationMs, ranMs) : p.plannedDurationMs) : ranMs) / 1000;
    const target =
      p.targetFromRate === undefined ? '-' : p.targetFromRate === p.targetToRate ? `${p.targetFromRate}/s` : `${p.targetFromRate} → ${p.targetToRate}/s`;
    return [
      p.name,
      planned.get(p.name) ?? p.kind,
      target,
      secs > 0 ? `${(p.started / secs).toFixed(1)}/s` : '-',
      p.scheduled,
      p.started,
      p.dropped,
      p.completed,
    ];
  });
  return htmlTable(['phase', 'as planned', 'target', 'achieved', 'scheduled', 'started', 'dropped', 'completed'], rows, { numeric: 2 });
}

function scenarioSection(r: LoadResult): string {
  const p = r.plan;
  const thresholds = r.thresholdSpecs.length
    ? htmlTable(
        ['scope', 'threshold'],
        r.thresholdSpecs.map((t) => [t.scope, t.expression]),
        { numeric: 2 },
      )
    : '';
  if (!p) return `<p class="note">This result does not carry its scenario (written by an older mcptap): name ${esc(r.scenario)}.</p>${thresholds}`;
  const facts: [string, string][] = [
    ['name', r.scenario],
    ...(p.source ? [['file', p.source] as [string, string]] : []),
    ['target', p.target],
    ['era', p.era],
    ['seed', String(p.seed)],
    ['mix', p.scripted ? 'scripted iteration' : p.mix],
    ...(p.from ? [['from recording', p.from] as [string, string]] : []),
    ...(p.data.length ? [['data', p.data.join(', ')] as [string, string]] : []),
  ];
  const steps = p.steps.length
    ? htmlTable(
        ['step', 'method', 'tool / prompt / resource', 'weight', 'progress', 'checks'],
        p.steps.map((s) => [s.name, s.method, s.target ?? '', s.weight, s.progress ? 'yes' : '', s.checks || '']),
        { numeric: 3 },
      )
    : '';
  return `<p class="meta">${facts.map(([k, v]) => `${esc(k)}: <b>${esc(v)}</b>`).join(' · ')}</p>${steps}${thresholds}`;
}
