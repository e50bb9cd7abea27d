/**
 * Cancel verdicts a run left *unknown* (no evidence the work stopped or went on) that no `cancel:`
 * threshold judged: without one the run would pass in silence, so `mcptap load` says them and exits
 * 1, as `probe-cancel` does for *unknown*. Pure.
 */
import { unknownReason } from './cancel-stats.js';
import type { LoadResult } from './load-result.js';

export interface UnjudgedCancel {
  /** The tool (or step) the verdict is of. */
  name: string;
  reason: string;
}

const CANCEL_THRESHOLD = /^\s*cancel\s*(?::|==)/;

export function unjudgedUnknownCancels(r: Pick<LoadResult, 'cancel' | 'thresholds'>): UnjudgedCancel[] {
  const judged = (name: string) =>
    r.thresholds.some((t) => CANCEL_THRESHOLD.test(t.expression) && (t.scope === 'all' || t.scope === `tool:${name}` || t.scope === `step:${name}`));
  return Object.entries(r.cancel ?? {})
    .filter(([name, g]) => g.cancelled > 0 && g.verdict === 'unknown' && !judged(name))
    .map(([name, g]) => ({ name, reason: unknownReason(g) }));
}

/** The line said for each: what was not known, why, and how to get a verdict. */
export function unjudgedMessage(u: UnjudgedCancel): string {
  return `cancel verdict of ${u.name} is unknown (${u.reason}); no cancel threshold judged it: exit 1 (give the step a probe, or write a threshold)`;
}
