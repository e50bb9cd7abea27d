/**
 * A real Prometheus (Debian package) scrapes a live `mcptap stdio --metrics` tap every second while
 * the SDK 1.x client drives server-everything through it for ~4 s (3 echo calls and 1 get-sum with
 * bad arguments per round, i.e. a 25% tool-error ratio, plus one orphan response). PromQL over the
 * HTTP API must show that traffic: request rate by method and tool, error ratio by outcome class,
 * p99 latency. Then every expression of dashboards/mcptap.json runs against the same Prometheus and
 * must return data; SSE and session metrics, which a live stdio tap cannot produce, come from a
 * second target: the real OTel Prometheus exporter fed with HTTP/SSE events (an in-process stand-in).
 * Without prometheus: fails on CI (it must be installed there), skips locally.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTelemetry, type Telemetry } from '../../src/telemetry/telemetry.js';
import { resolveTelemetryConfig } from '../../src/telemetry/telemetry-config.js';
import { allInstrumentsEvents, concreteExpr, dashboardQueries } from '../helpers/dashboard.js';
import { BIN } from '../helpers/paths.js';
import { ON_CI, PROMETHEUS, startPrometheus, type PromSample, type RunningPrometheus } from '../helpers/prometheus.js';
import { connectThroughTap, type TappedClient } from '../helpers/tap-client.js';

const EVERYTHING = join(BIN, 'mcp-server-everything');
const TAP_JOB = 'mcptap-stdio';
const SYNTH_JOB = 'mcptap-synthetic-http';
const WINDOW = '15s';
const LOAD_MS = 4000;

if (!PROMETHEUS && ON_CI) {
  describe('real Prometheus', () => {
    it('is installed on CI', () => {
      throw new Error('prometheus not found on PATH: .ci/run installs the Debian "prometheus" package; install it (apt-get install prometheus)');
    });
  });
}

describe.skipIf(!PROMETHEUS)('real Prometheus scraping a live stdio tap', () => {
  let tapped: TappedClient | undefined;
  let synthetic: Telemetry | undefined;
  let prom: RunningPrometheus | undefined;
  const sent = { echo: 0, badSum: 0 };
  const results = new Map<string, PromSample[]>();
  const dashboard = new Map<string, PromSample[]>();

  beforeAll(async () => {
    synthetic = await createTelemetry(resolveTelemetryConfig({ metrics: '127.0.0.1:0' }, {}), { dropCounts: () => ({ 'sqlite-recorder': 0 }) });
    for (const e of allInstrumentsEvents()) synthetic.metricsSink!.onEvent(e);
    tapped = await connectThroughTap(['--metrics', '127.0.0.1:0'], [EVERYTHING, 'stdio']);
    const tapTarget = (await tapped.waitForStderr(/Prometheus metrics at http:\/\/([\d.]+:\d+)\/metrics/))[1]!;
    prom = await startPrometheus({ [TAP_JOB]: [tapTarget], [SYNTH_JOB]: [new URL(synthetic.metricsUrl!).host] });
    await prom.waitFor('count(up == 1)', (r) => r[0]?.value === 2, 10_000);

    // A response nobody asked for: a protocol violation a real client can send.
    await tapped.transport.send({ jsonrpc: '2.0', id: 'orphan-1', result: {} });
    const end = Date.now() + LOAD_MS;
    for (let round = 0; round < 5000 && Date.now() < end; round++) {
      for (let i = 0; i < 3; i++, sent.echo++) await tapped.client.callTool({ name: 'echo', arguments: { message: `r${round}` } });
      await tapped.client.callTool({ name: 'get-sum', arguments: { a: 'not a number' } });
      sent.badSum++;
    }
    // The session stays open until Prometheus has scraped the last call.
    const total = sent.echo + sent.badSum;
    await prom.waitFor(`sum(mcptap_exchanges_total{job="${TAP_JOB}", mcp_method_name="tools/call"})`, (r) => r[0]?.value === total, 5000);

    const sel = `job="${TAP_JOB}", mcp_method_name="tools/call"`;
    const queries: Record<string, string> = {
      rate: `sum by (mcp_method_name, gen_ai_tool_name) (rate(mcp_client_operation_duration_seconds_count{job="${TAP_JOB}"}[${WINDOW}]))`,
      errorRatio: `sum by (mcptap_outcome) (rate(mcptap_exchanges_total{${sel}}[${WINDOW}])) / ignoring (mcptap_outcome) group_left sum(rate(mcptap_exchanges_total{${sel}}[${WINDOW}]))`,
      errorShare: `sum by (mcptap_outcome) (mcptap_exchanges_total{${sel}}) / ignoring (mcptap_outcome) group_left sum(mcptap_exchanges_total{${sel}})`,
      p99: `histogram_quantile(0.99, sum by (le) (rate(mcp_client_operation_duration_seconds_bucket{${sel}}[${WINDOW}])))`,
      violations: `sum by (mcptap_anomaly_kind) (mcptap_protocol_violations_total{job="${TAP_JOB}"})`,
    };
    for (const [name, expr] of Object.entries(queries)) results.set(name, await prom.query(expr));
    for (const q of dashboardQueries()) dashboard.set(`${q.panel} ${q.refId}`, await prom.query(concreteExpr(q.expr, WINDOW)));
  });

  afterAll(async () => {
    await tapped?.close();
    await prom?.stop();
    await synthetic?.shutdown();
  });

  const value = (name: string, labels: Record<string, string>) =>
    results.get(name)!.find((s) => Object.entries(labels).every(([k, v]) => s.metric[k] === v))?.value;

  it('drove enough traffic to measure', () => {
    expect(sent.badSum).toBeGreaterThanOrEqual(20);
    expect(sent.echo).toBe(sent.badSum * 3);
  });

  it('gives the request rate by method and tool (echo three times get-sum)', () => {
    const echo = value('rate', { mcp_method_name: 'tools/call', gen_ai_tool_name: 'echo' })!;
    const sum = value('rate', { mcp_method_name: 'tools/call', gen_ai_tool_name: 'get-sum' })!;
    expect(echo).toBeGreaterThan(0);
    expect(echo / sum).toBeGreaterThan(2.7);
    expect(echo / sum).toBeLessThan(3.3);
  });

  it('gives the error ratio by outcome class: the injected 25% tool errors', () => {
    expect(value('errorRatio', { mcptap_outcome: 'tool_error' })).toBeCloseTo(0.25, 1);
    expect(value('errorRatio', { mcptap_outcome: 'ok' })).toBeCloseTo(0.75, 1);
    // From the counters themselves (every call was scraped): exactly what was sent.
    expect(value('errorShare', { mcptap_outcome: 'tool_error' })).toBe(sent.badSum / (sent.echo + sent.badSum));
  });

  it('gives a p99 latency from the histogram buckets', () => {
    const p99 = results.get('p99')![0]!.value;
    expect(Number.isFinite(p99)).toBe(true);
    expect(p99).toBeGreaterThan(0);
    expect(p99).toBeLessThanOrEqual(5);
  });

  it('counts the orphan response as a protocol violation', () => {
    expect(value('violations', { mcptap_anomaly_kind: 'orphan_response' })).toBe(1);
  });

  it('returns data for every dashboard expression', () => {
    expect(dashboard.size).toBe(dashboardQueries().length);
    for (const [panel, samples] of dashboard) expect(samples.length, panel).toBeGreaterThan(0);
    const rateByTool = [...dashboard].find(([k]) => k.startsWith('Request rate by method and tool'))![1];
    expect(rateByTool.some((s) => s.metric.gen_ai_tool_name === 'echo' && s.value > 0)).toBe(true);
  });
});
