/**
 * The timing figures of one streamed answer (SSE on HTTP, the messages before the response on
 * stdio), from the request: `headers` (response headers), `first_event`, `gap` (between
 * consecutive events), `progress` (between consecutive `notifications/progress`: the cadence),
 * `final` (the JSON-RPC response), `tail` (from the response to the end of the stream). The load
 * engine's SSE histograms use the same names (src/load/results/group-stats.ts); the tap's metrics
 * and spans and the replay report take theirs from here.
 */
import type { Exchange } from './exchange.js';

export const STREAM_FIGURES = ['headers', 'first_event', 'gap', 'progress', 'final', 'tail'] as const;
export type StreamFigure = (typeof STREAM_FIGURES)[number];

/** Epoch µs of one answer's moments; only `startUs` is required. */
export interface StreamTimes {
  startUs: number;
  headersUs?: number;
  eventTimesUs?: readonly number[];
  progressTimesUs?: readonly number[];
  responseUs?: number;
  streamEndUs?: number;
}

/** Each figure's values (µs; `gap` and `progress` one per pair of events); empty unless events came. */
export function streamFigures(t: StreamTimes): Partial<Record<StreamFigure, number[]>> {
  const ev = t.eventTimesUs;
  if (!ev || ev.length === 0) return {};
  const out: Partial<Record<StreamFigure, number[]>> = { first_event: [ev[0]! - t.startUs], gap: gaps(ev) };
  if (t.headersUs !== undefined) out.headers = [t.headersUs - t.startUs];
  if (t.progressTimesUs && t.progressTimesUs.length > 1) out.progress = gaps(t.progressTimesUs);
  if (t.responseUs !== undefined) {
    out.final = [t.responseUs - t.startUs];
    if (t.streamEndUs !== undefined) out.tail = [Math.max(0, t.streamEndUs - t.responseUs)];
  }
  return out;
}

function gaps(times: readonly number[]): number[] {
  const out: number[] = [];
  for (let i = 1; i < times.length; i++) out.push(times[i]! - times[i - 1]!);
  return out;
}

const ANSWERED: ReadonlySet<string> = new Set(['ok', 'jsonrpc_error', 'tool_error']);

/** A recorded exchange's moments (the tap's view). */
export function exchangeStreamTimes(ex: Pick<Exchange, 'startUs' | 'endUs' | 'outcome' | 'progress' | 'transport'>): StreamTimes {
  const t = ex.transport;
  const times: StreamTimes = { startUs: ex.startUs };
  if (t?.responseHeadersUs !== undefined) times.headersUs = t.responseHeadersUs;
  if (t?.eventTimesUs) times.eventTimesUs = t.eventTimesUs;
  if (ex.progress.length > 0) times.progressTimesUs = ex.progress.map((p) => p.timeUs);
  // An answered exchange's end is its response; a stream that ended without one has no final.
  if (ex.endUs !== undefined && ANSWERED.has(ex.outcome)) times.responseUs = ex.endUs;
  if (t?.streamEndUs !== undefined) times.streamEndUs = t.streamEndUs;
  return times;
}
