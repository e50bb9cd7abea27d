/**
 * What one iteration does: pick a step from the mix (or run the scenario's scripted iteration),
 * render its arguments, send it on a lane, check the answer, record the sample.
 *
 * Latency honesty: the first call of an iteration is measured from the iteration's intended
 * start; later calls of a scripted iteration from the moment the script issued them (they could
 * not have started earlier).
 */
import { setMaxListeners } from 'node:events';
import type { JsonRpcResponse } from '../../model/jsonrpc.js';
import { applyChecks } from './checks.js';
import { applyExpected } from './expected-outcome.js';
import type { DataTables } from '../scenario/data-tables.js';
import type { CallRecord, Lane, PreparedCall } from '../drivers/driver.js';
import type { LanePool } from '../drivers/lane-pool.js';
import type { IterationRunner, IterationSlot } from '../executors/iteration.js';
import type { Scheduler } from '../executors/scheduler.js';
import type { LoadMetrics } from '../results/metrics.js';
import { iterationRandom, SALT } from '../scenario/random.js';
import type { CallOptions, IterationContext, Scenario, StepSpec } from '../scenario/scenario.js';
import type { StepPicker } from '../scenario/step-mix.js';
import { scriptCancel } from '../scenario/scenario-cancel.js';

export interface RunnerDeps {
  scenario: Scenario;
  pool: LanePool;
  mix: StepPicker | undefined;
  data: DataTables;
  metrics: LoadMetrics;
  scheduler: Scheduler;
  /** Called with every recorded call (progress display, tests). */
  onRecord?: (rec: CallRecord) => void;
  /** The run's stop: held `listen` streams close on it. */
  signal?: AbortSignal;
  /** The driver's era (`listen` steps: legacy GET streams have no acknowledgement). */
  era?: 'legacy' | 'modern';
}

export function createIterationRunner(d: RunnerDeps): IterationRunner {
  const steps = new StepCalls(d);
  // Every held listen stream waits on the run's stop: one listener each, not a leak.
  if (d.signal) setMaxListeners(0, d.signal);
  const once = (lane: Lane, slot: IterationSlot): Promise<void> => (d.scenario.iteration ? runScripted(d, lane, slot) : runStep(d, steps, lane, slot));
  const iterate = async (lane: Lane, slot: IterationSlot): Promise<void> => {
    await once(lane, slot);
    if (lane.endIteration) await lane.endIteration();
  };
  const pooled = async (slot: IterationSlot): Promise<void> => {
    const lane = d.pool.acquire();
    try {
      await once(lane, slot);
      if (lane.endIteration) await lane.endIteration();
    } finally {
      d.pool.release(lane);
    }
  };
  return (slot) => {
    if (slot.vu < 0) return pooled(slot);
    // A VU's own lane: the iteration's own promise, one async frame fewer per iteration.
    try {
      const lane = d.pool.forVu(slot.vu);
      return lane.endIteration ? iterate(lane, slot) : once(lane, slot);
    } catch (err) {
      return Promise.reject(err);
    }
  };
}

/**
 * Per-iteration work that does not depend on the iteration is done once: a step whose arguments
 * have no placeholder gets one {@link PreparedCall} for the whole run (`fixed`: drivers keep its
 * bytes), and the mix's random stream is made only when the mix draws from it (random mode).
 */
class StepCalls {
  private readonly fixed = new Map<StepSpec, PreparedCall>();
  /** The scenario's own steps: a replay's one-off steps are not kept. */
  private readonly mixSteps: ReadonlySet<StepSpec>;
  private slot: IterationSlot | undefined;
  private mixRandom: (() => number) | undefined;
  /** The iteration's mix stream, made on first use (a weighted mix never asks). */
  private readonly random = (): number => (this.mixRandom ??= iterationRandom(this.d.scenario.seed, this.slot!.phaseIndex, this.slot!.index, SALT.mix))();

  constructor(private readonly d: RunnerDeps) {
    this.mixSteps = new Set(d.scenario.steps);
  }

  pick(slot: IterationSlot): StepSpec {
    this.slot = slot;
    this.mixRandom = undefined;
    return this.d.mix!.pick(slot.index, this.random);
  }

  call(step: StepSpec, lane: Lane, slot: IterationSlot): PreparedCall {
    if (step.params.isStatic && this.mixSteps.has(step)) {
      let c = this.fixed.get(step);
      if (!c) this.fixed.set(step, (c = prepared(step, step.params.render(STATIC) as Record<string, unknown> | undefined)));
      c.fixed = true;
      return c;
    }
    const d = this.d;
    const params = step.params.render({
      vu: slot.vu >= 0 ? slot.vu : lane.id,
      iteration: slot.index,
      phase: slot.phase,
      rows: d.data.rowsFor(slot.phaseIndex, slot.index),
      random: iterationRandom(d.scenario.seed, slot.phaseIndex, slot.index, SALT.template),
    }) as Record<string, unknown> | undefined;
    return prepared(step, params);
  }
}

