/**
 * Cancellation experiments, the pure part: what one cancelled call showed ({@link CancelObservation}),
 * its verdict, and their aggregation per tool into the result's `cancel` section (counters and HDR
 * histograms, so shards merge exactly; the verdict is recomputed from the counters).
 *
 * A call's verdict rests on evidence only (docs/cancellation.md has the table):
 * - **ignored** when the server showed work later than `grace` after the cancel (after the server
 *   saw it, when the probe says when: work before that is not the server's to stop): progress
 *   notifications, a final (non-error) response, the probe saying the work ran on, or a stdio
 *   server process busy on the CPU after the cancel with nothing else asked of it (against its
 *   idle rate); `workAfterUs` is how long (at least);
 * - **honoured** only on the probe's word that the work stopped: SDK 1.x servers drop a cancelled
 *   handler's progress and result, and a server may end a cancelled call's stream (or answer it)
 *   while its work runs on, so silence, a stream end or an error answer prove nothing; `stopDelayUs` is the cancel
 *   to the probe's end of the work;
 * - **unknown** otherwise, with the reason (no probe, or a probe with no record of the call).
 */
import { encodeHist, newHistogram, recordUs, type EncodedHistogram, type Histogram } from '../../util/histogram.js';
import { histogramFromJSON, type ResultPart } from './result-part.js';

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
  /** A stdio server process's CPU time after the cancel, when it could be read. */
  cpu?: CpuWindow;
}

/** The server process's CPU time (user + system, all its threads) over the watch after the grace. */
export interface CpuWindow {
  /** The window, µs after the cancel: from the end of the grace to the end of the watch. */
  fromUs: number;
  toUs: number;
  /** CPU time the process used in the window, µs. */
  busyUs: number;
  /** CPU time per wall time of the same process right before the call, nothing in flight. */
  idleRate: number;
  /** No other request was in flight on, or sent to, the process during the window. */
  alone: boolean;
  /** The machine's cores: CPU time spread over them lasts at least busy / cores of wall time. */
  cores: number;
}

/**
 * The CPU says "working" when, above the idle rate, the process used at least CPU_MIN_BUSY_US and
 * CPU_BUSY_SHARE of the window: more than a GC or a notification's handling, and still reached by
 * a process that gets a quarter of a core on a loaded machine.
 */
export const CPU_MIN_BUSY_US = 100_000;
export const CPU_BUSY_SHARE = 0.1;
/** Above this idle rate (one clock tick in the 200 ms idle window), the process is not idle enough to tell. */
export const CPU_IDLE_MAX = 0.05;
/** Shorter windows are a few clock ticks (10 ms each): too coarse to read. */
export const CPU_MIN_WINDOW_US = 200_000;

/** The CPU window as work after the cancel, when it is sound to read it so. */
function cpuWork(c: CpuWindow | undefined): [number, string] | undefined {
  if (!c || !c.alone || c.idleRate > CPU_IDLE_MAX) return undefined;
  const span = c.toUs - c.fromUs;
  const work = c.busyUs - c.idleRate * span;
  if (span < CPU_MIN_WINDOW_US || work < Math.max(CPU_MIN_BUSY_US, CPU_BUSY_SHARE * span)) return undefined;
  const pct = (x: number) => `${Math.round(x * 100)}%`;
  return [
    c.fromUs + Math.min(work / Math.max(1, c.cores), span),
    `cpu: the server process used ${ms(c.busyUs)} of CPU in the ${ms(span)} after the grace, nothing else asked of it (idle before the call: ${pct(c.idleRate)})`,
  ];
}

