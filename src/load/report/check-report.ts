/**
 * The checks section of the text summary: each check by step with its pass rate, and for a
 * failing one the first failure's expected and got values. Pure.
 */
import { passRateText, type CheckResult } from '../results/check-stats.js';
import type { GroupResult } from '../results/load-result.js';
import { htmlTable } from './html-page.js';

export function renderChecks(checks: readonly CheckResult[] | undefined): string[] {
  if (!checks || checks.length === 0) return [];
  const out = ['', 'checks'];
  for (const c of checks) {
    out.push(`  ${c.failed ? 'FAIL' : 'pass'}  step ${c.step}: ${c.name}  ${passRateText(c)}`);
    if (c.firstFailure) out.push(`        first failure: expected ${c.firstFailure.expected}, got ${c.firstFailure.got}`);
  }
  return out;
}

/** The checks table of the HTML report ('' when no check ran). */
export function checksHtml(checks: readonly CheckResult[] | undefined): string {
  if (!checks || checks.length === 0) return '';
  const rows = checks.map((c) => [
    { html: c.failed ? 'FAIL' : 'pass', cls: c.failed ? 'fail' : 'pass' },
    c.step,
    c.name,
    passRateText(c),
    c.firstFailure?.expected ?? '',
    c.firstFailure?.got ?? '',
  ]);
  return `<h2>Checks</h2>${htmlTable(['', 'step', 'check', 'pass rate', 'first failure: expected', 'got'], rows, { numeric: 9 })}`;
}

/** Said beside "all passed" when checks failed within a threshold the scenario wrote. */
export function toleratedChecksText(failures: number): string {
  return failures > 0 ? `; ${failures} check${failures === 1 ? '' : 's'} failed, within the scenario's check_failures threshold` : '';
}

/** Errors steps declared (`expect:`) and got: counted as ok in the table above, so said here. */
export function expectedNote(steps: Record<string, GroupResult>): string[] {
  const got = Object.entries(steps).filter(([, g]) => g.counters.expectedErrors);
  if (got.length === 0) return [];
  const n = got.reduce((a, [, g]) => a + (g.counters.expectedErrors ?? 0), 0);
  return [
    `  + ${n} expected error${n === 1 ? '' : 's'} (steps with expect:, ok above, not errors): ${got.map(([k, g]) => `${k} ${g.counters.expectedErrors}`).join(', ')}`,
  ];
}
