/**
 * `mcptap check` offline: a recording's events streamed through a CheckSink (one cursor per table,
 * merged by order; never the whole recording in memory), and the verdict `--fail-on` asks for.
 */
import type { RecordingStore } from '../store/recording-store.js';
import type { CheckContext, CheckerFactory, RuleSettings } from './checker.js';
import { CheckSink, type CheckResult } from './check-sink.js';
import type { Severity } from './finding.js';

export interface RunCheckOptions {
  factories: readonly CheckerFactory[];
  settings?: RuleSettings;
  /** Passed to every factory; the recording's own state is filled in here. */
  context?: CheckContext;
  maxFindings?: number;
}

export function checkRecording(store: RecordingStore, recordingId: number, opts: RunCheckOptions): CheckResult {
  const rec = store.getRecording(recordingId);
  const context: CheckContext = {
    ...opts.context,
    recording: {
      ...opts.context?.recording,
      ended: rec?.endedUs !== undefined,
      droppedQueue: rec?.droppedQueue ?? 0,
      droppedWrite: rec?.droppedWrite ?? 0,
      ...(typeof rec?.meta?.incomplete === 'string' && { incomplete: rec.meta.incomplete }),
    },
  };
  const sink = new CheckSink({ factories: opts.factories, settings: opts.settings, context, maxFindings: opts.maxFindings });
  for (const event of store.events(recordingId)) sink.onEvent(event);
  return withRows(store, recordingId, sink.finish());
}

/** Each kept finding about an exchange gets the exchange's row, so a report can say `#row` as `mcptap show` does. */
function withRows(store: RecordingStore, recordingId: number, result: CheckResult): CheckResult {
  const rows = new Map<string, number | undefined>();
  for (const f of [...result.findings, ...Object.values(result.examples).flat()]) {
    const key = f.where.exchangeKey;
    if (key === undefined || f.where.row !== undefined) continue;
    if (!rows.has(key)) rows.set(key, store.exchange(recordingId, { key })?.rowid);
    const row = rows.get(key);
    if (row !== undefined) f.where.row = row;
  }
  return result;
}

/** What fails the run: findings at `level` or above, and any finding of the named rules. */
export interface FailOn {
  level?: Severity;
  rules: ReadonlySet<string>;
}

const RANK: Record<Severity, number> = { note: 0, warning: 1, error: 2 };

/** Whether a finding of `ruleId` at `sev` fails the run under `failOn` (the reports mark it so). */
export function failsOn(failOn: FailOn, ruleId: string, sev: Severity): boolean {
  return failOn.rules.has(ruleId) || (failOn.level !== undefined && RANK[sev] >= RANK[failOn.level]);
}

/** How many findings fail the run under `failOn` (counted over all findings, not the kept ones). */
export function failingCount(result: CheckResult, failOn: FailOn): number {
  let n = 0;
  for (const [ruleId, counts] of Object.entries(result.counts)) {
    for (const sev of ['error', 'warning', 'note'] as const) if (failsOn(failOn, ruleId, sev)) n += counts[sev];
  }
  return n;
}
