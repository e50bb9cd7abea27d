/**
 * The end-of-run summary as text: phases (target vs achieved rate, dropped), a table per scope
 * (latency from the intended start; errors by layer), error codes, SSE timings, thresholds. Pure.
 */
import { formatDurationUs } from '../../data-file/duration.js';
import type { EncodedHistogram, GroupResult, LoadResult } from '../results/load-result.js';
import { httpErrors, sum } from '../results/group-stats.js';
import { renderCancel } from './cancel-report.js';
import { expectedNote, renderChecks, toleratedChecksText } from './check-report.js';
import { counted } from '../../util/plural.js';

export function renderSummary(r: LoadResult): string {
  const out: string[] = [];
  const shards = r.shards.length > 1 || r.shards[0]!.count > 1 ? ` [shards ${r.shards.map((s) => `${s.index}/${s.count}`).join(', ')}]` : '';
  out.push(`scenario ${r.scenario}: ${r.target} (${r.driver}, ${r.era} era)${shards}, ${(r.wallMs / 1000).toFixed(1)}s`);
  if (r.stopped) out.push(`STOPPED EARLY (${r.stopped}): the run is incomplete; the figures and thresholds below cover only what ran`);
  out.push('', ...renderPhases(r), '', ...renderGroups(r), ...renderCodes(r.overall), ...renderSse(r.overall), ...renderCancel(r.cancel), ...renderListen(r));
  out.push(...renderChecks(r.checks));
  if (r.scriptErrors) out.push(`scripted iterations that threw: ${r.scriptErrors}`);
  out.push('', ...renderThresholds(r));
  return out.join('\n') + '\n';
}

function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows.map(
    (r) =>
      '  ' +
      r
        .map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!)))
        .join('  ')
        .trimEnd(),
  );
}

function renderPhases(r: LoadResult): string[] {
  const rows = [['phase', 'model', 'target', 'achieved', 'scheduled', 'started', 'dropped', 'completed']];
  for (const p of r.phases) {
    const ranMs = (p.endUs - p.startUs) / 1000;
    // The planned length (in-flight iterations finishing past it do not lower the rate), unless the run was stopped first.
    const secs = (p.plannedDurationMs !== undefined ? (r.stopped ? Math.min(p.plannedDurationMs, ranMs) : p.plannedDurationMs) : ranMs) / 1000;
    const target =
      p.kind === 'replay'
        ? `${p.speed ?? 1}x recorded (avg ${fmtRate(p.targetFromRate ?? 0)}/s)`
        : p.kind === 'open'
          ? p.targetFromRate === p.targetToRate
            ? `${fmtRate(p.targetFromRate!)}/s`
            : `${fmtRate(p.targetFromRate!)}->${fmtRate(p.targetToRate!)}/s (avg ${fmtRate((p.targetFromRate! + p.targetToRate!) / 2)})`
          : '-';
    const achieved = secs > 0 ? `${fmtRate(p.started / secs)}/s` : '-';
    rows.push([p.name, p.kind, target, achieved, String(p.scheduled), String(p.started), String(p.dropped), String(p.completed)]);
  }
  return ['phases', ...table(rows)];
}

function fmtRate(x: number): string {
  return x >= 100 ? x.toFixed(0) : x.toFixed(1);
}

function groupRow(label: string, g: GroupResult): string[] {
  const c = g.counters;
  const s = g.latency.summary;
  return [
    label,
    String(c.requests),
    String(c.ok),
    formatDurationUs(s.p50),
    formatDurationUs(s.p90),
    formatDurationUs(s.p99),
    formatDurationUs(s.max),
    String(sum(c.transport)),
    String(httpErrors(c)),
    String(sum(c.jsonrpc)),
    String(c.toolErrors),
    String(sum(c.violations)),
    c.checks ? `${c.checkFailures}/${c.checks}` : '-',
  ];
}

function renderGroups(r: LoadResult): string[] {
  const rows = [['scope', 'requests', 'ok', 'p50', 'p90', 'p99', 'max', 'transport', 'http>=400', 'jsonrpc', 'tool', 'violations', 'checks failed']];
  rows.push(groupRow('all', r.overall));
  for (const [k, g] of Object.entries(r.methods)) rows.push(groupRow(`method ${k}`, g));
  for (const [k, g] of Object.entries(r.tools)) rows.push(groupRow(`tool ${k}`, g));
  if (Object.keys(r.steps).length > 1) for (const [k, g] of Object.entries(r.steps)) rows.push(groupRow(`step ${k}`, g));
  return ['requests (latency from the intended start)', ...table(rows), ...cancelledNote(r), ...expectedNote(r.steps)];
}

