/**
 * A replay report as text (a readable diff for terminals and CI logs), JSON and JUnit XML (a test
 * suite per method or tool, a test case per exchange, one more per slowdown).
 */
import type { Difference } from '../replay/compare.js';
import { countReport, groupName, pairVerdict, sessionOfRecorded, type ReplayedPair, type ReplayReport } from '../replay/replay-report.js';
import { lineSafe, formatId, formatUs, painter, table, terminalSafe, truncate, xmlText as xml, type Paint } from './format.js';
import { counted } from '../util/plural.js';

const MAX_VALUE_CHARS = 300;

/** How one exchange is named in every report: its row, JSON-RPC id, method and tool. */
export function exchangeLabel(p: ReplayedPair): string {
  return `exchange #${p.recorded.rowid} (id ${formatId(p.recorded.id)}) ${groupName(p.recorded)}`;
}

function value(v: unknown): string {
  return v === undefined ? '(absent)' : terminalSafe(truncate(JSON.stringify(v) ?? String(v), MAX_VALUE_CHARS));
}

function differenceLines(d: Difference, paint: Paint): string[] {
  const head = d.path !== undefined ? `${paint.bold(terminalSafe(d.path))}: ${d.message}` : terminalSafe(d.message);
  const lines = [`    ${head}`];
  if (d.kind === 'value' && (d.recorded !== undefined || d.replayed !== undefined)) {
    lines.push(`      ${paint.bad('- recorded:')} ${value(d.recorded)}`);
    lines.push(`      ${paint.good('+ replayed:')} ${value(d.replayed)}`);
  }
  return lines;
}

export function renderText(report: ReplayReport, opts: { color: boolean }): string {
  const paint = painter(opts.color);
  const ids = report.recordingIds.join(', ');
  const out: string[] = [`replay of ${report.file} (recording ${ids}) against ${terminalSafe(report.target)}`];
  for (const p of report.pairs) {
    if (p.differences.length === 0) continue;
    out.push('', `${paint.bad('✗')} ${terminalSafe(exchangeLabel(p))}`);
    for (const d of p.differences) out.push(...differenceLines(d, paint));
  }
  const u = report.unlisted;
  if (u !== undefined) {
    const groups = u.byGroup.map((g) => `${terminalSafe(g.group)} ${g.count}`).join(', ');
    out.push('', `${paint.bad('✗')} ${u.count} more different exchanges, not listed (only the first ${u.listed} are kept): ${groups}`);
  }
  for (const g of report.groupDifferences ?? []) out.push('', `${paint.bad('✗')} ${terminalSafe(g.group)}: slower`, `    ${g.difference.message}`);
  out.push(...checkLines(report, paint));
  if (report.latency && report.latency.length > 0) {
    out.push('', 'latency           recorded p50/p95 vs replayed p50/p95');
    const rows = report.latency.map((g) => [
      lineSafe(g.name),
      String(g.count),
      `${formatUs(g.recordedP50Us)} / ${formatUs(g.recordedP95Us)}`,
      `${formatUs(g.replayedP50Us)} / ${formatUs(g.replayedP95Us)}`,
    ]);
    out.push(table(['method / tool', 'count', 'recorded', 'replayed'], rows, [1]));
    out.push(...latencyNotes(report));
  }
  const streams = report.streams ?? [];
  const recordedAny = streams.some((g) => g.recordedCount > 0);
  const replayedAny = streams.some((g) => g.replayedCount > 0);
  // One side without any SSE (a stdio recording replayed over HTTP, say): nothing to set side by side.
  if (streams.length > 0 && !(recordedAny && replayedAny)) {
    const [has, lacks] = recordedAny ? ['the recording', 'the replay'] : ['the replay', 'the recording'];
    out.push('', `streamed answers (SSE): only ${has} has them (${lacks} is over stdio, or its answers were JSON): not compared`);
  } else if (streams.length > 0) {
    out.push('', 'streamed answers (SSE) recorded p50/p95 vs replayed p50/p95; first event, final from the request, gap and progress between events');
    const rows = streams.map((g) => [
      lineSafe(g.name),
      g.figure,
      `${g.recordedCount} / ${g.replayedCount}`,
      `${formatUs(g.recordedP50Us)} / ${formatUs(g.recordedP95Us)}`,
      `${formatUs(g.replayedP50Us)} / ${formatUs(g.replayedP95Us)}`,
    ]);
    out.push(table(['method / tool', 'figure', 'count', 'recorded', 'replayed'], rows, [2]));
  }
  const c = countReport(report);
  const sent = c.exchanges - c.notSent;
  const verdict =
    (c.differences > 0
      ? paint.bad(counted(c.differences, 'difference'))
      : (report.check?.failing ?? 0) > 0
        ? paint.bad(counted(report.check!.failing, 'check finding'))
        : c.notSent > 0
          ? paint.bad(`no differences in the ${sent} sent`)
          : paint.good('no differences')) + (report.stopped ? ' before the stop' : '');
  if (report.failure !== undefined) out.push('', `${paint.bad('target failed:')} ${terminalSafe(report.failure)}`);
  // The counts after the colon are of the exchanges sent and answered: the others are neither same nor different.
  const stopped = report.stopped;
  const planned = stopped?.planned ?? c.exchanges;
  const apart = [...(stopped ? [`stopped by ${stopped.signal}`] : []), ...(c.notSent > 0 ? [`${c.notSent} not sent`] : [])];
  const replayed = apart.length > 0 ? `${c.exchanges - c.notSent} of ${planned} exchanges replayed (${apart.join(', ')})` : `${c.exchanges} exchanges replayed`;
  out.push(
    '',
    `${replayed}: ${c.same} same, ${c.different} different, ${c.noResponse} without response` +
      `${c.notCompared > 0 ? `, ${c.notCompared} not compared (recorded without an answer)` : ''}` +
      `${c.slowdowns > 0 ? `, ${c.slowdowns} slower than allowed` : ''}; ${verdict}`,
  );
  return out.join('\n') + '\n';
}

