/**
 * The result of a replay as data: each replayed exchange beside its recording with its differences,
 * latency per method and tool (recorded vs replayed), and slowdowns past `--max-slowdown`. The
 * renderers (text, JSON, JUnit) live in src/report/.
 */
import type { ReplayCheckReport } from './replay-check.js';
import type { StoredExchange } from '../store/types.js';
import { compareExchange, type Difference, type ReplayedAnswer } from './compare.js';
import type { MatchRules } from './rules.js';
import { byName, groupName, ReplayStats, type LatencyGroup, type StreamGroup } from './replay-latency.js';
import type { SlowdownLimit } from './slowdown.js';
import { sessionKey } from './replay-plan.js';

export { EXACT_VALUES, groupName, Quantiles, ReplayStats, type LatencyGroup, type StreamGroup } from './replay-latency.js';

/** What the reports show of a recorded exchange. */
export type RecordedSide = Pick<StoredExchange, 'rowid' | 'id' | 'method' | 'target' | 'outcome' | 'latencyUs'> & {
  /** False when the recording holds no answer (still in flight, cancelled unanswered): nothing to compare with. */
  answered?: false;
  /** Its replay session's key (replay-plan.ts). */
  session?: string;
};

/** The replay session of a recorded exchange: its slim `session`, or its key from the full exchange. */
export function sessionOfRecorded(r: RecordedSide): string {
  if (r.session !== undefined) return r.session;
  const full = r as Partial<StoredExchange>;
  return full.era !== undefined && full.recordingId !== undefined && full.connectionId !== undefined ? sessionKey(full as StoredExchange) : '';
}

export interface ReplayedPair<R extends RecordedSide = RecordedSide> {
  recorded: R;
  replayed: ReplayedAnswer;
  differences: Difference[];
}

export interface ReplayReport {
  file: string;
  recordingIds: number[];
  target: string;
  pairs: ReplayedPair[];
  /** `--max-slowdown`: when a group counts as slower (slowdown.ts). */
  slowdown?: SlowdownLimit;
  /** With `slowdown`: groups with too few timed pairs to judge, filled by {@link finishReport}. */
  unjudged?: { group: string; timed: number }[];
  /** With `slowdown`: the latest the replayer's event loop ran (µs), which widened the floor. */
  loopLagMaxUs?: number;
  /** Exchanges never sent (their server was gone or their session could not open). */
  notSent?: number;
  /** The first reason the target failed, one line. */
  failure?: string;
  /** Stopped by a signal before the end: the exchanges planned; the counts are of those answered before it. */
  stopped?: { signal: string; planned: number };
  /** Filled by {@link finishReport}. */
  latency?: LatencyGroup[];
  /** Streamed answers' figures per group (first event, gaps, progress cadence, final, tail), filled by {@link finishReport}. */
  streams?: StreamGroup[];
  /** Group-level differences (slowdowns), filled by {@link finishReport}. */
  groupDifferences?: { group: string; difference: Difference }[];
  /** Counts over every exchange, when `pairs` holds only some (a streamed report: {@link ReplayReportBuilder}). */
  counts?: Omit<ReplayCounts, 'slowdowns'>;
  /** Different exchanges left out of `pairs` (past the listing bound), per method or tool. */
  unlisted?: { listed: number; count: number; byGroup: { group: string; count: number }[] };
  /** `--check`: the rules' findings on the replayed traffic; those at the fail level fail the replay. */
  check?: ReplayCheckReport;
}

/** Adds the latency table and, with `slowdown`, the slowdown differences. */
export function finishReport(report: ReplayReport & { pairs: ReplayedPair<StoredExchange>[] }): ReplayReport {
  const stats = new ReplayStats(report.slowdown);
  for (const p of report.pairs) stats.add(p.recorded, p.replayed);
  return { ...report, ...stats.figures() };
}

export interface ReplayCounts {
  exchanges: number;
  same: number;
  different: number;
  differences: number;
  noResponse: number;
  /** Recorded without an answer, and no difference seen: not compared, so neither same nor different. */
  notCompared: number;
  /** Never sent (the target had failed): neither same nor different, and not compared (no differences). */
  notSent: number;
  slowdowns: number;
}

export type PairVerdict = 'same' | 'different' | 'notCompared' | 'notSent';

/**
 * How an exchange counts: not sent when the target had failed before it; else different when it has
 * a difference; else not compared when nothing was recorded to compare with.
 */
export function pairVerdict(differences: number, answered: boolean, replayed: Pick<ReplayedAnswer, 'notSent'>): PairVerdict {
  return replayed.notSent ? 'notSent' : differences > 0 ? 'different' : answered ? 'same' : 'notCompared';
}

export function countReport(report: ReplayReport): ReplayCounts {
  const slowdowns = report.groupDifferences?.length ?? 0;
  if (report.counts) return { ...report.counts, differences: report.counts.differences + slowdowns, slowdowns };
  const c = { same: 0, different: 0, notCompared: 0, notSent: 0 };
  let differences = 0;
  let noResponse = 0;
  for (const p of report.pairs) {
    const verdict = pairVerdict(p.differences.length, p.recorded.answered !== false, p.replayed);
    c[verdict]++;
    differences += p.differences.length;
    if (p.differences.some((d) => d.kind === 'no_response')) noResponse++;
  }
  return {
    exchanges: report.pairs.length,
    same: c.same,
    different: c.different,
    differences: differences + slowdowns,
    noResponse,
    notCompared: c.notCompared,
    notSent: c.notSent,
    slowdowns,
  };
}

