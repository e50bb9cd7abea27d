/**
 * One load run, end to end: bring the target up, connect a driver, run the phases in order with
 * their executors, aggregate, judge thresholds, and hand back a {@link LoadResult}. This is the
 * library entry point behind `mcptap load`; it writes nothing to stdout.
 */
import { systemClock, type Clock } from '../../util/clock.js';
import { silentLogger, type Logger } from '../../util/logger.js';
import { DataTables } from '../scenario/data-tables.js';
import type { Driver, SampleRecorder } from '../drivers/driver.js';
import { HttpDriver } from '../drivers/http-driver.js';
import { LanePool } from '../drivers/lane-pool.js';
import { StdioDriver } from '../drivers/stdio-driver.js';
import { runClosedPhase } from '../executors/closed-executor.js';
import { NO_SHARD, type ShardSpec } from '../executors/iteration.js';
import { runOpenPhase } from '../executors/open-executor.js';
import { RealScheduler, type Scheduler } from '../executors/scheduler.js';
import { createIterationRunner } from './iteration-runner.js';
import { buildResult, type LoadResult, type ResultMeta, type ThresholdOutcome } from '../results/load-result.js';
import type { RawRunOptions } from '../drivers/raw-driver.js';
import { McptapError } from '../../errors.js';
import { LoadMetrics, type LoadObserver } from '../results/metrics.js';
import { ProgressTracker, type ProgressSnapshot } from './progress.js';
import type { Scenario } from '../scenario/scenario.js';
import { StepMix } from '../scenario/step-mix.js';
import { loadRecordedTraffic, mixFromTraffic, replaySequence, type RecordedTraffic } from '../scenario/recording-mix.js';
import { runReplayPhase } from '../executors/replay-executor.js';
import { describeScenario } from '../scenario/scenario-plan.js';
import { startTarget, type RunningTarget } from '../target/target-runtime.js';
import { watchAbortThresholds } from './threshold-abort.js';
import { judgeWithDefaults } from '../results/threshold-eval.js';
import { clientSide } from './client-side.js';
import { checkNamed, listsNeeded, namedInScenario, type NamedInScenario } from './preflight.js';
import { scopeLabel } from '../results/thresholds.js';
import type { CallRecord } from '../drivers/driver.js';

export interface RunLoadOptions {
  shard?: ShardSpec;
  clock?: Clock;
  /** Time source of the executors; must share the clock's time base (default: real time on `clock`). */
  scheduler?: Scheduler;
  logger?: Logger;
  /**
   * Stops scheduling new iterations; in-flight ones finish and the result is still produced, with
   * `stopped` set to the abort reason when it is a string (the CLI gives the signal's name).
   */
  signal?: AbortSignal;
  onProgress?: (p: ProgressSnapshot) => void;
  progressIntervalMs?: number;
  /** Every recorded call, as it completes. */
  onRecord?: (rec: CallRecord) => void;
  /** Check the tools the steps name against the target first (default true; see preflight.ts). */
  preflight?: boolean;
  /** `listen` steps: called with the number of streams ready so far (acknowledged / GET 200). */
  onListenReady?: (ready: number) => void;
  /** Use this driver instead of the scenario's target (simulations, tests). */
  driverFactory?: (samples: SampleRecorder) => Promise<Driver>;
  /** Live metrics: told of every sample as it is counted (see {@link LoadRunObserver}). */
  observer?: LoadRunObserver;
}

/** What a live observer reads at its own pace (each metrics collection). */
export interface LiveLoadRun {
  scenario: string;
  shard: ShardSpec;
  metrics: LoadMetrics;
  /** The rate the running open phase asks of this process now; undefined in other phases. */
  targetRate(): number | undefined;
  /** The scenario's thresholds judged on what ran so far. */
  thresholds(): ThresholdOutcome[];
}

export interface LoadRunObserver extends LoadObserver {
  /** Once, before the first phase. */
  attach(run: LiveLoadRun): void;
  /** Once, with the final result (thresholds judged). */
  finished(result: LoadResult): void;
}