/** `--check`: each rule that found something, its counts and first finding; then how many fail the replay. */
function checkLines(report: ReplayReport, paint: Paint): string[] {
  const check = report.check;
  if (check === undefined) return [];
  const out = ['', `check findings (${terminalSafe(check.file)}, failing at ${terminalSafe(check.failOn)}): ${counted(check.failing, 'failing finding')}`];
  for (const r of check.rules) {
    const n = r.counts.error + r.counts.warning + r.counts.note;
    const mark = r.failing > 0 ? paint.bad('✗') : '-';
    out.push(`${mark} ${r.id}: ${n} (${r.counts.error} error, ${r.counts.warning} warning, ${r.counts.note} note)`);
    if (r.first) out.push(`    ${lineSafe(r.first.message)}`);
  }
  return out;
}

/** Which calls the percentiles leave out, and the groups too small to judge. */
function latencyNotes(report: ReplayReport): string[] {
  const out: string[] = [];
  const partial = (report.latency ?? []).filter((g) => g.timed < g.count);
  // Nothing timed at all (the target failed): the failure says why, not this note.
  if (partial.length > 0 && (report.latency ?? []).some((g) => g.timed > 0)) {
    const list = partial.map((g) => `${lineSafe(g.name)} ${g.timed} of ${g.count}`).join(', ');
    out.push(`(percentiles of the calls timed on both sides: cancelled, unanswered and not-compared ones are left out of both: ${list})`);
  }
  const s = report.slowdown;
  if (s && report.unjudged && report.unjudged.length > 0) {
    const list = report.unjudged.map((g) => `${lineSafe(g.group)} ${g.timed}`).join(', ');
    out.push(`(slowdown not judged, fewer than ${s.minSamples} calls timed on both sides: ${list})`);
  }
  if (s && report.loopLagMaxUs !== undefined && report.loopLagMaxUs >= s.floorUs) {
    out.push(`(the machine was busy: mcptap's event loop ran up to ${formatUs(report.loopLagMaxUs)} late; each call's floor grew by the delay around it)`);
  }
  return out;
}