/** Exit 1: a difference, or exchanges the failed target left unsent. */
export function hasDifferences(report: ReplayReport): boolean {
  const c = countReport(report);
  return c.differences > 0 || c.notSent > 0 || (report.check?.failing ?? 0) > 0;
}

/** At most this many different exchanges are listed in full by a streamed report; the rest are counted per method or tool. */
export const MAX_LISTED = 1000;

/**
 * A replay report built as the answers arrive: each answer is compared at once, its figures go to
 * {@link ReplayStats}, and only what the report lists is kept (every exchange, slimmed, with
 * `listAll`, which the JSON and JUnit reports need; else the first {@link MAX_LISTED} different
 * ones): the recorded and replayed messages are dropped after the comparison. Answers may come in
 * any order; they are listed in step order (one held until the steps before it are in).
 */
export class ReplayReportBuilder {
  private readonly stats: ReplayStats;
  private readonly pairs: ReplayedPair[] = [];
  private readonly waiting = new Map<number, ReplayedPair | undefined>();
  private next = 0;
  private readonly counts = { exchanges: 0, same: 0, different: 0, differences: 0, noResponse: 0, notCompared: 0, notSent: 0 };
  private readonly unlisted = new Map<string, number>();
  private unlistedCount = 0;

  constructor(
    private readonly rules: MatchRules,
    private readonly opts: { listAll: boolean; maxListed?: number; slowdown?: SlowdownLimit; lagUs?: () => number },
  ) {
    this.stats = new ReplayStats(opts.slowdown, opts.lagUs);
  }

  /** Step `index`'s answer (every index from 0 once). */
  add(index: number, recorded: StoredExchange, replayed: ReplayedAnswer): void {
    const differences = compareExchange(this.rules, recorded, replayed);
    this.stats.add(recorded, replayed);
    const c = this.counts;
    c.exchanges++;
    const verdict = pairVerdict(differences.length, recorded.response !== undefined, replayed);
    c[verdict]++;
    c.differences += differences.length;
    if (differences.some((d) => d.kind === 'no_response')) c.noResponse++;
    const listed = this.opts.listAll || differences.length > 0;
    this.waiting.set(index, listed ? { recorded: slimRecorded(recorded), replayed: slimReplayed(replayed), differences } : undefined);
    while (this.waiting.has(this.next)) {
      const p = this.waiting.get(this.next);
      this.waiting.delete(this.next++);
      if (p) this.list(p);
    }
  }

  /** What it holds per exchange, for the bound: listed pairs, answers waiting for earlier ones, values held exactly. */
  get retained(): { pairs: number; waiting: number; values: number } {
    return { pairs: this.pairs.length, waiting: this.waiting.size, values: this.stats.retained };
  }

  /** The report; its `slowdown` is the builder's. */
  finish(meta: Omit<ReplayReport, 'pairs' | 'latency' | 'streams' | 'groupDifferences' | 'counts' | 'unlisted' | 'slowdown' | 'unjudged'>): ReplayReport {
    // A stopped replay leaves gaps: what waits behind one is listed all the same, in step order.
    for (const index of [...this.waiting.keys()].sort((a, b) => a - b)) {
      const p = this.waiting.get(index);
      if (p) this.list(p);
    }
    this.waiting.clear();
    const slowdown = this.opts.slowdown ? { slowdown: this.opts.slowdown } : {};
    const report: ReplayReport = { ...meta, ...slowdown, pairs: this.pairs, counts: { ...this.counts }, ...this.stats.figures() };
    if (this.unlistedCount > 0) {
      const byGroup = byName(this.unlisted).map(([group, count]) => ({ group, count }));
      report.unlisted = { listed: this.pairs.filter((p) => p.differences.length > 0).length, count: this.unlistedCount, byGroup };
    }
    return report;
  }

  private list(p: ReplayedPair): void {
    if (this.opts.listAll || this.pairs.length < (this.opts.maxListed ?? MAX_LISTED)) {
      this.pairs.push(p);
      return;
    }
    const name = groupName(p.recorded);
    this.unlisted.set(name, (this.unlisted.get(name) ?? 0) + 1);
    this.unlistedCount++;
  }
}

function slimRecorded(r: StoredExchange): RecordedSide {
  const out: RecordedSide = { rowid: r.rowid, id: r.id, method: r.method, outcome: r.outcome, session: sessionKey(r) };
  if (r.target !== undefined) out.target = r.target;
  if (r.latencyUs !== undefined) out.latencyUs = r.latencyUs;
  if (r.response === undefined) out.answered = false;
  return out;
}

/** The answer without its message and moments (compared and counted already). */
function slimReplayed(a: ReplayedAnswer): ReplayedAnswer {
  const { response: _r, stream: _s, ...rest } = a;
  return rest;
}