/** A static template renders the same value whatever the context. */
const STATIC = { vu: 0, iteration: 0, phase: '', rows: {}, random: () => 0 };

function record(d: RunnerDeps, rec: CallRecord | undefined): void {
  if (!rec) return;
  if (rec.cancel) d.metrics.recordCancel(rec.cancel.observation, rec.cancel.verdict);
  // A cancelled call is reported in the cancellation section: its "latency" is the experiment's timing.
  if (!rec.cancel?.verdict) d.metrics.record(rec.sample);
  d.onRecord?.(rec);
}

async function runStep(d: RunnerDeps, steps: StepCalls, lane: Lane, slot: IterationSlot): Promise<void> {
  const step = steps.pick(slot);
  const c = steps.call(step, lane, slot);
  if (step.listen) return holdListen(d, lane, slot, c);
  const rec = await lane.call(c, slot.intendedUs);
  if (rec && !rec.cancel?.verdict) {
    applyChecks(step.checks, rec);
    if (step.expect) applyExpected(step.expect, rec);
  }
  record(d, rec);
}

/**
 * A `listen` step: its stream stays open until the phase's planned end (a phase without one: the
 * scenario's timeout), or until the run stops. A stream that fails or ends sooner is recorded as
 * a sample of the step as well as counted.
 */
async function holdListen(d: RunnerDeps, lane: Lane, slot: IterationSlot, c: PreparedCall): Promise<void> {
  const now = d.scheduler.nowUs();
  const untilUs = slot.phaseEndUs ?? now + d.scenario.timeoutMs * 1000;
  const stream = d.metrics.listen.opened(now, d.era === 'legacy');
  if (!lane.listen) {
    d.metrics.listen.closed(stream, false, now);
    return;
  }
  const stop = new AbortController();
  const onStop = () => stop.abort();
  d.signal?.addEventListener('abort', onStop, { once: true });
  // Stopped once the clock has passed the end (never before: the virtual user would see time left
  // and open a second stream for the same phase).
  void d.scheduler.sleepUntil(untilUs).then(onStop);
  try {
    const maxMs = Math.ceil(Math.max(0, (untilUs - now) / 1000)) + d.scenario.timeoutMs;
    const { held, rec } = await lane.listen(c, slot.intendedUs, {
      stop: stop.signal,
      maxMs,
      onMessage: (m, t) => stream.message(m, t),
      onHeaders: (status) => stream.headers(status),
    });
    d.metrics.listen.closed(stream, held, d.scheduler.nowUs());
    record(d, rec);
  } finally {
    d.signal?.removeEventListener('abort', onStop);
    stop.abort();
  }
}

export function prepared(step: StepSpec, params: Record<string, unknown> | undefined): PreparedCall {
  const c: PreparedCall = { step: step.name, method: step.method, params, progress: step.progress };
  if (step.method === 'tools/call' && step.target !== undefined) c.tool = step.target;
  if (step.headers) c.headers = step.headers;
  if (step.cancel) c.cancel = step.cancel;
  return c;
}

async function runScripted(d: RunnerDeps, lane: Lane, slot: IterationSlot): Promise<void> {
  let first = true;
  let lastStep = '(script)';
  const call = async (method: string, params?: Record<string, unknown>, opts: CallOptions = {}): Promise<JsonRpcResponse | undefined> => {
    const intendedUs = first ? slot.intendedUs : d.scheduler.nowUs();
    first = false;
    const tool = method === 'tools/call' && typeof params?.name === 'string' ? params.name : undefined;
    const c: PreparedCall = { step: opts.step ?? tool ?? method, method, params, progress: opts.progress ?? false };
    if (tool !== undefined) c.tool = tool;
    if (opts.headers) c.headers = opts.headers;
    if (opts.cancel) c.cancel = scriptCancel(opts.cancel);
    lastStep = c.step;
    const rec = await lane.call(c, intendedUs);
    record(d, rec);
    return rec?.response;
  };
  const ctx: IterationContext = {
    vu: slot.vu >= 0 ? slot.vu : lane.id,
    iteration: slot.index,
    phase: slot.phase,
    data: d.data.rowsFor(slot.phaseIndex, slot.index),
    random: iterationRandom(d.scenario.seed, slot.phaseIndex, slot.index, SALT.template),
    call,
    tool: (name, args, opts) => call('tools/call', { name, arguments: args ?? {} }, opts),
    // A check belongs to the step of the call made just before it.
    check: (name, ok) => {
      d.metrics.recordCheck(lastStep, ok, name);
      return ok;
    },
    sleep: (ms) => d.scheduler.sleepUntil(d.scheduler.nowUs() + ms * 1000),
  };
  try {
    await d.scenario.iteration!(ctx);
  } catch (err) {
    d.metrics.scriptError(err);
  }
}