export async function runLoad(input: Scenario, opts: RunLoadOptions = {}): Promise<LoadResult> {
  const traffic = input.from ? await loadRecordedTraffic(input.from) : undefined;
  const scenario = traffic ? { ...input, steps: [...mixFromTraffic(traffic), ...input.steps] } : input;
  const clock = opts.clock ?? systemClock;
  const scheduler = opts.scheduler ?? new RealScheduler(clock);
  const logger = opts.logger ?? silentLogger;
  const shard = opts.shard ?? NO_SHARD;
  const data = await DataTables.load(scenario.data, scenario.seed);
  const metrics = new LoadMetrics(opts.observer);
  metrics.listen.onReady = opts.onListenReady;
  const target = opts.driverFactory ? undefined : await startTarget(scenario.target);
  const startedAtMs = clock.nowUs() / 1000;
  const progress = new ProgressTracker(metrics, scheduler, shard.count);
  const thresholdSpecs = scenario.thresholds.map((t) => ({ scope: scopeLabel(t.scope), expression: t.expression }));
  opts.observer?.attach({
    scenario: scenario.name,
    shard,
    metrics,
    targetRate: () => progress.targetRate(),
    thresholds: () => judgeWithDefaults(metrics, clock.nowUs() / 1000 - startedAtMs, scenario.thresholds),
  });
  const abort = watchAbortThresholds(scenario.thresholds, { metrics, elapsedMs: () => clock.nowUs() / 1000 - startedAtMs }, opts.signal);
  const timer = opts.onProgress ? setInterval(() => opts.onProgress!(progress.snapshot()), opts.progressIntervalMs ?? 1000) : undefined;
  try {
    const ran =
      scenario.driver === 'raw' && target
        ? await runRaw(scenario, target, { shard, metrics, clock, signal: abort.signal })
        : await runPhases(scenario, target, {
            ...opts,
            signal: abort.signal,
            clock,
            scheduler,
            logger,
            shard,
            data,
            metrics,
            progress,
            traffic,
            // The recorded steps of `from:` are checked too: a tool the target lacks fails every call.
            named: namedInScenario(scenario.steps),
          });
    const result = buildResult(metrics, {
      scenario: scenario.name,
      ...ran,
      shard,
      startedAtMs,
      endedAtMs: clock.nowUs() / 1000,
      thresholdSpecs,
    });
    result.plan = describeScenario(scenario);
    if (target?.startedAtEpochMs !== undefined) result.targetStartedAtEpochMs = target.startedAtEpochMs;
    if (abort.signal?.aborted) result.stopped = typeof abort.signal.reason === 'string' ? abort.signal.reason : 'stopped';
    if (metrics.scriptErrors > 0) {
      result.scriptErrors = metrics.scriptErrors;
      logger.warn(`${metrics.scriptErrors} scripted iteration(s) threw; the first: ${metrics.firstScriptError}`);
    }
    result.thresholds = judgeWithDefaults(metrics, result.wallMs, scenario.thresholds);
    opts.observer?.finished(result);
    return result;
  } finally {
    if (timer) clearInterval(timer);
    abort.dispose();
    await target?.close();
  }
}

type Ran = Pick<ResultMeta, 'era' | 'target' | 'driver'>;

interface PhaseDeps extends RunLoadOptions {
  clock: Clock;
  scheduler: Scheduler;
  logger: Logger;
  shard: ShardSpec;
  data: DataTables;
  metrics: LoadMetrics;
  progress: ProgressTracker;
  /** `from:`'s recording (replay phases take their schedule and requests from it). */
  traffic: RecordedTraffic | undefined;
  /** Tools, prompts and resources the scenario's own steps name: checked against the target before any load. */
  named: NamedInScenario;
}

/** The run was stopped (its signal) while the target was still being checked: nothing ran. */
export class StoppedBeforeRun extends Error {
  constructor(readonly reason: unknown) {
    super(`stopped before the run started (${String(reason)}), while the target was still being checked`);
    this.name = 'StoppedBeforeRun';
  }
}

/**
 * `connecting`, unless `signal` stops the run first: checking a target that does not answer takes
 * up to its start-up allowance (30 s), and a Ctrl-C must not wait for it. A driver that connects
 * after the stop is closed.
 */
function untilStopped<T extends { close(): Promise<void> }>(connecting: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return connecting;
  return new Promise<T>((resolve, reject) => {
    const onStop = () => {
      reject(new StoppedBeforeRun(signal.reason));
      connecting
        .then(
          (late) => late.close(),
          () => undefined,
        )
        .catch(() => undefined);
    };
    if (signal.aborted) return onStop();
    signal.addEventListener('abort', onStop, { once: true });
    connecting.then(
      (x) => (signal.removeEventListener('abort', onStop), resolve(x)),
      (err: unknown) => (signal.removeEventListener('abort', onStop), reject(err)),
    );
  });
}