/** Why no verdict could be reached without a probe's answer. */
export const NO_PROBE_REASON = 'SDK 1.x servers drop progress after a cancel, so seeing no work is no evidence: give --probe TOOL (cancel.probe)';
const CLOSED_REASON = 'closing the stream hides the work: give --probe TOOL (cancel.probe)';

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
  // The probe's word about the work, when it has one, is more precise than the process's CPU.
  const cpu = p?.found ? undefined : cpuWork(o.cpu);
  if (cpu) work.push(cpu);
  if (work.length > 0) {
    const [workAfterUs] = work.reduce((a, b) => (b[0] > a[0] ? b : a));
    return { verdict: 'ignored', workAfterUs, evidence: `${o.mechanism}: ${work.map((w) => w[1]).join('; ')}` };
  }
  // Honoured only on the server's own word: the probe found the work and it is not running.
  if (p?.found && !p.running) {
    if (p.endedAfterUs === undefined) return { verdict: 'honoured', evidence: `${o.mechanism}: probe: not running, no work after the cancel` };
    return {
      verdict: 'honoured',
      stopDelayUs: Math.max(0, p.endedAfterUs),
      evidence: `${o.mechanism}: probe: work stopped ${ms(p.endedAfterUs)} after the cancel`,
    };
  }
  if (p) return { verdict: 'unknown', evidence: `${o.mechanism}: ${p.error ?? 'probe: no record of the call'}` };
  return { verdict: 'unknown', evidence: `${o.mechanism}: ${o.mechanism === 'notifications/cancelled' ? NO_PROBE_REASON : CLOSED_REASON}` };
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
const rank = (e: string) => (e.startsWith('ignored') ? 0 : e.startsWith('unknown') ? 1 : 2);

const COUNTS = ['calls', 'cancelled', 'completedBeforeCancel', 'honoured', 'ignored', 'unknown', 'finalResults', 'progressAfterCancel'] as const;
const SERIES = ['stopDelay', 'workAfter', 'streamEnd', 'nextRequest'] as const;

/** One tool's (or step's) cancellation figures: the result part of cancel steps. */
export class CancelStats implements ResultPart<[CancelObservation, CallVerdict | undefined], CancelGroupResult> {
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

  /** Judged again from the counters, so a merge gets the verdict of the whole. */
  get verdict(): CancelVerdict {
    return verdictOf(this);
  }

  /** Counters and histograms add; the evidence deciding the verdict (ignored, then unknown) is kept first. */
  merge(o: CancelStats): void {
    for (const c of COUNTS) this[c] += o[c];
    for (const s of SERIES) this[s].add(o[s]);
    for (const m of o.mechanisms) this.mechanisms.add(m);
    this.evidence = [...this.evidence, ...o.evidence].sort((e, f) => rank(e) - rank(f)).slice(0, MAX_EVIDENCE);
  }

  toJSON(): CancelGroupResult {
    return {
      verdict: this.verdict,
      mechanisms: [...this.mechanisms].sort(),
      calls: this.calls,
      cancelled: this.cancelled,
      completedBeforeCancel: this.completedBeforeCancel,
      honoured: this.honoured,
      ignored: this.ignored,
      unknown: this.unknown,
      finalResults: this.finalResults,
      progressAfterCancel: this.progressAfterCancel,
      stopDelay: encodeHist(this.stopDelay),
      workAfter: encodeHist(this.workAfter),
      streamEnd: encodeHist(this.streamEnd),
      nextRequest: encodeHist(this.nextRequest),
      evidence: [...this.evidence],
    };
  }

  static fromJSON(j: CancelGroupResult): CancelStats {
    const s = new CancelStats();
    for (const c of COUNTS) s[c] = j[c];
    for (const k of SERIES) s[k].add(histogramFromJSON(j[k]));
    s.mechanisms = new Set(j.mechanisms);
    s.evidence = [...j.evidence];
    return s;
  }

  private addEvidence(v: CallVerdict): void {
    const line = `${v.verdict}: ${v.evidence}`;
    if (this.evidence.length < MAX_EVIDENCE) {
      // Kept in rank order (stable) as it comes: an ignored call judged after an unknown one leads.
      this.evidence.push(line);
      this.evidence.sort((e, f) => rank(e) - rank(f));
    } else {
      // The evidence that decides the verdict comes first: ignored, then unknown, then honoured.
      const i = this.evidence.findIndex((e) => rank(e) > rank(line));
      if (i >= 0) this.evidence[i] = line;
    }
  }
}

/** Any ignored call is the verdict; honoured needs every cancelled call's evidence of it. */
export function verdictOf(c: { honoured: number; ignored: number; unknown: number }): CancelVerdict {
  if (c.ignored > 0) return 'ignored';
  return c.honoured > 0 && c.unknown === 0 ? 'honoured' : 'unknown';
}

/** Why a group's verdict is unknown: its first unknown call's reason. */
export function unknownReason(g: { cancelled: number; evidence: readonly string[] }): string {
  if (g.cancelled === 0) return 'no call was cancelled';
  const e = g.evidence.find((x) => x.startsWith('unknown: '));
  return e ? e.slice('unknown: '.length) : 'not every cancelled call showed evidence';
}
