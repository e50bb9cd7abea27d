/**
 * The result of a replay as data: each replayed exchange beside its recording with its differences,
 * latency per method and tool (recorded vs replayed), and slowdowns past `--max-slowdown`. The
 * renderers (text, JSON, JUnit) live in src/report/.
 */
import { percentile } from '../store/summary.js';
import type { StoredExchange } from '../store/types.js';
import type { Difference, ReplayedAnswer } from './compare.js';
import { STREAM_FIGURES, exchangeStreamTimes, streamFigures, type StreamFigure } from '../model/stream-figures.js';

export interface ReplayedPair {
  recorded: StoredExchange;
  replayed: ReplayedAnswer;
  differences: Difference[];
}

export interface LatencyGroup {
  /** `tools/call echo`, or the method alone. */
  name: string;
  count: number;
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
  /** `--max-slowdown`: a group whose replayed p50 exceeds this times the recorded one differs. */
  maxSlowdown?: number;
  /** Exchanges never sent (their server was gone or their session could not open). */
  notSent?: number;
  /** The first reason the target failed, one line. */
  failure?: string;
  /** Filled by {@link finishReport}. */
  latency?: LatencyGroup[];
  /** Streamed answers' figures per group (first event, gaps, progress cadence, final, tail), filled by {@link finishReport}. */
  streams?: StreamGroup[];
  /** Group-level differences (slowdowns), filled by {@link finishReport}. */
  groupDifferences?: { group: string; difference: Difference }[];
}

/** A slowdown smaller than this (in absolute terms) is noise, whatever the ratio. */
export const SLOWDOWN_FLOOR_US = 1000;

/** Set-up exchanges: their latency is the server's start-up, not a regression of its behaviour. */
const NO_SLOWDOWN = new Set(['initialize', 'server/discover']);

/** The name an exchange is grouped and reported under. */
export function groupName(ex: Pick<StoredExchange, 'method' | 'target'>): string {
  return ex.target === undefined ? ex.method : `${ex.method} ${ex.target}`;
}

/** Adds the latency table and, with `maxSlowdown`, the slowdown differences. */
export function finishReport(report: ReplayReport): ReplayReport {
  const groups = new Map<string, { recorded: number[]; replayed: number[]; count: number }>();
  for (const p of report.pairs) {
    const name = groupName(p.recorded);
    let g = groups.get(name);
    if (!g) groups.set(name, (g = { recorded: [], replayed: [], count: 0 }));
    g.count++;
    if (p.recorded.latencyUs !== undefined) g.recorded.push(p.recorded.latencyUs);
    if (p.replayed.latencyUs !== undefined) g.replayed.push(p.replayed.latencyUs);
  }
  const latency: LatencyGroup[] = [];
  const groupDifferences: { group: string; difference: Difference }[] = [];
  for (const [name, g] of [...groups].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    g.recorded.sort((a, b) => a - b);
    g.replayed.sort((a, b) => a - b);
    const row: LatencyGroup = {
      name,
      count: g.count,
      recordedP50Us: percentile(g.recorded, 50),
      recordedP95Us: percentile(g.recorded, 95),
      replayedP50Us: percentile(g.replayed, 50),
      replayedP95Us: percentile(g.replayed, 95),
    };
    latency.push(row);
    const slow = NO_SLOWDOWN.has(name) ? undefined : slowdown(row, report.maxSlowdown);
    if (slow) groupDifferences.push({ group: name, difference: slow });
  }
  return { ...report, latency, streams: streamGroups(report.pairs), groupDifferences };
}

/** Per group and figure, the recorded and replayed values of the streamed answers; groups without any are left out. */
function streamGroups(pairs: readonly ReplayedPair[]): StreamGroup[] {
  const groups = new Map<string, Map<StreamFigure, { recorded: number[]; replayed: number[] }>>();
  const add = (name: string, side: 'recorded' | 'replayed', figures: Partial<Record<StreamFigure, number[]>>) => {
    for (const f of STREAM_FIGURES) {
      const xs = figures[f];
      if (!xs || xs.length === 0) continue;
      let g = groups.get(name);
      if (!g) groups.set(name, (g = new Map()));
      let v = g.get(f);
      if (!v) g.set(f, (v = { recorded: [], replayed: [] }));
      v[side].push(...xs);
    }
  };
  for (const p of pairs) {
    const name = groupName(p.recorded);
    add(name, 'recorded', streamFigures(exchangeStreamTimes(p.recorded)));
    if (p.replayed.stream) add(name, 'replayed', streamFigures(p.replayed.stream));
  }
  const out: StreamGroup[] = [];
  for (const [name, g] of [...groups].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    for (const f of STREAM_FIGURES) {
      const v = g.get(f);
      if (!v) continue;
      v.recorded.sort((a, b) => a - b);
      v.replayed.sort((a, b) => a - b);
      out.push({
        name,
        figure: f,
        recordedCount: v.recorded.length,
        replayedCount: v.replayed.length,
        recordedP50Us: percentile(v.recorded, 50),
        recordedP95Us: percentile(v.recorded, 95),
        replayedP50Us: percentile(v.replayed, 50),
        replayedP95Us: percentile(v.replayed, 95),
      });
    }
  }
  return out;
}

function slowdown(row: LatencyGroup, max: number | undefined): Difference | undefined {
  const a = row.recordedP50Us;
  const b = row.replayedP50Us;
  if (max === undefined || a === undefined || b === undefined || a <= 0) return undefined;
  if (b <= a * max || b - a < SLOWDOWN_FLOOR_US) return undefined;
  return {
    kind: 'slowdown',
    recorded: a,
    replayed: b,
    message: `p50 ${(a / 1000).toFixed(1)} ms -> ${(b / 1000).toFixed(1)} ms (${(b / a).toFixed(2)}x, more than ${max}x)`,
  };
}

export interface ReplayCounts {
  exchanges: number;
  same: number;
  different: number;
  differences: number;
  noResponse: number;
  slowdowns: number;
}

export function countReport(report: ReplayReport): ReplayCounts {
  let different = 0;
  let differences = 0;
  let noResponse = 0;
  for (const p of report.pairs) {
    if (p.differences.length > 0) different++;
    differences += p.differences.length;
    if (p.differences.some((d) => d.kind === 'no_response')) noResponse++;
  }
  const slowdowns = report.groupDifferences?.length ?? 0;
  return { exchanges: report.pairs.length, same: report.pairs.length - different, different, differences: differences + slowdowns, noResponse, slowdowns };
}

export function hasDifferences(report: ReplayReport): boolean {
  return countReport(report).differences > 0;
}
