/** The cancellation section of the text summary: one verdict per tool (or step), figures, evidence. Pure. */
import { unknownReason, type CancelGroupResult } from '../results/cancel-stats.js';
import { formatDurationUs } from '../../data-file/duration.js';

export function renderCancel(cancel: Record<string, CancelGroupResult> | undefined): string[] {
  if (!cancel || Object.keys(cancel).length === 0) return [];
  const out = ['', 'cancellation (verdict per tool)'];
  const pp = (h: { summary: { p50: number; p99: number; max: number; count: number } }) =>
    `p50 ${formatDurationUs(h.summary.p50)} p99 ${formatDurationUs(h.summary.p99)} max ${formatDurationUs(h.summary.max)}`;
  for (const [key, g] of Object.entries(cancel)) {
    const head = `  ${key}: ${g.verdict.toUpperCase()}`;
    let what: string;
    if (g.verdict === 'ignored') what = `work went on after the cancel in ${g.ignored} of ${g.cancelled}: for at least ${pp(g.workAfter)} (its last sign seen)`;
    else if (g.verdict === 'honoured')
      what = g.stopDelay.summary.count > 0 ? `stop delay ${pp(g.stopDelay)} (${g.stopDelay.summary.count} measured)` : 'no work seen after the cancel';
    else what = `no evidence either way: ${unknownReason(g)}`;
    out.push(`${head}: ${what}`);
    const bits = [
      `${g.cancelled} cancelled by ${g.mechanisms.join(', ')}`,
      ...(g.completedBeforeCancel ? [`${g.completedBeforeCancel} ended before the cancel`] : []),
      `final results after the cancel ${g.finalResults}`,
      `progress after the cancel ${g.progressAfterCancel}`,
      ...(g.streamEnd.summary.count ? [`stream end after the cancel ${pp(g.streamEnd)}`] : []),
      ...(g.nextRequest.summary.count ? [`next request ${pp(g.nextRequest)}`] : []),
    ];
    out.push(`    ${bits.join('; ')}`);
    for (const e of g.evidence.slice(0, 3)) out.push(`    evidence: ${e}`);
  }
  return out;
}