/** Cancelled calls are left out of the table (their timing is the experiment's): say how many, and where they are. */
function cancelledNote(r: LoadResult): string[] {
  const groups = Object.entries(r.cancel ?? {}).filter(([, g]) => g.cancelled > 0);
  if (groups.length === 0) return [];
  const n = groups.reduce((a, [, g]) => a + g.cancelled, 0);
  return [`  + ${counted(n, 'cancelled call')} (${groups.map(([k, g]) => `${k} ${g.cancelled}`).join(', ')}): not above, see cancellation`];
}

function renderCodes(g: GroupResult): string[] {
  const c = g.counters;
  const parts: string[] = [];
  const list = (o: Record<string, number>) =>
    Object.entries(o)
      .map(([k, n]) => `${k} x${n}`)
      .join(', ');
  const httpNon2xx = Object.fromEntries(Object.entries(c.http).filter(([k]) => Number(k) >= 300));
  if (Object.keys(httpNon2xx).length) parts.push(`http ${list(httpNon2xx)}`);
  if (Object.keys(c.jsonrpc).length) parts.push(`jsonrpc ${list(c.jsonrpc)}`);
  if (Object.keys(c.transport).length) parts.push(`transport ${list(c.transport)}`);
  if (Object.keys(c.violations).length) parts.push(`violations ${list(c.violations)}`);
  return parts.length ? ['', `codes: ${parts.join(' | ')}`] : [];
}

function renderSse(g: GroupResult): string[] {
  const sse = g.sse;
  if (!sse || sse.final.summary.count === 0) return [];
  const f = (x: { summary: { p50: number; p99: number } }) => `p50 ${formatDurationUs(x.summary.p50)} p99 ${formatDurationUs(x.summary.p99)}`;
  // A series with no values (one event per stream, no progress) says so: "p50 0us" would read as instant.
  const opt = (x: EncodedHistogram | undefined, none: string) => (!x || x.summary.count === 0 ? none : `${f(x)} max ${formatDurationUs(x.summary.max)}`);
  const headers = sse.headers && sse.headers.summary.count > 0 ? `headers ${f(sse.headers)}; ` : '';
  return [
    `sse (${sse.final.summary.count} streams): ${headers}first event ${f(sse.first_event)}; final response ${f(sse.final)}; end of stream after it ${opt(sse.tail, 'n/a')}`,
    `  gaps ${opt(sse.gap, 'none (one event per stream)')}; progress every ${opt(sse.progress, 'n/a (no progress)')}`,
  ];
}

function renderListen(r: LoadResult): string[] {
  const l = r.listen;
  if (!l) return [];
  const d = l.delay.summary;
  const delay = d.count === 0 ? 'n/a (no firing stamp)' : `p50 ${formatDurationUs(d.p50)} p99 ${formatDurationUs(d.p99)} max ${formatDurationUs(d.max)}`;
  return [
    `listen (${l.streams} streams, ${l.held} held to the phase end, ${l.failed} failed, at most ${l.maxOpen} open): ` +
      `${l.notifications} notifications (${l.perSecond.toFixed(1)}/s), ${l.perStream.min}..${l.perStream.max} per stream, ${l.duplicates} duplicates`,
    `  delivery delay ${delay}`,
  ];
}

function renderThresholds(r: LoadResult): string[] {
  if (r.thresholds.length === 0) return ['no thresholds'];
  const failed = r.thresholds.filter((t) => !t.ok).length;
  const lines = r.thresholds.map(
    (t) => `  ${t.ok ? 'pass' : 'FAIL'}  ${t.scope}: ${t.expression}  (observed ${t.observedText})${t.note ? `  [${t.note}]` : ''}`,
  );
  const verdict = failed === 0 ? `all passed${toleratedChecksText(r.overall.counters.checkFailures)}` : `${failed} of ${r.thresholds.length} FAILED`;
  return [`thresholds: ${verdict}`, ...lines];
}
