/**
 * The result of a replay as data: each replayed exchange beside its recording with its differences,
 * latency per method and tool (recorded vs replayed), and slowdowns past `--max-slowdown`. The
 * renderers (text, JSON, JUnit) live in src/report/.
 */
import type { ReplayCheckReport } from './replay-check.js';
import { newHistogram, recordUs, type Histogram } from '../load/histogram.js';
import { percentile } from '../store/summary.js';
import type { StoredExchange } from '../store/types.js';
import { compareExchange, type Difference, type ReplayedAnswer } from './compare.js';
import type { MatchRules } from './rules.js';
import { STREAM_FIGURES, exchangeStreamTimes, streamFigures, type StreamFigure } from '../model/stream-figures.js';
import { judgeSlowdown, pairSlower, type SlowdownLimit } from './slowdown.js';
import { sessionKey } from './replay-plan.js';

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

export interface LatencyGroup {
  /** `tools/call echo`, or the method alone. */
  name: string;
  count: number;
  /** Exchanges timed on both sides (answered, neither cancelled): the percentiles are of these. */
  timed: number;
  recordedP50Us?: number;
  recordedP95Us?: number;
  replayedP50Us?: number;
  replayedP95Us?: number;
}

/** One figure of a group's streamed answers (SSE), recorded vs replayed, µs. */
export interface StreamGroup {
  name: string;
  figure: StreamFigure;
  recordedCount: number;
  replayedCount: number;
  recordedP50Us?: number;
  recordedP95Us?: number;
  replayedP50Us?: number;
  replayedP95Us?: number;
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

/** Set-up exchanges: their latency is the server's start-up, not a regression of its behaviour. */
const NO_SLOWDOWN = new Set(['initialize', 'server/discover']);

/** The name an exchange is grouped and reported under. */
export function groupName(ex: Pick<StoredExchange, 'method' | 'target'>): string {
  return ex.target === undefined ? ex.method : `${ex.method} ${ex.target}`;
}

/** Adds the latency table and, with `slowdown`, the slowdown differences. */
export function finishReport(report: ReplayReport & { pairs: ReplayedPair<StoredExchange>[] }): ReplayReport {
  const stats = new ReplayStats(report.slowdown);
  for (const p of report.pairs) stats.add(p.recorded, p.replayed);
  return { ...report, ...stats.figures() };
}

/**
 * Whether an exchange's latency counts, on both sides or neither: both answered, neither cancelled
 * (a cancelled call's time is when it was cancelled, not how long the work took).
 */
function timedPair(recorded: StoredExchange, replayed: ReplayedAnswer): [number, number] | undefined {
  if (recorded.response === undefined || recorded.outcome === 'cancelled' || recorded.latencyUs === undefined) return undefined;
  if (replayed.notSent || replayed.response === undefined || replayed.outcome === 'cancelled' || replayed.latencyUs === undefined) return undefined;
  return [recorded.latencyUs, replayed.latencyUs];
}

/**
 * Values of one figure for percentiles: kept exactly up to {@link EXACT_VALUES}, then moved into an
 * HDR histogram (1 µs to 1 h, 3 significant digits): its memory is bounded whatever the count.
 */
export class Quantiles {
  private exact: number[] | undefined = [];
  private hist: Histogram | undefined;
  private sorted = true;

  add(v: number): void {
    if (this.exact) {
      this.exact.push(v);
      this.sorted = false;
      if (this.exact.length > EXACT_VALUES) {
        this.hist = newHistogram();
        for (const x of this.exact) recordUs(this.hist, x);
        this.exact = undefined;
      }
    } else recordUs(this.hist!, v);
  }

  get count(): number {
    return this.exact ? this.exact.length : this.hist!.totalCount;
  }

  /** Values held one by one (at most {@link EXACT_VALUES}). */
  get retained(): number {
    return this.exact?.length ?? 0;
  }

