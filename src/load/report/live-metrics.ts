/**
 * Live metrics of a load run (`mcptap load --metrics/--otlp`): an observer of the run
 * ({@link LoadRunObserver}) that feeds OpenTelemetry instruments on the meter it is given. The
 * rest of the load engine knows nothing of OTel; this module sees a run only through that interface.
 *
 * Every series carries the scenario, the phase and the shard (`mcptap.load.shard`, `i/n`), so the
 * shards of a run add up in PromQL (`sum without (mcptap_load_shard, instance)`). Counters equal
 * the JSON result's at the end of a run: requests and errors are counted from the same samples,
 * iterations are read from the same phase statistics. Names (with Prometheus' suffixes):
 * - mcptap_load_iterations_{scheduled,started,dropped,completed}_total, _in_flight, mcptap_load_target_rate_per_second
 * - mcptap_load_requests_total (outcome), mcptap_load_request_duration_seconds (from the intended start)
 * - mcptap_load_errors_total (mcptap_load_error_layer: transport, http, jsonrpc, tool, violation, check; error_type: the code)
 * - mcptap_load_http_responses_total (every status), mcptap_load_checks_total (result)
 * - mcptap_load_sse_duration_seconds (series: first_event, gap, final), mcptap_load_sse_events_total
 * - mcptap_load_threshold_passed (1 passed, 0 failed; judged on what ran so far, final at the end)
 *
 * Counts are kept here and observed at collection (one Map lookup per sample, as the tap's
 * metrics sink does); only the histograms are recorded into the SDK per sample.
 */
import type { Attributes, Histogram, Meter, ObservableResult } from '@opentelemetry/api';
import { ATTR_ERROR_TYPE, ATTR_HTTP_RESPONSE_STATUS_CODE } from '@opentelemetry/semantic-conventions';
import { ATTR_GEN_AI_TOOL_NAME, ATTR_MCP_METHOD_NAME } from '@opentelemetry/semantic-conventions/incubating';
import type { LoadResult, ThresholdOutcome } from '../results/load-result.js';
import type { PhaseStats } from '../results/result-parts.js';
import type { LiveLoadRun, LoadRunObserver } from '../run/run-load.js';
import type { Sample } from '../results/sample.js';
import { KeyedCounts, type KeyedCount } from '../../telemetry/keyed-counts.js';
import { MCPTAP_ATTR } from '../../telemetry/otel-attributes.js';

export const LOAD_ATTR = {
  scenario: 'mcptap.load.scenario',
  phase: 'mcptap.load.phase',
  shard: 'mcptap.load.shard',
  step: 'mcptap.load.step',
  errorLayer: 'mcptap.load.error.layer',
  checkResult: 'mcptap.load.check.result',
  sseSeries: 'mcptap.load.sse.series',
  thresholdScope: 'mcptap.load.threshold.scope',
  thresholdExpression: 'mcptap.load.threshold.expression',
} as const;

export const LOAD_METRIC = {
  scheduled: 'mcptap.load.iterations.scheduled',
  started: 'mcptap.load.iterations.started',
  dropped: 'mcptap.load.iterations.dropped',
  completed: 'mcptap.load.iterations.completed',
  inFlight: 'mcptap.load.iterations.in_flight',
  targetRate: 'mcptap.load.target_rate',
  requests: 'mcptap.load.requests',
  duration: 'mcptap.load.request.duration',
  errors: 'mcptap.load.errors',
  httpResponses: 'mcptap.load.http.responses',
  checks: 'mcptap.load.checks',
  sseDuration: 'mcptap.load.sse.duration',
  sseEvents: 'mcptap.load.sse.events',
  thresholdPassed: 'mcptap.load.threshold.passed',
} as const;

/** Seconds; finer than the semconv buckets at the low end, where a loopback load run lives. */
export const LOAD_DURATION_BUCKETS_S = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

type Layer = 'transport' | 'http' | 'jsonrpc' | 'tool' | 'violation' | 'check';

/** Per (phase, method, tool, step): the attribute sets and counts of one request kind. */
interface RequestKey {
  id: string;
  attrs: Attributes;
  outcome: Map<string, KeyedCount>;
}

export class LoadLiveMetrics implements LoadRunObserver {
  private run: LiveLoadRun | undefined;
  private base: Attributes = {};
  private final: ThresholdOutcome[] | undefined;
  private readonly requests = new KeyedCounts();
  private readonly errors = new KeyedCounts();
  private readonly http = new KeyedCounts();
  private readonly checks = new KeyedCounts();
  private readonly sseEvents = new KeyedCounts();
  private readonly keys = new Map<string, RequestKey>();
  private readonly duration: Histogram;
  private readonly sseDuration: Histogram;
  private readonly sseSets = new Map<string, Attributes>();

