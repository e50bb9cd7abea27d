/**
 * Cancellation experiments, the pure part: what one cancelled call showed ({@link CancelObservation}),
 * its verdict, and their aggregation per tool into the result's `cancel` section (counters and HDR
 * histograms, so shards merge exactly; the verdict is recomputed from the counters).
 *
 * A call's verdict:
 * - **ignored** when the server showed work later than `grace` after the cancel (after the server
 *   saw it, when the probe says when: work before that is not the server's to stop): progress
 *   notifications, a final (non-error) response, or the probe saying the work ran on; `workAfterUs`
 *   is how long (at least: a probe finding it still running says "until the probe");
 * - **honoured** when it could have shown work and did not; `stopDelayUs` is the cancel to the
 *   last sign of the call (the server ending the stream, an error answer, a message within the
 *   grace, the probe's end of the work), when there is one;
 * - **unknown** when nothing after the cancel could be seen: the stream was closed by the client
 *   (2026-07-28 HTTP, or `close: true`) and no probe was asked.
 */
import { decodeHistogram, encodeHistogram, newHistogram, recordUs, summarize, type Histogram, type LatencySummary } from './histogram.js';

/** Same shape as the result's other histograms (load-result.ts), without importing it (no cycle). */
export interface EncodedHistogram {
  hdr: string;
  summary: LatencySummary;
}

function encodeHist(h: Histogram): EncodedHistogram {
  const hdr = encodeHistogram(h);
  return { hdr, summary: summarize(decodeHistogram(hdr)) };
}

export type CancelMechanism = 'close' | 'notifications/cancelled' | 'notifications/cancelled+close';
export type CancelVerdict = 'honoured' | 'ignored' | 'unknown';

/** What the probe tool said about the cancelled call's work (times relative to the cancel). */
export interface ProbeFinding {
  found: boolean;
  running: boolean;
  /** The work's last unit, µs after the cancel (negative: before it). */
  lastWorkAfterUs?: number;
  /** When the work ended, µs after the cancel. */
  endedAfterUs?: number;
  /** When the server saw the cancel, µs after the client sent it (its transit and queueing). */
  cancelSeenAfterUs?: number;
  /** The probe answered this long after the cancel (a running work went on at least this long). */
  askedAfterUs: number;
  error?: string;
}

export interface CancelObservation {
  /** The tool (tools/call) or step the call belongs to: the verdict's key. */
  key: string;
  mechanism: CancelMechanism;
  /** False when the call ended before its cancel was due: a normal call, no verdict. */
  fired: boolean;
  progressBefore: number;
  /** Arrival of each progress notification after the cancel, µs after it. */
  progressAfterUs: number[];
  /** A final response after the cancel: its kind and arrival. */
  final?: { kind: 'result' | 'error'; afterUs: number };
  /** How the exchange ended: the server closed the stream, the client did (the cancel), or the watch ended. */
  streamEnd: 'server' | 'client' | 'observe_end' | 'response';
  streamEndAfterUs: number;
  probe?: ProbeFinding;
  /** Latency of the request sent right after the observation on the same session or process. */
  nextRequestUs?: number;
}

export interface CallVerdict {
  verdict: CancelVerdict;
  workAfterUs?: number;
  stopDelayUs?: number;
  evidence: string;
}

const ms = (us: number) => `${+(us / 1000).toFixed(1)}ms`;