export function renderJson(report: ReplayReport): string {
  const counts = countReport(report);
  return (
    JSON.stringify(
      {
        file: report.file,
        recordings: report.recordingIds,
        target: report.target,
        counts,
        notSent: report.notSent ?? 0,
        ...(report.failure !== undefined ? { failure: report.failure } : {}),
        ...(report.stopped !== undefined ? { stopped: report.stopped } : {}),
        exchanges: report.pairs.map((p) => ({
          exchange: p.recorded.rowid,
          id: p.recorded.id,
          method: p.recorded.method,
          ...(p.recorded.target !== undefined ? { tool: p.recorded.target } : {}),
          recordedOutcome: p.recorded.outcome,
          replayedOutcome: p.replayed.outcome,
          ...(p.replayed.notSent ? { notSent: true } : {}),
          recordedLatencyUs: p.recorded.latencyUs ?? null,
          replayedLatencyUs: p.replayed.latencyUs ?? null,
          differences: p.differences,
        })),
        latency: report.latency ?? [],
        streams: report.streams ?? [],
        ...(report.slowdown !== undefined ? { slowdown: report.slowdown, unjudged: report.unjudged ?? [], loopLagMaxUs: report.loopLagMaxUs ?? null } : {}),
        groupDifferences: report.groupDifferences ?? [],
        ...(report.check !== undefined ? { check: report.check } : {}),
      },
      null,
      2,
    ) + '\n'
  );
}

/**
 * Test case names that a re-record of the same client keeps, so CI keeps each case's history:
 * `session 1 tools/call search #2`, the second search of the first session (pairs in step order).
 */
export function caseNames(pairs: readonly ReplayedPair[]): string[] {
  const sessions = new Map<string, number>();
  const seen = new Map<string, number>();
  return pairs.map((p) => {
    const key = sessionOfRecorded(p.recorded);
    let n = sessions.get(key);
    if (n === undefined) sessions.set(key, (n = sessions.size + 1));
    const group = groupName(p.recorded);
    const k = (seen.get(`${n} ${group}`) ?? 0) + 1;
    seen.set(`${n} ${group}`, k);
    return `session ${n} ${group} #${k}`;
  });
}