  constructor(meter: Meter) {
    const seconds = { unit: 's', advice: { explicitBucketBoundaries: LOAD_DURATION_BUCKETS_S } };
    this.duration = meter.createHistogram(LOAD_METRIC.duration, {
      ...seconds,
      description: 'Latency of a load request from its intended start (schedule) to its response.',
    });
    this.sseDuration = meter.createHistogram(LOAD_METRIC.sseDuration, {
      ...seconds,
      description: 'SSE answers: time to the first event, gaps between events, time to the final response.',
    });
    const counter = (name: string, unit: string, description: string, counts: KeyedCounts) =>
      meter.createObservableCounter(name, { unit, description }).addCallback((r) => counts.observe(r));
    counter(LOAD_METRIC.requests, '{request}', 'Load requests completed, by outcome.', this.requests);
    counter(LOAD_METRIC.errors, '{error}', 'Load errors by layer (transport, http, jsonrpc, tool, violation, check) and code.', this.errors);
    counter(LOAD_METRIC.httpResponses, '{response}', 'HTTP responses to load requests, by status.', this.http);
    counter(LOAD_METRIC.checks, '{check}', 'Checks made by load iterations, by result.', this.checks);
    counter(LOAD_METRIC.sseEvents, '{event}', 'SSE events received in answers to load requests.', this.sseEvents);
    const iterations = (name: string, field: 'scheduled' | 'started' | 'dropped' | 'completed', description: string) =>
      meter.createObservableCounter(name, { unit: '{iteration}', description }).addCallback((r) => this.observePhases(r, field));
    iterations(LOAD_METRIC.scheduled, 'scheduled', 'Iterations due by the schedule (open, replay) or planned (closed with a count).');
    iterations(LOAD_METRIC.started, 'started', 'Iterations started.');
    iterations(LOAD_METRIC.dropped, 'dropped', 'Iterations due but not started: the in-flight cap was reached.');
    iterations(LOAD_METRIC.completed, 'completed', 'Iterations completed.');
    meter
      .createObservableUpDownCounter(LOAD_METRIC.inFlight, { unit: '{iteration}', description: 'Iterations in flight.' })
      .addCallback((r) => this.run && r.observe(this.run.metrics.inFlight, this.phaseAttrs(this.currentPhase())));
    meter
      .createObservableGauge(LOAD_METRIC.targetRate, { unit: '{iteration}/s', description: 'The rate the open phase asks of this process (its shard share).' })
      .addCallback((r) => {
        const rate = this.run?.targetRate();
        if (rate !== undefined) r.observe(rate, this.phaseAttrs(this.currentPhase()));
      });
    meter
      .createObservableGauge(LOAD_METRIC.thresholdPassed, { description: 'Thresholds: 1 passed, 0 failed (on what ran so far; final at the end of the run).' })
      .addCallback((r) => this.observeThresholds(r));
  }

  attach(run: LiveLoadRun): void {
    this.run = run;
    this.base = Object.freeze({ [LOAD_ATTR.scenario]: run.scenario, [LOAD_ATTR.shard]: `${run.shard.index}/${run.shard.count}` });
  }

  finished(result: LoadResult): void {
    this.final = result.thresholds;
  }

  sample(s: Sample, phase: PhaseStats | undefined): void {
    const key = this.requestKey(phase?.name ?? '', s.method, s.tool, s.step);
    this.count(this.requests, key, `r${s.outcome}`, { [MCPTAP_ATTR.outcome]: s.outcome });
    this.duration.record((s.endUs - s.intendedUs) / 1e6, key.attrs);
    if (s.transportError) this.error(key, 'transport', s.transportError);
    if (s.httpStatus !== undefined) {
      this.count(this.http, key, `h${s.httpStatus}`, { [ATTR_HTTP_RESPONSE_STATUS_CODE]: s.httpStatus });
      if (s.httpStatus >= 400) this.error(key, 'http', String(s.httpStatus));
    }
    if (s.rpcCode !== undefined) this.error(key, 'jsonrpc', String(s.rpcCode));
    if (s.isError) this.error(key, 'tool', 'tool_error');
    for (const v of s.violations) this.error(key, 'violation', v);
    if (s.checks > 0) this.countChecks(key, s.checks, s.checkFailures);
    if (s.sse && s.eventTimesUs && s.eventTimesUs.length > 0) this.recordSse(s, s.eventTimesUs, key);
  }

