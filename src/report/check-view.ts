/**
 * What every `mcptap check` report shares: the input they render and how a finding's place reads
 * (`frame 12 id 3 tools/call search`), so the text, JSON, JUnit and SARIF outputs name it alike.
 */
import type { CheckResult } from '../check/check-sink.js';
import type { Finding, RuleInfo } from '../check/finding.js';
import { failsOn, type FailOn } from '../check/run-check.js';
import { formatId } from './format.js';

export interface CheckReportInput {
  /** The recording file, as given. */
  file: string;
  recordingId: number;
  result: CheckResult;
  /** Findings at the `--fail-on` level (the verdict). */
  failing: number;
  /** `--fail-on` in effect, for the summary line. */
  failOn: string;
  /** `--fail-on` parsed: which findings are failures (JUnit marks only those). */
  failOnSpec: FailOn;
}

/** Whether this finding is one the verdict counts. */
export function isFailing(input: CheckReportInput, f: Finding): boolean {
  return failsOn(input.failOnSpec, f.ruleId, f.severity);
}

/** The docs page of every rule; its section's anchor is {@link ruleAnchor}. */
export const CHECK_DOCS_URL = 'https://github.com/OWNER/mcptap/blob/main/docs/check.md';

/** The anchor of a rule's section in docs/check.md (`protocol/pending` -> `protocol-pending`). */
export function ruleAnchor(ruleId: string): string {
  return ruleId.replace(/[^a-z0-9-]/gi, '-').toLowerCase();
}

export function ruleHelpUri(rule: Pick<RuleInfo, 'id'>): string {
  return `${CHECK_DOCS_URL}#${ruleAnchor(rule.id)}`;
}

/** Where a finding is, in words: row (or frame), JSON-RPC id, method, tool, side. Empty for whole-recording findings. */
export function placeText(f: Finding): string {
  const w = f.where;
  const parts: string[] = [];
  if (w.row !== undefined) parts.push(`row #${w.row}`);
  else if (w.frameSeq !== undefined) parts.push(`frame ${w.frameSeq}`);
  if (w.jsonRpcId !== undefined) parts.push(`id ${formatId(w.jsonRpcId)}`);
  if (w.method !== undefined) parts.push(w.method);
  if (w.tool !== undefined) parts.push(w.tool);
  if (w.subject !== undefined && w.subject.name !== w.tool) parts.push(`${w.subject.kind} ${w.subject.name}`);
  if (w.side !== undefined) parts.push(`from ${w.side}`);
  return parts.join(' ');
}

/** The finding's detail: pointer, expected vs found, schema rule and version. */
export function detailText(f: Finding): string {
  const parts: string[] = [];
  if (f.pointer !== undefined) parts.push(`at ${f.pointer || '/'}`);
  if (f.expected !== undefined || f.found !== undefined) parts.push(`expected ${f.expected ?? '?'}, found ${f.found ?? '?'}`);
  if (f.schemaRule !== undefined) parts.push(`schema rule ${f.schemaRule}`);
  if (f.specVersion !== undefined) parts.push(`spec ${f.specVersion}`);
  return parts.join('; ');
}

/** Total findings (kept and omitted). */
export function findingTotal(r: CheckResult): number {
  return r.totals.error + r.totals.warning + r.totals.note;
}
