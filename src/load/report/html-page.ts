/**
 * The shell of mcptap's HTML reports: one self-contained page (styles, the charting library, the
 * chart data and the script that draws it all inline) that makes no network request, enforced by
 * its Content-Security-Policy (no source but its own two scripts, by hash). Every text from a
 * result goes through {@link esc}; chart data travels as a JSON block with `<` escaped, and chart
 * labels are drawn on canvas or set as text, so a tool named `<script>` stays text. Pure.
 */
import { createHash } from 'node:crypto';

/** The charting library's minified browser build and stylesheet, inlined into every report. */
export interface ChartLibrary {
  js: string;
  css: string;
  /** Name and version, for the page's footer. */
  name: string;
}

export interface ChartSeries {
  label: string;
  values: (number | null)[];
  color: string;
  /** Bars instead of a line; `align` -1/1 puts two bar series side by side. */
  bars?: { align?: -1 | 0 | 1 };
  dash?: boolean;
}

export interface ChartSpec {
  id: string;
  /** `time`: epoch seconds; `number`: a plain axis (seconds since start); `category`: 0..n-1 named by `categories`. */
  x: { kind: 'time' | 'number' | 'category'; values: number[]; label: string; categories?: string[] };
  yLabel: string;
  /** A log-scaled y axis (latency spread over orders of magnitude). */
  yLog?: boolean;
  series: ChartSeries[];
}

export const PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];

