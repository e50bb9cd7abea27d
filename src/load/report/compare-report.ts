/**
 * `mcptap compare` as text: who was compared with what and by which tolerances, a row per scope
 * (the run, each method, each tool) with baseline → candidate per metric, a `!` on every cell past
 * its tolerance (`~` past it within sampling noise), and the verdict. Pure.
 */
import type { CompareMetric, Comparison, MetricCell, Tolerances, Verdict } from '../results/compare-results.js';
import { lineSafe, formatUs, painter, table, terminalSafe, type Paint } from '../../report/format.js';

/** What a `~` after a percentile means, under the table (text and HTML). */
export const WITHIN_NOISE_NOTE = "~ past its tolerance, but within the percentile's sampling noise at these counts (99% bounds): ok; more samples narrow it";

export function renderComparison(c: Comparison, opts: { color: boolean }): string {
  const paint = painter(opts.color);
  const out = [
    `compare ${terminalSafe(c.baseline.label)} (baseline) with ${terminalSafe(c.candidate.label)} (candidate)`,
    ...[c.baseline, c.candidate].map(
      (r) =>
        `  ${terminalSafe(r.label)}: scenario ${terminalSafe(r.scenario)} against ${terminalSafe(r.target)}, ${r.startedAt}, ${(r.wallMs / 1000).toFixed(1)}s`,
    ),
    `  tolerances: ${describeTolerances(c.tolerances)}; no verdict under ${c.minSamples} samples on either side`,
    '',
  ];
  const rows = c.rows.map((r) => [
    lineSafe(r.scope),
    `${r.baselineCount}/${r.candidateCount}`,
    ...(['p50', 'p95', 'p99', 'errors', 'rate'] as const).map((m) => cellText(r.cells.find((x) => x.metric === m)!)),
    verdictText(r.verdict, paint),
  ]);
  out.push(table(['scope', 'n', 'p50', 'p95', 'p99', 'errors', 'rate/s', 'verdict'], rows, [1, 2, 3, 4, 5, 6]));
  if (c.rows.some((r) => r.cells.some((x) => x.withinNoise))) out.push(`  ${WITHIN_NOISE_NOTE}`);
  out.push('');
  if (c.regressions.length === 0) {
    const none = c.rows.filter((r) => r.verdict === 'no_verdict').length;
    out.push(paint.good(`no regression in ${c.rows.length - none} scopes compared`) + (none ? ` (${none} with too few samples to say)` : ''));
  } else {
    out.push(paint.bad(`regressed: ${c.regressions.length} of ${c.rows.length} scopes`));
    for (const r of c.rows.filter((x) => x.verdict === 'regressed')) {
      const why = r.cells
        .filter((x) => x.verdict === 'regressed')
        .map((x) => `${x.metric} ${valueText(x.metric, x.baseline)} → ${valueText(x.metric, x.candidate)}`);
      out.push(`  ${terminalSafe(r.scope)}: ${why.join(', ')}`);
    }
  }
  return out.join('\n') + '\n';
}

function describeTolerances(t: Tolerances): string {
  const parts: string[] = [];
  for (const m of ['p50', 'p95', 'p99'] as const) {
    const x = t[m];
    if (!x) continue;
    const bits = [x.relative !== undefined ? `+${pct(x.relative)}` : '', x.absolute !== undefined ? `+${formatUs(x.absolute)}` : ''].filter(Boolean);
    parts.push(`${m} ${bits.join(' and ')}`);
  }
  if (t.errors?.absolute !== undefined) parts.push(`errors +${pct(t.errors.absolute)} points (and beyond chance)`);
  if (t.rate?.relative !== undefined) parts.push(`rate -${pct(t.rate.relative)}`);
  return parts.length ? parts.join(', ') : 'none';
}

export const pct = (x: number) => `${+(x * 100).toFixed(2)}%`;

export function valueText(m: CompareMetric, v: number): string {
  if (m === 'errors') return pct(v);
  if (m === 'rate') return v.toFixed(1);
  return formatUs(v);
}

function cellText(cell: MetricCell): string {
  const change = cell.metric === 'errors' || cell.baseline === 0 ? '' : ` ${signed((cell.candidate - cell.baseline) / cell.baseline)}`;
  const mark = cell.verdict === 'regressed' ? ' !' : cell.withinNoise ? ' ~' : '';
  return `${valueText(cell.metric, cell.baseline)} → ${valueText(cell.metric, cell.candidate)}${change}${mark}`;
}

export const signed = (x: number) => `${x >= 0 ? '+' : '-'}${Math.round(Math.abs(x) * 100)}%`;

function verdictText(v: Verdict, paint: Paint): string {
  if (v === 'regressed') return paint.bad('REGRESSED');
  if (v === 'improved') return paint.good('improved');
  if (v === 'no_verdict') return paint.dim('too few samples');
  return 'ok';
}
