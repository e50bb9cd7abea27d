/** The load engine's public surface (see docs/load-testing.md). */
export { runLoad, type RunLoadOptions } from './run/run-load.js';
export { loadScenarioFile, loadYaml } from './scenario/scenario-loader.js';
export { validateScenario, type ValidateContext } from './scenario/scenario-validate.js';
export { defineScenario, type ScenarioInput } from './scenario/define-scenario.js';
export type {
  Scenario,
  Phase,
  OpenPhase,
  ClosedPhase,
  StepSpec,
  TargetSpec,
  CheckSpec,
  DataSpec,
  IterationContext,
  CallOptions,
  EraChoice,
} from './scenario/scenario.js';
export { mergeResults } from './results/merge-results.js';
export { RESULT_FORMAT, histogramOf, type LoadResult, type GroupResult, type EncodedHistogram, type ShardId } from './results/load-result.js';
export { evaluateThresholds, thresholdsPassed, specsOfResult, type ThresholdOutcome } from './results/threshold-eval.js';
export { parseThreshold, parseScope, type ThresholdSpec, type ThresholdScope } from './results/thresholds.js';
export { renderSummary } from './report/text-report.js';
export { renderJunit } from './report/junit-report.js';
export { renderLoadHtml } from './report/html-report.js';
export { renderCompareHtml } from './report/compare-html.js';
export { loadChartLibrary } from './report/chart-library.js';
export type { ChartLibrary } from './report/html-page.js';
export type { ResultSeries, SeriesPoint } from './results/series.js';
export type { ScenarioPlan } from './scenario/scenario-plan.js';
export { renderProgressLine } from './report/progress-line.js';
export type { ProgressSnapshot } from './run/progress.js';
export { parseShard, NO_SHARD, type ShardSpec, type IterationSlot } from './executors/iteration.js';
export { RealScheduler, type Scheduler } from './executors/scheduler.js';
export { VirtualScheduler } from './executors/virtual-scheduler.js';
export { newHistogram, decodeHistogram, encodeHistogram, sameCounts, summarize, type LatencySummary } from '../util/histogram.js';
export type { Sample, SampleOutcome } from './results/sample.js';
export type { Driver, Lane, PreparedCall, CallRecord, SampleRecorder } from './drivers/driver.js';
export { stepsFromRecording } from './scenario/recording-mix.js';
