/**
 * A request group's result part (the whole run, a method, a tool or a step): {@link Sample}s
 * aggregated into counters and HDR histograms. Pure.
 *
 * Counters are kept per failure layer and never folded: `transport` by class (refused, reset,
 * timeout, …), `http` by status (every status, 2xx included), `jsonrpc` by error code, `toolErrors`
 * (`isError: true`), `violations` by kind, `checkFailures`.
 */
import { encodeHist, newHistogram, recordUs, type EncodedHistogram, type Histogram } from '../../util/histogram.js';
import { histogramFromJSON, type ResultPart } from './result-part.js';
import type { Sample } from './sample.js';

export interface GroupCounters {
  requests: number;
  ok: number;
  /** Samples whose outcome is not ok (any layer). */
  errors: number;
  transport: Record<string, number>;
  http: Record<string, number>;
  jsonrpc: Record<string, number>;
  toolErrors: number;
  unanswered: number;
  violations: Record<string, number>;
  checks: number;
  checkFailures: number;
  /** Errors a step declared (`expect:`) and got; not in `errors` (absent in older results). */
  expectedErrors?: number;
}

export function emptyCounters(): GroupCounters {
  return { requests: 0, ok: 0, errors: 0, transport: {}, http: {}, jsonrpc: {}, toolErrors: 0, unanswered: 0, violations: {}, checks: 0, checkFailures: 0 };
}

export const sum = (r: Record<string, number>): number => Object.values(r).reduce((a, b) => a + b, 0);
export const httpErrors = (c: GroupCounters): number => Object.entries(c.http).reduce((a, [k, v]) => (Number(k) >= 400 ? a + v : a), 0);

export function bump(r: Record<string, number>, key: string | number, n = 1): void {
  r[key] = (r[key] ?? 0) + n;
}

export function addCounters(into: GroupCounters, from: GroupCounters): void {
  for (const k of ['requests', 'ok', 'errors', 'toolErrors', 'unanswered', 'checks', 'checkFailures'] as const) into[k] += from[k];
  for (const k of ['transport', 'http', 'jsonrpc', 'violations'] as const) for (const [key, n] of Object.entries(from[k])) bump(into[k], key, n);
  if (from.expectedErrors) into.expectedErrors = (into.expectedErrors ?? 0) + from.expectedErrors;
}

/**
 * SSE answers, each from the request's send unless said otherwise: `headers` (response headers),
 * `first_event`, `gap` (between consecutive events), `progress` (between consecutive
 * `notifications/progress`: the cadence), `final` (the JSON-RPC response), `tail` (from the
 * response to the end of the stream).
 */
export const SSE_SERIES = ['headers', 'first_event', 'gap', 'progress', 'final', 'tail'] as const;
export type SseSeries = (typeof SSE_SERIES)[number];

export function newSseHistograms(): Record<SseSeries, Histogram> {
  return { headers: newHistogram(), first_event: newHistogram(), gap: newHistogram(), progress: newHistogram(), final: newHistogram(), tail: newHistogram() };
}

/** A request group (the run, a method, a tool, a step) as the result file holds it. */
export interface GroupResult {
  counters: GroupCounters;
  latency: EncodedHistogram;
  service: EncodedHistogram;
  /** SSE answers (see SSE_SERIES); results written before `headers`, `progress` and `tail` lack them. */
  sse?: Partial<Record<SseSeries, EncodedHistogram>> & { first_event: EncodedHistogram; gap: EncodedHistogram; final: EncodedHistogram };
}

/** A request group's counters and latency histograms: the result part of requests. */
export class GroupStats implements ResultPart<[Sample], GroupResult> {
  readonly counters = emptyCounters();
  /** From the intended start to the response. */
  readonly latency: Histogram = newHistogram();
  /** From the moment the request was sent to the response. */
  readonly service: Histogram = newHistogram();
  /** SSE answers only (see {@link SSE_SERIES}). */
  sse: Record<SseSeries, Histogram> | undefined;

  record(s: Sample): void {
    const c = this.counters;
    c.requests++;
    if (s.outcome === 'ok') c.ok++;
    else c.errors++;
    if (s.transportError) bump(c.transport, s.transportError);
    if (s.httpStatus !== undefined) bump(c.http, s.httpStatus);
    if (s.rpcCode !== undefined) bump(c.jsonrpc, s.rpcCode);
    if (s.isError) c.toolErrors++;
    if (s.outcome === 'unanswered') c.unanswered++;
    for (const v of s.violations) bump(c.violations, v);
    c.checks += s.checks;
    c.checkFailures += s.checkFailures;
    if (s.expected) c.expectedErrors = (c.expectedErrors ?? 0) + 1;
    recordUs(this.latency, s.endUs - s.intendedUs);
    recordUs(this.service, s.endUs - s.sentUs);
    if (s.sse && s.eventTimesUs && s.eventTimesUs.length > 0) this.recordSse(s, s.eventTimesUs);
  }

  private recordSse(s: Sample, times: readonly number[]): void {
    const h = (this.sse ??= newSseHistograms());
    if (s.headersUs !== undefined) recordUs(h.headers, s.headersUs - s.sentUs);
    recordUs(h.first_event, times[0]! - s.sentUs);
    for (let i = 1; i < times.length; i++) recordUs(h.gap, times[i]! - times[i - 1]!);
    const p = s.progressTimesUs;
    if (p) for (let i = 1; i < p.length; i++) recordUs(h.progress, p[i]! - p[i - 1]!);
    recordUs(h.final, s.endUs - s.sentUs);
    if (s.streamEndUs !== undefined && s.outcome !== 'unanswered') recordUs(h.tail, s.streamEndUs - s.endUs);
  }

  /** One of the group's histograms (an SSE one the group never saw is empty). */
  histogram(series: 'latency' | 'service' | SseSeries): Histogram {
    if (series === 'latency' || series === 'service') return this[series];
    return this.sse?.[series] ?? newHistogram();
  }

  merge(other: GroupStats): void {
    addCounters(this.counters, other.counters);
    this.latency.add(other.latency);
    this.service.add(other.service);
    const sse = other.sse;
    if (sse) {
      const mine = (this.sse ??= newSseHistograms());
      for (const k of SSE_SERIES) mine[k].add(sse[k]);
    }
  }

  toJSON(): GroupResult {
    const r: GroupResult = { counters: structuredClone(this.counters), latency: encodeHist(this.latency), service: encodeHist(this.service) };
    const sse = this.sse;
    if (sse) r.sse = Object.fromEntries(SSE_SERIES.map((k) => [k, encodeHist(sse[k])])) as NonNullable<GroupResult['sse']>;
    return r;
  }

  static fromJSON(j: GroupResult): GroupStats {
    const g = new GroupStats();
    addCounters(g.counters, j.counters);
    g.latency.add(histogramFromJSON(j.latency));
    g.service.add(histogramFromJSON(j.service));
    const sse = j.sse;
    if (sse) g.sse = Object.fromEntries(SSE_SERIES.map((k) => [k, histogramFromJSON(sse[k])])) as Record<SseSeries, Histogram>;
    return g;
  }
}
