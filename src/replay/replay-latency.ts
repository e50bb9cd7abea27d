/**
 * Latency per method and tool, recorded vs replayed, and the streamed answers' figures: fed one
 * exchange at a time, with bounded memory; with a `--max-slowdown` limit, the groups it judges slower
 * (slowdown.ts). Pure.
 */
import { newHistogram, recordUs, type Histogram } from '../util/histogram.js';
import { STREAM_FIGURES, exchangeStreamTimes, streamFigures, type StreamFigure } from '../model/stream-figures.js';
import { percentile } from '../store/summary.js';
import type { StoredExchange } from '../store/types.js';
import type { Difference, ReplayedAnswer } from './compare.js';
import { judgeSlowdown, pairSlower, type SlowdownLimit } from './slowdown.js';

/** What {@link ReplayStats.figures} adds to a report. */
export interface ReplayFigures {
  latency: LatencyGroup[];
  streams: StreamGroup[];
  groupDifferences: { group: string; difference: Difference }[];
  /** With a limit: groups with too few timed pairs to judge. */
  unjudged?: { group: string; timed: number }[];
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

/** Set-up exchanges: their latency is the server's start-up, not a regression of its behaviour. */
const NO_SLOWDOWN = new Set(['initialize', 'server/discover']);

/** The name an exchange is grouped and reported under. */
export function groupName(ex: Pick<StoredExchange, 'method' | 'target'>): string {
  return ex.target === undefined ? ex.method : `${ex.method} ${ex.target}`;
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
/** A map's entries sorted by key: stable report order. */
export const byName = <T>(m: Map<string, T>): [string, T][] => [...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

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

  figures(): ReplayFigures {
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