export function esc(s: string | number): string {
  return String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A table; cells are escaped text, or `{ html }` for markup built by the caller from escaped parts. */
export type Cell = string | number | { html: string; cls?: string };

export function htmlTable(header: readonly string[], rows: readonly (readonly Cell[])[], opts: { numeric?: number; cls?: string } = {}): string {
  const from = opts.numeric ?? 1;
  const cell = (c: Cell, i: number, tag: 'td' | 'th') => {
    const cls = [i >= from ? 'num' : '', typeof c === 'object' ? (c.cls ?? '') : ''].filter(Boolean).join(' ');
    return `<${tag}${cls ? ` class="${cls}"` : ''}>${typeof c === 'object' ? c.html : esc(c)}</${tag}>`;
  };
  return (
    `<table${opts.cls ? ` class="${opts.cls}"` : ''}><thead><tr>${header.map((h, i) => cell(h, i, 'th')).join('')}</tr></thead>` +
    `<tbody>${rows.map((r) => `<tr>${r.map((c, i) => cell(c, i, 'td')).join('')}</tr>`).join('')}</tbody></table>`
  );
}

/** A chart's place in the page: its title (a heading) and the element the script draws into. */
export function chartBox(spec: ChartSpec, title: string, note = ''): string {
  return `<figure class="chart"><h3>${esc(title)}</h3><div class="plot" id="${esc(spec.id)}" data-chart="${esc(spec.id)}"></div>${note ? `<figcaption>${esc(note)}</figcaption>` : ''}</figure>`;
}

/** JSON safe inside a `<script>` block: no `<` (so no `</script>` or `<!--`), no line separators. */
export function scriptJson(v: unknown): string {
  return JSON.stringify(v)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

const sha256 = (s: string) => `'sha256-${createHash('sha256').update(s, 'utf8').digest('base64')}'`;

export function htmlPage(o: { title: string; body: string; charts: ChartSpec[]; lib: ChartLibrary }): string {
  const lib = o.lib.js.replace(/<\/(script)/gi, '<\\/$1');
  const scripts = [lib, DRAW];
  const csp = [
    "default-src 'none'",
    `script-src ${scripts.map(sha256).join(' ')}`,
    "style-src 'unsafe-inline'",
    'img-src data:',
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${esc(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>${esc(o.title)}</title>
<style>${o.lib.css.replace(/<\//g, '<\\/')}</style>
<style>${STYLE}</style>
</head>
<body>
${o.body}
<footer>Made by mcptap; charts by ${esc(o.lib.name)}, inlined: this file works offline.</footer>
<script type="application/json" id="mcptap-charts">${scriptJson(o.charts)}</script>
<script>${lib}</script>
<script>${DRAW}</script>
</body>
</html>
`;
}

const STYLE = `
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0 auto; padding: 16px 24px; max-width: 1200px; color: #222; background: #fff; }
h1 { font-size: 22px; margin: 8px 0; } h2 { font-size: 18px; margin: 28px 0 8px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
h3 { font-size: 15px; margin: 4px 0 6px; }
.meta { color: #555; } .meta b { color: #222; }
.badge { display: inline-block; padding: 2px 10px; border-radius: 10px; font-weight: 600; color: #fff; }
.pass, .ok { color: #17803d; } .fail, .regressed { color: #c62828; font-weight: 600; } .improved { color: #1f5fbf; } .none { color: #888; }
.badge.pass { background: #17803d; color: #fff; } .badge.fail { background: #c62828; color: #fff; } .badge.warn { background: #b26a00; color: #fff; }
table { border-collapse: collapse; margin: 6px 0 12px; font-size: 13px; }
th, td { padding: 3px 8px; border-bottom: 1px solid #eee; text-align: left; vertical-align: top; }
th { background: #f6f6f6; } td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(520px, 1fr)); gap: 12px 24px; }
figure.chart { margin: 0; } .plot { min-height: 260px; } figcaption { color: #666; font-size: 12px; }
.note { color: #666; } .warnbox { background: #fff4e0; border-left: 4px solid #b26a00; padding: 6px 10px; }
footer { margin-top: 32px; color: #888; font-size: 12px; }
`;

/** Draws every chart of the JSON block with uPlot; pure DOM, no request. */
const DRAW = `(function () {
  var specs = JSON.parse(document.getElementById('mcptap-charts').textContent);
  function fmt(v) { return v == null ? '-' : Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 1 ? v.toFixed(1) : v.toFixed(3); }
  specs.forEach(function (spec) {
    var el = document.getElementById(spec.id);
    if (!el) return;
    var cats = spec.x.categories || [];
    var xSeries = { label: spec.x.label };
    if (spec.x.kind === 'category') xSeries.value = function (u, v) { return v == null ? '-' : (cats[Math.round(v)] || ''); };
    var series = [xSeries].concat(spec.series.map(function (s) {
      var o = { label: s.label, stroke: s.color, width: 2, value: function (u, v) { return fmt(v); }, spanGaps: false };
      if (s.dash) o.dash = [6, 4];
      if (s.bars) { o.fill = s.color + 'cc'; o.width = 1; o.paths = uPlot.paths.bars({ size: [s.bars.align ? 0.4 : 0.8, 60], align: s.bars.align || 0 }); o.points = { show: false }; }
      return o;
    }));
    var xAxis = { label: spec.x.label };
    var scales = { x: { time: spec.x.kind === 'time' }, y: spec.yLog ? { distr: 3 } : { range: function (u, min, max) { return [0, max > 0 ? max * 1.05 : 1]; } } };
    var width = Math.max(320, Math.floor(el.getBoundingClientRect().width) || 560);
    var pad = null;
    if (spec.x.kind === 'category') {
      var short = cats.map(function (c) { return c.length > 22 ? c.slice(0, 21) + '…' : c; });
      var longest = short.reduce(function (m, c) { return Math.max(m, c.length); }, 0);
      var room = Math.max(1, Math.floor((width - 80) / (longest > 8 ? 24 : 7 * longest + 16)));
      xAxis.values = function (u, splits) { return splits.map(function (i) { return Number.isInteger(i) ? (short[i] || '') : ''; }); };
      xAxis.splits = function () { var step = Math.max(1, Math.ceil(cats.length / room)); var out = []; for (var i = 0; i < cats.length; i += step) out.push(i); return out; };
      if (longest > 8) { xAxis.rotate = -35; xAxis.size = 40 + longest * 5; }
      // Rotated labels run right of their tick: room on the right for the last one (else clipped).
      var last = short[cats.length - 1] || '';
      if (longest > 8) pad = Math.max(0, Math.ceil(last.length * 7 * Math.cos(Math.PI * 35 / 180) - (width - 80) / cats.length / 2) + 8);
      scales.x.range = function () { return [-0.5, cats.length - 0.5]; };
    }
    new uPlot({ width: width, height: 240 + (xAxis.size ? xAxis.size - 50 : 0), series: series, scales: scales, axes: [xAxis, { label: spec.yLabel, size: 60 }], legend: { live: true }, padding: [null, pad, null, null] },
      [spec.x.values].concat(spec.series.map(function (s) { return s.values; })), el);
    el.setAttribute('data-drawn', 'true');
  });
  document.body.setAttribute('data-charts-drawn', String(specs.length));
})();`;
