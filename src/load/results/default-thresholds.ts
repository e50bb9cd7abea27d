/**
 * Thresholds a run has without writing them: when checks ran and no threshold speaks of
 * `check_failures`, every check must pass (`check_failures == 0`), so a run whose checks failed
 * never reads "all passed" and exits as a failed threshold does.
 */
import { parseThreshold, type ThresholdSpec } from './thresholds.js';

export const DEFAULT_CHECK_NOTE = 'default: every check must pass; write a check_failures threshold to set your own';

export function withDefaultThresholds(specs: readonly ThresholdSpec[], checks: number): ThresholdSpec[] {
  const own = specs.some((t) => t.metric.kind === 'counter' && t.metric.counter === 'check_failures');
  if (checks === 0 || own) return [...specs];
  const t = parseThreshold('check_failures == 0') as ThresholdSpec;
  return [...specs, { ...t, note: DEFAULT_CHECK_NOTE }];
}
