/**
 * Scenario pre-flight: before any load, the tools the scenario's steps call (and their cancel
 * probes) are checked against the target's `tools/list`. A tool the server lacks would make every
 * call fail with -32602 (and a run without thresholds exit 0); it stops the run instead, naming
 * the nearest real tool. Names built from templates cannot be known before a run and are skipped.
 */
import { McptapError } from '../errors.js';
import type { StepSpec } from './scenario.js';
import { nearest } from './validation.js';

/** Literal tool names the steps call or probe with, in step order, once each. */
export function toolsNamed(steps: readonly StepSpec[]): string[] {
  const names = steps.flatMap((s) => [
    ...(s.method === 'tools/call' && s.target !== undefined ? [s.target] : []),
    ...(s.cancel?.probe ? [s.cancel.probe] : []),
  ]);
  return [...new Set(names.filter((n) => !n.includes('{{')))];
}

/** Throws LOAD_UNKNOWN_TOOL (exit 4) naming the first missing tool and the nearest listed one. */
export function checkTools(named: readonly string[], listed: readonly string[], target: string): void {
  const have = new Set(listed);
  const missing = named.filter((n) => !have.has(n));
  if (missing.length === 0) return;
  const first = missing[0]!;
  const near = nearest(first, listed, Math.max(2, Math.ceil(first.length / 2)));
  const others =
    missing.length > 1
      ? ` (nor ${missing
          .slice(1)
          .map((m) => `"${m}"`)
          .join(', ')})`
      : '';
  const list = listed.length <= 12 ? listed.join(', ') : `${listed.slice(0, 12).join(', ')}, … (${listed.length})`;
  throw new McptapError(
    'LOAD_UNKNOWN_TOOL',
    `the scenario calls tool "${first}"${others}, but ${target} has no such tool${near ? `; the nearest is "${near}"` : ''}. ` +
      `Its tools: ${list || '(none)'}. Nothing was sent: fix the step's tool name.`,
  );
}