  percentile(p: number): number | undefined {
    if (!this.exact) return this.hist!.getValueAtPercentile(p);
    if (!this.sorted) (this.exact.sort((a, b) => a - b), (this.sorted = true));
    return percentile(this.exact, p);
  }
}

/** Values kept exactly per figure and group before a histogram takes over. */
export const EXACT_VALUES = 10_000;

type Sides = { recorded: Quantiles; replayed: Quantiles };
/** A group's timed pairs: how many, how many slower than the limit, and their ratios (×1000). */
type Paired = { timed: number; slower: number; ratios: Quantiles };
const sides = (): Sides => ({ recorded: new Quantiles(), replayed: new Quantiles() });
const byName = <T>(m: Map<string, T>): [string, T][] => [...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/** Latency and streamed-answer figures per group, fed one exchange at a time. */
export class ReplayStats {
  private readonly groups = new Map<string, Sides & Paired & { count: number }>();
  private readonly streamGroups = new Map<string, Map<StreamFigure, Sides>>();

  /** `lagUs`: how late the replayer runs now (µs), added to a pair's floor as it is added. */
  constructor(
    private readonly limit?: SlowdownLimit,
    private readonly lagUs?: () => number,
  ) {}

  add(recorded: StoredExchange, replayed: ReplayedAnswer): void {
    const name = groupName(recorded);
    let g = this.groups.get(name);
    if (!g) this.groups.set(name, (g = { ...sides(), count: 0, timed: 0, slower: 0, ratios: new Quantiles() }));
    g.count++;
    const pair = timedPair(recorded, replayed);
    if (pair) {
      const [a, b] = pair;
      g.timed++;
      g.recorded.add(a);
      g.replayed.add(b);
      if (this.limit) {
        g.ratios.add(Math.max(1, Math.round((1000 * b) / Math.max(1, a))));
        if (pairSlower(a, b, this.limit, this.lagUs?.() ?? 0)) g.slower++;
      }
    }
    this.addStream(name, 'recorded', streamFigures(exchangeStreamTimes(recorded)));
    if (replayed.stream) this.addStream(name, 'replayed', streamFigures(replayed.stream));
  }

  /** Values held one by one, over every group and figure (bounded: see {@link Quantiles}). */
  get retained(): number {
    let n = 0;
    for (const g of this.groups.values()) n += g.recorded.retained + g.replayed.retained + g.ratios.retained;
    for (const m of this.streamGroups.values()) for (const v of m.values()) n += v.recorded.retained + v.replayed.retained;
    return n;
  }

  figures(): Required<Pick<ReplayReport, 'latency' | 'streams' | 'groupDifferences'>> & Pick<ReplayReport, 'unjudged'> {
    const latency: LatencyGroup[] = [];
    const groupDifferences: { group: string; difference: Difference }[] = [];
    const unjudged: { group: string; timed: number }[] = [];
    for (const [name, g] of byName(this.groups)) {
      const row: LatencyGroup = {
        name,
        count: g.count,
        timed: g.timed,
        recordedP50Us: g.recorded.percentile(50),
        recordedP95Us: g.recorded.percentile(95),
        replayedP50Us: g.replayed.percentile(50),
        replayedP95Us: g.replayed.percentile(95),
      };
      latency.push(row);
      if (!this.limit || NO_SLOWDOWN.has(name)) continue;
      const v = judgeSlowdown(
        {
          timed: g.timed,
          slower: g.slower,
          recordedP50Us: row.recordedP50Us ?? 0,
          replayedP50Us: row.replayedP50Us ?? 0,
          medianRatio: (g.ratios.percentile(50) ?? 0) / 1000,
        },
        this.limit,
      );
      if (v.kind === 'too_few') unjudged.push({ group: name, timed: g.timed });
      if (v.kind === 'slower') {
        const difference: Difference = { kind: 'slowdown', recorded: row.recordedP50Us, replayed: row.replayedP50Us, message: v.message };
        groupDifferences.push({ group: name, difference });
      }
    }
    return { latency, streams: this.streams(), groupDifferences, ...(this.limit ? { unjudged } : {}) };
  }

  private addStream(name: string, side: 'recorded' | 'replayed', figures: Partial<Record<StreamFigure, number[]>>): void {
    for (const f of STREAM_FIGURES) {
      const xs = figures[f];
      if (!xs || xs.length === 0) continue;
      let g = this.streamGroups.get(name);
      if (!g) this.streamGroups.set(name, (g = new Map()));
      let v = g.get(f);
      if (!v) g.set(f, (v = sides()));
      for (const x of xs) v[side].add(x);
    }
  }

  /** Per group and figure, the recorded and replayed values of the streamed answers; groups without any are left out. */
  private streams(): StreamGroup[] {
    const out: StreamGroup[] = [];
    for (const [name, g] of byName(this.streamGroups)) {
      for (const f of STREAM_FIGURES) {
        const v = g.get(f);
        if (!v) continue;
        out.push({
          name,
          figure: f,
          recordedCount: v.recorded.count,
          replayedCount: v.replayed.count,
          recordedP50Us: v.recorded.percentile(50),
          recordedP95Us: v.recorded.percentile(95),
          replayedP50Us: v.replayed.percentile(50),
          replayedP95Us: v.replayed.percentile(95),
        });
      }
    }
    return out;
  }
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