  /** A scripted iteration's check (a step's declarative checks come with its sample). */
  check(step: string, ok: boolean, phase: PhaseStats | undefined): void {
    this.countChecks(this.requestKey(phase?.name ?? '', undefined, undefined, step), 1, ok ? 0 : 1);
  }

  private countChecks(key: RequestKey, checks: number, failures: number): void {
    if (checks > failures) this.count(this.checks, key, 'cpass', { [LOAD_ATTR.checkResult]: 'pass' }, checks - failures);
    if (failures > 0) {
      this.count(this.checks, key, 'cfail', { [LOAD_ATTR.checkResult]: 'fail' }, failures);
      this.count(this.errors, key, 'echeck', { [LOAD_ATTR.errorLayer]: 'check', [ATTR_ERROR_TYPE]: 'check_failed' }, failures);
    }
  }

  violation(kind: string, phase: PhaseStats | undefined): void {
    this.error(this.requestKey(phase?.name ?? '', undefined, undefined, undefined), 'violation', kind);
  }

  private requestKey(phase: string, method: string | undefined, tool: string | undefined, step: string | undefined): RequestKey {
    const id = `${phase}\u0000${method ?? ''}\u0000${tool ?? '\u0001'}\u0000${step ?? '\u0001'}`;
    let k = this.keys.get(id);
    if (!k) {
      const attrs: Attributes = { ...this.phaseAttrs(phase) };
      if (method !== undefined) attrs[ATTR_MCP_METHOD_NAME] = method;
      if (tool !== undefined) attrs[ATTR_GEN_AI_TOOL_NAME] = tool;
      if (step !== undefined) attrs[LOAD_ATTR.step] = step;
      this.keys.set(id, (k = { id, attrs: Object.freeze(attrs), outcome: new Map() }));
    }
    return k;
  }

  /**
   * Adds `n` in `counts` under the request kind plus `more`; `id` names that entry within the
   * request kind (unique across the count families), so a repeat costs one Map lookup.
   */
  private count(counts: KeyedCounts, key: RequestKey, id: string, more: Attributes, n = 1): void {
    let e = key.outcome.get(id);
    if (!e) key.outcome.set(id, (e = counts.entry(`${key.id}\u0000${id}`, () => Object.freeze({ ...key.attrs, ...more }))));
    e.n += n;
  }

  private error(key: RequestKey, layer: Layer, code: string): void {
    this.count(this.errors, key, `e${layer}\u0000${code}`, { [LOAD_ATTR.errorLayer]: layer, [ATTR_ERROR_TYPE]: code });
  }

  private recordSse(s: Sample, times: readonly number[], key: RequestKey): void {
    const set = (series: string) => {
      const id = `${key.id}\u0000${series}`;
      let a = this.sseSets.get(id);
      if (!a) this.sseSets.set(id, (a = Object.freeze({ ...key.attrs, [LOAD_ATTR.sseSeries]: series })));
      return a;
    };
    this.sseDuration.record((times[0]! - s.sentUs) / 1e6, set('first_event'));
    const gap = set('gap');
    for (let i = 1; i < times.length; i++) this.sseDuration.record((times[i]! - times[i - 1]!) / 1e6, gap);
    this.sseDuration.record((s.endUs - s.sentUs) / 1e6, set('final'));
    this.count(this.sseEvents, key, 'sse', {}, times.length);
  }

  private phaseAttrs(phase: string): Attributes {
    return { ...this.base, [LOAD_ATTR.phase]: phase };
  }

  private currentPhase(): string {
    const phases = this.run?.metrics.phases;
    return phases && phases.length > 0 ? phases[phases.length - 1]!.name : '';
  }

  private observePhases(r: ObservableResult, field: 'scheduled' | 'started' | 'dropped' | 'completed'): void {
    // Phases of the same name (an unnamed scenario's) add up in one series.
    const byName = new Map<string, number>();
    for (const p of this.run?.metrics.phases ?? []) byName.set(p.name, (byName.get(p.name) ?? 0) + p[field]);
    for (const [name, n] of byName) r.observe(n, this.phaseAttrs(name));
  }

  private observeThresholds(r: ObservableResult): void {
    if (!this.run) return;
    let outcomes: ThresholdOutcome[];
    try {
      outcomes = this.final ?? this.run.thresholds();
    } catch {
      return;
    }
    for (const t of outcomes) {
      r.observe(t.ok ? 1 : 0, { ...this.base, [LOAD_ATTR.thresholdScope]: t.scope, [LOAD_ATTR.thresholdExpression]: t.expression });
    }
  }
}