export function judgeCall(o: CancelObservation, graceMs: number): CallVerdict {
  const graceUs = graceMs * 1000 + Math.max(0, o.probe?.cancelSeenAfterUs ?? 0);
  const work: Array<[number, string]> = [];
  const late = o.progressAfterUs.filter((t) => t > graceUs);
  if (late.length > 0)
    work.push([late[late.length - 1]!, `${late.length} progress notification(s) after the cancel, the last ${ms(late[late.length - 1]!)} after it`]);
  if (o.final?.kind === 'result' && o.final.afterUs > graceUs) work.push([o.final.afterUs, `a final result ${ms(o.final.afterUs)} after the cancel`]);
  const p = o.probe;
  if (p?.found && p.running) work.push([p.askedAfterUs, `probe: still running ${ms(p.askedAfterUs)} after the cancel`]);
  else if (p?.found && p.lastWorkAfterUs !== undefined && p.lastWorkAfterUs > graceUs)
    work.push([p.lastWorkAfterUs, `probe: last work ${ms(p.lastWorkAfterUs)} after the cancel`]);
  if (work.length > 0) {
    const [workAfterUs] = work.reduce((a, b) => (b[0] > a[0] ? b : a));
    return { verdict: 'ignored', workAfterUs, evidence: `${o.mechanism}: ${work.map((w) => w[1]).join('; ')}` };
  }
  const blind = o.mechanism !== 'notifications/cancelled' && !(p?.found ?? false);
  if (blind) return { verdict: 'unknown', evidence: `${o.mechanism}: nothing can be seen after closing the stream (no probe)` };
  const stops: Array<[number, string]> = [];
  if (p?.found && p.endedAfterUs !== undefined) stops.push([p.endedAfterUs, `probe: work stopped ${ms(p.endedAfterUs)} after the cancel`]);
  if (o.streamEnd === 'server') stops.push([o.streamEndAfterUs, `server ended the stream ${ms(o.streamEndAfterUs)} after the cancel`]);
  if (o.final?.kind === 'error') stops.push([o.final.afterUs, `error answer ${ms(o.final.afterUs)} after the cancel`]);
  const last = o.progressAfterUs[o.progressAfterUs.length - 1];
  if (last !== undefined) stops.push([last, `last progress ${ms(last)} after the cancel (within the grace)`]);
  if (stops.length === 0) return { verdict: 'honoured', evidence: `${o.mechanism}: no work seen in the ${ms(o.streamEndAfterUs)} watched` };
  // The probe's end of the work is the server's own word; otherwise the latest sign seen.
  const stop = stops[0]![1].startsWith('probe') ? stops[0]! : stops.reduce((a, b) => (b[0] > a[0] ? b : a));
  return { verdict: 'honoured', stopDelayUs: Math.max(0, stop[0]), evidence: `${o.mechanism}: ${stop[1]}` };
}

/** Aggregated cancellation figures of one tool (or step), as in the JSON result. */
export interface CancelGroupResult {
  verdict: CancelVerdict;
  mechanisms: CancelMechanism[];
  /** Calls of steps with a `cancel:` block, the ones cancelled, and those that ended before the cancel was due. */
  calls: number;
  cancelled: number;
  completedBeforeCancel: number;
  honoured: number;
  ignored: number;
  unknown: number;
  /** Cancelled calls that still got a final result (not an error). */
  finalResults: number;
  progressAfterCancel: number;
  /** Honoured calls: cancel -> the call's last sign (see judgeCall). */
  stopDelay: EncodedHistogram;
  /** Ignored calls: cancel -> the last sign of work seen (how long work went on, at least). */
  workAfter: EncodedHistogram;
  /** Cancel -> the end of the exchange (the server ending the stream, or the watch). */
  streamEnd: EncodedHistogram;
  /** Latency of the next request on the same session or process. */
  nextRequest: EncodedHistogram;
  /** A few calls' evidence, ignored ones first. */
  evidence: string[];
}

const MAX_EVIDENCE = 5;

export class CancelStats {
  mechanisms = new Set<CancelMechanism>();
  calls = 0;
  cancelled = 0;
  completedBeforeCancel = 0;
  honoured = 0;
  ignored = 0;
  unknown = 0;
  finalResults = 0;
  progressAfterCancel = 0;
  readonly stopDelay: Histogram = newHistogram();
  readonly workAfter: Histogram = newHistogram();
  readonly streamEnd: Histogram = newHistogram();
  readonly nextRequest: Histogram = newHistogram();
  evidence: string[] = [];

