/**
 * A result's statistics held decoded: phases and the iteration figures, the request groups, and
 * the cancellation, check and listen parts. A run records into it (LoadMetrics extends it); a
 * merge reads each file into one (`fromJSON`), adds them up (`merge`) and writes once (`toJSON`).
 */
import { encodeHist, newHistogram, type EncodedHistogram, type Histogram } from '../../util/histogram.js';
import { CancelStats, type CancelGroupResult } from './cancel-stats.js';
import { CheckStats, type CheckResult } from './check-stats.js';
import { GroupStats, type GroupResult } from './group-stats.js';
import { ListenStats, type ListenResult } from './listen-stats.js';
import { histogramFromJSON, mergePartMaps, partMapFromJSON, partMapToJSON } from './result-part.js';

export interface PhaseStats {
  name: string;
  kind: 'open' | 'closed' | 'replay';
  plannedDurationMs?: number;
  /**
   * Open model: the rate this process was asked for (its shard's share), start and end of the ramp.
   * Replay: the average rate of the sped-up recording (both the same).
   */
  targetFromRate?: number;
  targetToRate?: number;
  /** Replay: the factor on the recorded rate. */
  speed?: number;
  /** Iterations due by the schedule (open) or planned (closed with a count). */
  scheduled: number;
  started: number;
  /** Due but not started: the in-flight cap was reached (open model, replay). */
  dropped: number;
  completed: number;
  startUs: number;
  endUs: number;
}

/** Two shards' phase figures as one run's: counts add, the span covers both, target rates add. */
export function mergePhase(a: PhaseStats, b: PhaseStats): PhaseStats {
  const p: PhaseStats = {
    ...a,
    scheduled: a.scheduled + b.scheduled,
    started: a.started + b.started,
    dropped: a.dropped + b.dropped,
    completed: a.completed + b.completed,
    startUs: Math.min(a.startUs, b.startUs),
    endUs: Math.max(a.endUs, b.endUs),
  };
  if (a.targetFromRate !== undefined) p.targetFromRate = a.targetFromRate + (b.targetFromRate ?? 0);
  if (a.targetToRate !== undefined) p.targetToRate = a.targetToRate + (b.targetToRate ?? 0);
  return p;
}

/** The statistics of a result file, in the order a merge writes them. */
export interface ResultPartsJSON {
  phases: PhaseStats[];
  /** Highest number of iterations in flight at once (merged: sum of the shards' maxima, an upper bound). */
  maxInFlight: number;
  scheduleLag: EncodedHistogram;
  overall: GroupResult;
  methods: Record<string, GroupResult>;
  tools: Record<string, GroupResult>;
  steps: Record<string, GroupResult>;
  /** Cancellation experiments (steps with `cancel:`), by tool (or step): verdict, figures, evidence. */
  cancel?: Record<string, CancelGroupResult>;
  /** Streams of `listen` steps (subscriptions/listen, legacy GET streams), when the scenario has one. */
  listen?: ListenResult;
  /** Each check by step and name: passes, failures and the first failure's values (when any check ran). */
  checks?: CheckResult[];
  /** Scripted iterations that threw. */
  scriptErrors?: number;
}

export class ResultParts {
  readonly phases: PhaseStats[] = [];
  /** Highest number of iterations in flight at once (merged: the sum of the parts' maxima, an upper bound). */
  maxInFlight = 0;
  /** How late iterations started against their intended start (generator saturation shows here). */
  readonly scheduleLag: Histogram = newHistogram();
  readonly overall = new GroupStats();
  readonly methods = new Map<string, GroupStats>();
  readonly tools = new Map<string, GroupStats>();
  readonly steps = new Map<string, GroupStats>();
  /** Cancellation experiments, by tool (or step): see cancel-stats.ts. */
  readonly cancel = new Map<string, CancelStats>();
  /** Each check's passes and failures, by step. */
  readonly checks = new CheckStats();
  /** Streams of `listen` steps. */
  readonly listen = new ListenStats();
  /** Scripted iterations that threw (a bug in the scenario script, not in the server). */
  scriptErrors = 0;

  /** Adds `o` in: counters and histograms add, phases add by position (a stopped part may have fewer). */
  merge(o: ResultParts): void {
    const [long, short] = this.phases.length >= o.phases.length ? [this.phases, o.phases] : [o.phases, this.phases];
    const phases = long.map((p, i) => (short[i] ? mergePhase(this.phases[i]!, o.phases[i]!) : p));
    this.phases.splice(0, this.phases.length, ...phases);
    this.maxInFlight += o.maxInFlight;
    this.scheduleLag.add(o.scheduleLag);
    this.overall.merge(o.overall);
    mergePartMaps(this.methods, o.methods, () => new GroupStats());
    mergePartMaps(this.tools, o.tools, () => new GroupStats());
    mergePartMaps(this.steps, o.steps, () => new GroupStats());
    mergePartMaps(this.cancel, o.cancel, () => new CancelStats());
    this.checks.merge(o.checks);
    this.listen.merge(o.listen);
    this.scriptErrors += o.scriptErrors;
  }

  /** Families a run never used (no cancel step, no check, no listen stream) are left out. */
  toJSON(): ResultPartsJSON {
    return {
      phases: this.phases.map((p) => ({ ...p })),
      maxInFlight: this.maxInFlight,
      scheduleLag: encodeHist(this.scheduleLag),
      overall: this.overall.toJSON(),
      methods: partMapToJSON(this.methods),
      tools: partMapToJSON(this.tools),
      steps: partMapToJSON(this.steps),
      ...(this.cancel.size > 0 ? { cancel: partMapToJSON(this.cancel) } : {}),
      ...(this.listen.used ? { listen: this.listen.toJSON() } : {}),
      ...(this.checks.size > 0 ? { checks: this.checks.toJSON() } : {}),
      ...(this.scriptErrors > 0 ? { scriptErrors: this.scriptErrors } : {}),
    };
  }

  static fromJSON(r: ResultPartsJSON): ResultParts {
    const into = new ResultParts();
    into.phases.push(...r.phases.map((p) => ({ ...p })));
    into.maxInFlight = r.maxInFlight;
    into.scheduleLag.add(histogramFromJSON(r.scheduleLag));
    into.overall.merge(GroupStats.fromJSON(r.overall));
    for (const [mine, theirs] of [
      [into.methods, r.methods],
      [into.tools, r.tools],
      [into.steps, r.steps],
    ] as const)
      for (const [k, g] of partMapFromJSON(theirs, GroupStats.fromJSON)) mine.set(k, g);
    for (const [k, c] of partMapFromJSON(r.cancel, CancelStats.fromJSON)) into.cancel.set(k, c);
    into.checks.merge(CheckStats.fromJSON(r.checks ?? []));
    if (r.listen) into.listen.merge(ListenStats.fromJSON(r.listen));
    into.scriptErrors = r.scriptErrors ?? 0;
    return into;
  }
}
