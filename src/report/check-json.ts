/** `mcptap check --json`: the whole result as one JSON document (stable field names). */
import { findingTotal, type CheckReportInput } from './check-view.js';

export function checkJson(input: CheckReportInput): unknown {
  const { result } = input;
  return {
    file: input.file,
    recording: input.recordingId,
    verdict: { failed: input.failing > 0, failing: input.failing, failOn: input.failOn },
    total: findingTotal(result),
    totals: result.totals,
    counts: result.counts,
    rules: result.rules.map((r) => ({
      id: r.id,
      family: r.family,
      severity: r.severity,
      enabled: r.enabled,
      // A rule that could not run (no --baseline, no budget set) is not a pass: say so and why.
      judged: r.enabled && result.unjudged[r.id] === undefined,
      ...(result.unjudged[r.id] !== undefined && { notJudged: result.unjudged[r.id] }),
      title: r.title,
    })),
    findings: result.findings,
    omitted: result.omitted,
    checkerErrors: result.checkerErrors,
  };
}