async function runPhases(scenario: Scenario, target: RunningTarget | undefined, d: PhaseDeps): Promise<Ran> {
  const samples: SampleRecorder = { record: (s) => d.metrics.record(s), violation: (k) => d.metrics.recordViolation(k, d.clock.nowUs()) };
  const driver = await untilStopped(
    d.driverFactory ? d.driverFactory(samples) : connectDriver(scenario, target!, d.clock, d.logger, samples, d.signal, d.traffic),
    d.signal,
  );
  try {
    if (scenario.preflight !== false) await preflight(driver, d);
    const { shard } = d;
    d.logger.info(
      `load: ${scenario.name} against ${driver.target} (${driver.transport}, ${driver.era} era)${shard.count > 1 ? `, shard ${shard.index}/${shard.count}` : ''}`,
    );
    const pool = new LanePool((id) => driver.newLane(id));
    const mix = scenario.steps.length > 0 ? new StepMix(scenario.steps, scenario.mix) : undefined;
    const runnerDeps = { scenario, pool, data: d.data, metrics: d.metrics, scheduler: d.scheduler, onRecord: d.onRecord, signal: d.signal, era: driver.era };
    const run = createIterationRunner({ ...runnerDeps, mix });
    // Replay phases: arrival j sends recorded request j.
    const replay = d.traffic && scenario.phases.some((p) => p.kind === 'replay') ? replaySequence(d.traffic) : undefined;
    const replayRun = replay && createIterationRunner({ ...runnerDeps, mix: { pick: (index) => replay.steps[index]! } });
    // Open phases' iterations still running when the next phase starts (see runOpenPhase).
    const unsettled: Promise<void>[] = [];
    for (const [phaseIndex, phase] of scenario.phases.entries()) {
      if (d.signal?.aborted) break;
      d.progress.enterPhase(phaseIndex, phase);
      const common = { scheduler: d.scheduler, metrics: d.metrics, phaseIndex, shard, run, signal: d.signal, era: driver.era };
      if (phase.kind === 'open') unsettled.push((await runOpenPhase(phase, common)).settled);
      else if (phase.kind === 'replay') unsettled.push((await runReplayPhase(phase, replay!.offsetsUs, { ...common, run: replayRun! })).settled);
      else await runClosedPhase(phase, { ...common, seed: scenario.seed });
    }
    await Promise.all(unsettled);
    await pool.closeAll();
    return { era: driver.era, target: driver.target, driver: driver.transport };
  } finally {
    await driver.close();
  }
}

/** The target must have every tool, prompt and resource the steps name (see preflight.ts); a list it does not give is not checked. */
async function preflight(driver: Driver, d: PhaseDeps): Promise<void> {
  const lists = listsNeeded(d.named);
  if (d.preflight === false || lists.length === 0 || !driver.listNames) return;
  let listed: Awaited<ReturnType<NonNullable<Driver['listNames']>>>;
  try {
    listed = await driver.listNames(lists);
  } catch (err) {
    d.logger.warn(`load: could not list the target's ${lists.join(', ')} before the run (${(err as Error).message}); names not checked`);
    return;
  }
  checkNamed(d.named, listed, driver.target);
}

async function runRaw(scenario: Scenario, t: RunningTarget, o: Omit<RawRunOptions, 'url' | 'headers'>): Promise<Ran> {
  if (t.kind !== 'http') throw new McptapError('MCPTAP_LOAD_RAW_HTTP_ONLY', 'the raw driver needs an HTTP target');
  const { runRawPhases } = await import('../drivers/raw-driver.js'); // autocannon: loaded only for the raw driver
  const era = await runRawPhases(scenario, { ...o, url: t.url, headers: t.headers });
  return { era, target: t.url, driver: 'raw' };
}

async function connectDriver(
  s: Scenario,
  t: RunningTarget,
  clock: Clock,
  logger: Logger,
  samples: SampleRecorder,
  signal: AbortSignal | undefined,
  traffic: RecordedTraffic | undefined,
): Promise<Driver> {
  const client = clientSide(s.clientCapabilities, traffic);
  const common = { era: s.era, protocolVersion: s.protocolVersion, timeoutMs: s.timeoutMs, clock, samples, ...(client ? { client } : {}) };
  if (t.kind === 'http') {
    const openCap = Math.max(0, ...s.phases.map((p) => (p.kind === 'closed' ? p.vus : (p.maxInFlight ?? 100))));
    const connections = t.connections ?? Math.min(1024, Math.max(16, openCap));
    return HttpDriver.connect({ ...common, url: t.url, headers: t.headers, connections, churn: s.sessionChurn });
  }
  return StdioDriver.start({ ...common, command: t.command, args: t.args, env: t.env, cwd: t.cwd, pool: t.pool, logger, ...(signal ? { signal } : {}) });
}
