/**
 * Checks on results: each failed check is counted (`check_failures`), never turned into an error
 * of another layer, so a scenario can expect errors without hiding them. Each check's verdict
 * carries what it expected and what it got, for the report.
 */
import type { CallRecord } from '../drivers/driver.js';
import { checkPathText, valueAt } from '../../data-file/check-path.js';
import type { CheckKind, CheckSpec } from '../scenario/scenario.js';
import type { CheckVerdict } from '../results/sample.js';

export function applyChecks(checks: readonly CheckSpec[], rec: CallRecord): void {
  for (const c of checks) recordVerdict(rec, judge(c, rec));
}

/** Adds one verdict to the call's sample. */
export function recordVerdict(rec: CallRecord, v: CheckVerdict): void {
  rec.sample.checks++;
  if (!v.ok) rec.sample.checkFailures++;
  (rec.sample.checkVerdicts ??= []).push(v);
}

/** Longest value text kept for a report. */
const CLIP = 160;
const clip = (s: string): string => (s.length > CLIP ? `${s.slice(0, CLIP)}...` : s);
const json = (v: unknown): string => clip(JSON.stringify(v) ?? 'undefined');

export function judge(c: CheckSpec, rec: CallRecord): CheckVerdict {
  const res = rec.response;
  const verdict = (ok: boolean, expected: string, got: () => string): CheckVerdict => (ok ? { name: c.name, ok } : { name: c.name, ok, expected, got: got() });
  switch (c.kind) {
    case 'isError':
      return verdict(res?.result !== undefined && rec.sample.isError === c.expect, `isError: ${c.expect}`, () => answerText(rec));
    case 'error':
      return verdict(
        res?.error !== undefined && (c.code === undefined || res.error.code === c.code),
        c.code === undefined ? 'a JSON-RPC error' : `JSON-RPC error ${c.code}`,
        () => answerText(rec),
      );
    case 'noError':
      return verdict(res !== undefined && res.error === undefined && !rec.sample.isError, 'a result without isError', () => answerText(rec));
    case 'status':
      return verdict(rec.sample.httpStatus === c.status, `HTTP ${c.status}`, () =>
        rec.sample.httpStatus === undefined ? 'no HTTP status' : `HTTP ${rec.sample.httpStatus}`,
      );
    case 'contains':
      return verdict(res !== undefined && JSON.stringify(res.result ?? res.error ?? null).includes(c.text), `text containing ${JSON.stringify(c.text)}`, () =>
        answerText(rec),
      );
    case 'path': {
      const v = valueAt(res, c.path);
      const got = () => (v === undefined ? `nothing at ${checkPathText(c.path)}` : json(v));
      // A number, boolean or object is matched on its JSON text (as `equals` compares JSON).
      if (c.matches) return verdict(v !== undefined && c.matches.test(typeof v === 'string' ? v : JSON.stringify(v)), `matching ${String(c.matches)}`, got);
      if ('equals' in c) return verdict(JSON.stringify(v) === JSON.stringify(c.equals), json(c.equals), got);
      return verdict(v !== undefined, `a value at ${checkPathText(c.path)}`, got);
    }
  }
}

/** What the call got, in one line: no answer, a JSON-RPC error, a tool error or a result. */
export function answerText(rec: CallRecord): string {
  const res = rec.response;
  const s = rec.sample;
  if (!res) return s.transportError ? `no answer (${s.transportError})` : s.httpStatus !== undefined ? `no answer (HTTP ${s.httpStatus})` : 'no answer';
  if (res.error) return clip(`JSON-RPC error ${res.error.code} ${JSON.stringify(res.error.message)}`);
  return `${s.isError ? 'isError: true, ' : ''}result ${json(res.result)}`;
}

/** The name a check is known by when the scenario gives none. */
export function derivedCheckName(k: CheckKind): string {
  switch (k.kind) {
    case 'isError':
      return `isError ${k.expect}`;
    case 'error':
      return k.code === undefined ? 'error' : `error ${k.code}`;
    case 'noError':
      return 'noError';
    case 'status':
      return `status ${k.status}`;
    case 'contains':
      return `contains ${JSON.stringify(k.text)}`;
    case 'path':
      return `${checkPathText(k.path)} ${k.matches ? `matches ${String(k.matches)}` : 'equals' in k ? `equals ${json(k.equals)}` : 'exists'}`;
  }
}