/** JUnit XML as CI servers read it (Jenkins, GitLab, GitHub test reporters). */
export function renderJUnit(report: ReplayReport): string {
  const suites = new Map<string, string[]>();
  const failures = new Map<string, number>();
  const errors = new Map<string, number>();
  const skipped = new Map<string, number>();
  const time = new Map<string, number>();
  const bump = (m: Map<string, number>, suite: string): void => void m.set(suite, (m.get(suite) ?? 0) + 1);
  const add = (suite: string, testcase: string, result: 'passed' | 'failed' | 'error' | 'skipped', seconds: number): void => {
    if (!suites.has(suite)) suites.set(suite, []);
    suites.get(suite)!.push(testcase);
    if (result === 'failed') bump(failures, suite);
    if (result === 'error') bump(errors, suite);
    if (result === 'skipped') bump(skipped, suite);
    time.set(suite, (time.get(suite) ?? 0) + seconds);
  };
  const names = caseNames(report.pairs);
  for (const [i, p] of report.pairs.entries()) {
    const suite = groupName(p.recorded);
    const seconds = (p.replayed.latencyUs ?? 0) / 1e6;
    const name = names[i]!;
    const attrs = `classname="${xml(suite)}" name="${xml(name)}" time="${seconds.toFixed(6)}"`;
    const verdict = pairVerdict(p.differences.length, p.recorded.answered !== false, p.replayed);
    // JUnit's error is a test that could not run: the target had failed before it was sent.
    if (verdict === 'notSent')
      add(
        suite,
        `    <testcase ${attrs}>\n      <error message="${xml(p.replayed.transportError ?? 'not sent')}" type="not_sent"/>\n    </testcase>`,
        'error',
        seconds,
      );
    else if (verdict === 'notCompared')
      add(suite, `    <testcase ${attrs}>\n      <skipped message="recorded without an answer: nothing to compare"/>\n    </testcase>`, 'skipped', seconds);
    else if (verdict === 'same') add(suite, `    <testcase ${attrs}/>`, 'passed', seconds);
    else {
      const first = p.differences[0]!;
      const message = first.path !== undefined ? `${first.path}: ${first.message}` : first.message;
      const body = p.differences.map((d) => plainDifference(d)).join('\n');
      add(
        suite,
        `    <testcase ${attrs}>\n      <failure message="${xml(message)}" type="${first.kind}">${xml(body)}</failure>\n    </testcase>`,
        'failed',
        seconds,
      );
    }
  }
  // A stopped replay never reads as passed: the exchanges it did not replay are one erroring case.
  if (report.stopped !== undefined) {
    const left = report.stopped.planned - countReport(report).exchanges;
    const message = `stopped by ${report.stopped.signal}: ${left} of ${report.stopped.planned} exchanges not replayed`;
    add(
      'mcptap replay',
      `    <testcase classname="mcptap replay" name="stopped" time="0">\n      <error message="${xml(message)}" type="stopped"/>\n    </testcase>`,
      'error',
      0,
    );
  }
  for (const g of report.groupDifferences ?? []) {
    add(
      g.group,
      `    <testcase classname="${xml(g.group)}" name="latency" time="0">\n      <failure message="${xml(g.difference.message)}" type="slowdown"/>\n    </testcase>`,
      'failed',
      0,
    );
  }
  // `--check`: a case per rule that found something, failing when its findings are at the fail level.
  for (const r of report.check?.rules ?? []) {
    const message = `${r.failing} failing of ${r.counts.error + r.counts.warning + r.counts.note}: ${r.first?.message ?? ''}`;
    const failure = r.failing > 0 ? `\n      <failure message="${xml(message)}" type="check"/>\n    ` : '';
    add('mcptap check', `    <testcase classname="mcptap check" name="${xml(r.id)}" time="0">${failure}</testcase>`, r.failing > 0 ? 'failed' : 'passed', 0);
  }
  const total = [...suites.values()].reduce((n, s) => n + s.length, 0);
  const sum = (m: Map<string, number>): number => [...m.values()].reduce((n, f) => n + f, 0);
  const [failed, errs, skips] = [sum(failures), sum(errors), sum(skipped)];
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="mcptap replay" tests="${total}" failures="${failed}"${errs > 0 ? ` errors="${errs}"` : ''}${skips > 0 ? ` skipped="${skips}"` : ''}>`,
    ...[...suites].map(
      ([suite, cases]) =>
        `  <testsuite name="${xml(suite)}" tests="${cases.length}" failures="${failures.get(suite) ?? 0}" errors="${errors.get(suite) ?? 0}" skipped="${skipped.get(suite) ?? 0}" time="${time.get(suite)!.toFixed(6)}">\n${cases.join('\n')}\n  </testsuite>`,
    ),
    '</testsuites>',
  ];
  return lines.join('\n') + '\n';
}

function plainDifference(d: Difference): string {
  const head = d.path !== undefined ? `${d.path}: ${d.message}` : d.message;
  if (d.kind !== 'value' || (d.recorded === undefined && d.replayed === undefined)) return head;
  return `${head}\n  recorded: ${JSON.stringify(d.recorded) ?? '(absent)'}\n  replayed: ${JSON.stringify(d.replayed) ?? '(absent)'}`;
}