  record(o: CancelObservation, v: CallVerdict | undefined): void {
    this.calls++;
    this.mechanisms.add(o.mechanism);
    if (o.nextRequestUs !== undefined) recordUs(this.nextRequest, o.nextRequestUs);
    if (!o.fired || !v) {
      this.completedBeforeCancel++;
      return;
    }
    this.cancelled++;
    this[v.verdict]++;
    if (o.final?.kind === 'result') this.finalResults++;
    this.progressAfterCancel += o.progressAfterUs.length;
    recordUs(this.streamEnd, o.streamEndAfterUs);
    if (v.stopDelayUs !== undefined) recordUs(this.stopDelay, v.stopDelayUs);
    if (v.workAfterUs !== undefined) recordUs(this.workAfter, v.workAfterUs);
    this.addEvidence(v);
  }

  private addEvidence(v: CallVerdict): void {
    const line = `${v.verdict}: ${v.evidence}`;
    if (this.evidence.length < MAX_EVIDENCE) this.evidence.push(line);
    else if (v.verdict === 'ignored') {
      // Ignored calls are the evidence that matters: they replace honoured ones.
      const i = this.evidence.findIndex((e) => !e.startsWith('ignored'));
      if (i >= 0) this.evidence[i] = line;
    }
  }
}

export function verdictOf(c: { honoured: number; ignored: number }): CancelVerdict {
  if (c.ignored > 0) return 'ignored';
  return c.honoured > 0 ? 'honoured' : 'unknown';
}

export function cancelGroupResult(s: CancelStats): CancelGroupResult {
  return {
    verdict: verdictOf(s),
    mechanisms: [...s.mechanisms].sort(),
    calls: s.calls,
    cancelled: s.cancelled,
    completedBeforeCancel: s.completedBeforeCancel,
    honoured: s.honoured,
    ignored: s.ignored,
    unknown: s.unknown,
    finalResults: s.finalResults,
    progressAfterCancel: s.progressAfterCancel,
    stopDelay: encodeHist(s.stopDelay),
    workAfter: encodeHist(s.workAfter),
    streamEnd: encodeHist(s.streamEnd),
    nextRequest: encodeHist(s.nextRequest),
    evidence: [...s.evidence],
  };
}

const COUNTS = ['calls', 'cancelled', 'completedBeforeCancel', 'honoured', 'ignored', 'unknown', 'finalResults', 'progressAfterCancel'] as const;
const SERIES = ['stopDelay', 'workAfter', 'streamEnd', 'nextRequest'] as const;

function addHist(a: EncodedHistogram | undefined, b: EncodedHistogram | undefined): EncodedHistogram {
  const h = newHistogram();
  if (a) h.add(decodeHistogram(a.hdr));
  if (b) h.add(decodeHistogram(b.hdr));
  return encodeHist(h);
}

/** Shards of one run: counters and histograms add, the verdict is judged again. */
export function mergeCancel(
  a: Record<string, CancelGroupResult> | undefined,
  b: Record<string, CancelGroupResult> | undefined,
): Record<string, CancelGroupResult> | undefined {
  if (!a && !b) return undefined;
  const keys = [...new Set([...Object.keys(a ?? {}), ...Object.keys(b ?? {})])].sort((x, y) => x.localeCompare(y));
  const out: Record<string, CancelGroupResult> = {};
  for (const k of keys) {
    const x = a?.[k];
    const y = b?.[k];
    const g = { ...(x ?? y)! };
    for (const c of COUNTS) g[c] = (x?.[c] ?? 0) + (y?.[c] ?? 0);
    for (const s of SERIES) g[s] = addHist(x?.[s], y?.[s]);
    g.mechanisms = [...new Set([...(x?.mechanisms ?? []), ...(y?.mechanisms ?? [])])].sort();
    const ev = [...(x?.evidence ?? []), ...(y?.evidence ?? [])];
    g.evidence = [...ev.filter((e) => e.startsWith('ignored')), ...ev.filter((e) => !e.startsWith('ignored'))].slice(0, MAX_EVIDENCE);
    g.verdict = verdictOf(g);
    out[k] = g;
  }
  return out;
}
