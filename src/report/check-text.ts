/** `mcptap check`'s text report: a verdict line, then each rule with findings, its counts and first examples. */
import { detailText, findingTotal, placeText, type CheckReportInput } from './check-view.js';
import { lineSafe } from './format.js';

export function renderCheckText(input: CheckReportInput): string {
  const { result } = input;
  const t = result.totals;
  const verdict = input.failing > 0 ? `FAILED: ${input.failing} finding(s) at --fail-on ${input.failOn}` : `passed (--fail-on ${input.failOn})`;
  const lines = [
    `mcptap check ${input.file} (recording ${input.recordingId}): ${findingTotal(result)} finding(s): ${t.error} error, ${t.warning} warning, ${t.note} note; ${verdict}`,
  ];
  let quiet = 0;
  for (const rule of result.rules) {
    const c = result.counts[rule.id];
    const n = c ? c.error + c.warning + c.note : 0;
    if (n === 0) {
      if (rule.enabled && result.unjudged[rule.id] === undefined) quiet++;
      continue;
    }
    lines.push('', `${rule.id} (${rule.severity}): ${n} finding(s) - ${rule.title}`);
    const examples = result.examples[rule.id] ?? [];
    for (const f of examples) {
      const place = placeText(f);
      const detail = detailText(f);
      lines.push(`  - ${lineSafe(f.message)}`);
      if (place || detail) lines.push(`    ${lineSafe([place, detail].filter(Boolean).join(': '))}`);
    }
    if (n > examples.length) lines.push(`  ... ${n - examples.length} more (all in --json, --junit, --sarif)`);
  }
  const off = result.rules.filter((r) => !r.enabled).length;
  lines.push('', `${quiet} rule(s) found nothing${off ? `; ${off} off` : ''}.`);
  // Rules that could not run are named, grouped by why, so a green run does not read as judged.
  const why = new Map<string, string[]>();
  for (const [id, reason] of Object.entries(result.unjudged)) why.set(reason, [...(why.get(reason) ?? []), id]);
  for (const [reason, ids] of why) lines.push(`${ids.length} rule(s) not judged (${reason}): ${ids.join(', ')}.`);
  if (result.omitted > 0) lines.push(`${result.omitted} more finding(s) were counted but not kept for the file outputs (cap ${result.findings.length}).`);
  if (result.checkerErrors > 0) lines.push(`${result.checkerErrors} checker failure(s): a rule crashed; its findings may be missing.`);
  return `${lines.join('\n')}\n`;
}
