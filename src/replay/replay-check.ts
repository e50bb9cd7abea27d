/**
 * `mcptap replay --check RULES.yaml`: the replayed traffic through the check rules, as a tap's
 * would go. Findings at the fail level are differences: they fail the replay (exit 1).
 */
import type { SeverityCounts } from '../check/check-sink.js';
import type { Finding } from '../check/finding.js';
import { liveCheckSink, type CheckRulesSource } from '../check/live-check.js';
import { failingCount, type FailOn } from '../check/run-check.js';
import type { Transport } from '../model/events.js';
import { Pipeline } from '../pipeline/pipeline.js';
import { systemClock } from '../util/clock.js';
import { silentLogger } from '../util/logger.js';
import { pipelineObserver } from './pipeline-observer.js';
import type { TrafficObserver } from './replayer.js';

/** What the report says of the checks (plain data). */
export interface ReplayCheckReport {
  /** The rules file. */
  file: string;
  /** `--check-fail-on` as given. */
  failOn: string;
  /** Findings at the fail level: each is a difference. */
  failing: number;
  totals: SeverityCounts;
  /** Each rule that found something: its counts, how many fail, and its first finding. */
  rules: { id: string; counts: SeverityCounts; failing: number; first?: Finding }[];
}

export interface ReplayCheck extends TrafficObserver {
  /** Ends the traffic: the end's findings, then the report. */
  finish(): Promise<ReplayCheckReport>;
}

export function openReplayCheck(source: CheckRulesSource, opts: { transport: Transport; target: string; failOn: FailOn; failOnText: string }): ReplayCheck {
  const pipeline = new Pipeline({ clock: systemClock, logger: silentLogger, tickMs: 0 });
  const sink = liveCheckSink({ source });
  pipeline.addSink(sink);
  return {
    ...pipelineObserver(pipeline, { transport: opts.transport, target: opts.target }),
    finish: async () => {
      await pipeline.flush();
      const result = sink.finish();
      await pipeline.close();
      const rules = Object.entries(result.counts).map(([id, counts]) => ({
        id,
        counts,
        failing: failingCount({ ...result, counts: { [id]: counts } }, opts.failOn),
        ...(result.examples[id]?.[0] && { first: result.examples[id][0] }),
      }));
      return { file: source.name, failOn: opts.failOnText, failing: failingCount(result, opts.failOn), totals: result.totals, rules };
    },
  };
}
