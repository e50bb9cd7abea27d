/**
 * What can be checked of dashboards/ and deploy/ without Docker: the dashboard JSON parses and is
 * wired to the provisioned data sources; every PromQL expression in it parses (`promtool check
 * rules`) and names only metrics the real OTel Prometheus exporter emits for mcptap's sinks; the
 * Prometheus config passes `promtool check config` (test/deploy/compose.test.ts checks the compose
 * file against the provisioning). (test/e2e/prometheus-stdio.test.ts also runs each
 * expression against a real Prometheus.)
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { createTelemetry } from '../../src/telemetry/telemetry.js';
import { resolveTelemetryConfig } from '../../src/telemetry/telemetry-config.js';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LoadMetrics } from '../../src/load/results/metrics.js';
import { LoadLiveMetrics } from '../../src/load/report/live-metrics.js';
import {
  allInstrumentsEvents,
  allPanels,
  concreteExpr,
  dashboardQueries,
  DASHBOARD_FILE,
  LOAD_DASHBOARD_FILE,
  loadDashboard,
  metricNames,
} from '../helpers/dashboard.js';
import { fillLink, jaegerApiUrlOf } from '../helpers/jaeger-links.js';
import { ROOT } from '../helpers/paths.js';
import { ON_CI, PROMTOOL, promtool } from '../helpers/prometheus.js';
import { parseProm } from '../telemetry/prometheus-text.js';

const PROVISIONING = join(ROOT, 'dashboards', 'provisioning');
const readYaml = (file: string) => parse(readFileSync(file, 'utf8')) as Record<string, unknown>;

/** Without promtool: fail on CI (it must be installed there), skip locally. */
const itPromtool = PROMTOOL ? it : ON_CI ? it : it.skip;
const needPromtool = () => {
  if (!PROMTOOL) throw new Error('promtool not found: install the Debian prometheus package (.ci/run does)');
};

describe('dashboards/mcptap.json', () => {
  const queries = dashboardQueries();

  it('parses, has panels for every required view, and uses provisioned data sources only', () => {
    const dash = loadDashboard();
    expect(dash.uid).toBe('mcptap-overview');
    const titles = dash.panels.filter((p) => p.type !== 'row').map((p) => p.title);
    for (const want of ['Request rate by method and tool', 'Error ratio by outcome class', 'Request latency p50 / p95 / p99', 'SSE time to first event p50 / p95 / p99', 'Requests in flight', 'Protocol violations', 'Recorder and exporter drops']) {
      expect(titles).toContain(want);
    }
    const ds = readYaml(join(PROVISIONING, 'datasources', 'datasources.yaml')) as { datasources: { uid: string; type: string }[] };
    expect(ds.datasources.map((d) => `${d.type}:${d.uid}`).sort()).toEqual(['jaeger:jaeger', 'prometheus:prometheus']);
    expect(queries.length).toBeGreaterThanOrEqual(14);
    for (const q of queries) expect(q.datasourceUid, q.panel).toBe('prometheus');
    const latency = queries.filter((q) => q.panel === 'Request latency p50 / p95 / p99').map((q) => q.expr);
    expect(latency.map((e) => /histogram_quantile\((0\.\d+),/.exec(e)?.[1])).toEqual(['0.5', '0.95', '0.99']);
  });

  itPromtool('has only PromQL that promtool parses', () => {
    needPromtool();
    const dir = mkdtempSync(join(tmpdir(), 'mcptap-dash-'));
    const rules = {
      groups: [{ name: 'dashboard', rules: queries.map((q, i) => ({ record: `mcptap:dashboard:q${i}`, expr: concreteExpr(q.expr) })) }],
    };
    writeFileSync(join(dir, 'rules.yml'), JSON.stringify(rules)); // JSON is YAML
    const r = promtool(['check', 'rules', join(dir, 'rules.yml')]);
    expect(r.output).toContain(`SUCCESS: ${queries.length} rules found`);
    expect(r.code, r.output).toBe(0);
  });

  it('names only metrics the OTel Prometheus exporter emits for the metrics sink', async () => {
    const t = await createTelemetry(resolveTelemetryConfig({ metrics: '127.0.0.1:0' }, {}), { dropCounts: () => ({ 'sqlite-recorder': 0, 'otel-spans': 0 }) });
    let emitted: Set<string>;
    try {
      for (const e of allInstrumentsEvents()) t.metricsSink!.onEvent(e);
      emitted = new Set(parseProm(await (await fetch(t.metricsUrl!)).text()).map((s) => s.name));
    } finally {
      await t.shutdown();
    }
    const used = [...new Set(queries.flatMap((q) => metricNames(q.expr)))].sort();
    expect(used).toEqual(
      [
        'mcp_client_operation_duration_seconds_bucket', 'mcp_client_operation_duration_seconds_count', 'mcp_client_operation_duration_seconds_sum',
        'mcp_client_session_duration_seconds_bucket', 'mcp_client_session_duration_seconds_count', 'mcptap_cancellations_total', 'mcptap_exchanges_total',
        'mcptap_protocol_violations_total', 'mcptap_requests_in_flight', 'mcptap_sink_dropped_total', 'mcptap_sse_events_per_stream_count',
        'mcptap_sse_events_per_stream_sum', 'mcptap_sse_time_to_first_event_seconds_bucket',
      ].sort(),
    );
    for (const name of used) expect(emitted.has(name), `${name} is not emitted`).toBe(true);
  });

  it('links its slow and failed series to Jaeger: a Grafana Explore search and a Jaeger UI search', () => {
    const linked = allPanels(DASHBOARD_FILE).filter((p) => p.fieldConfig?.defaults?.links?.length);
    expect(linked.map((p) => p.title).sort()).toEqual(['Failed requests by method and tool (click: their traces)', 'p99 latency by method and tool (click: slowest traces)']);
    const series = { metric: { span_name: 'tools/call echo' }, value: 0.25 };
    const ctx = { from: 1_700_000_000_000, to: 1_700_000_600_000, vars: { trace_service: 'mcptap-tap', jaeger_url: 'http://localhost:16686' }, series };
    for (const p of linked) {
      const links = p.fieldConfig!.defaults!.links!;
      const ui = jaegerApiUrlOf(fillLink(links.find((l) => l.title.includes('Jaeger UI'))!.url, ctx));
      expect(ui.searchParams.get('operation')).toBe('tools/call echo');
      expect(ui.searchParams.get('start')).toBe('1700000000000000');
      const explore = new URL(fillLink(links.find((l) => l.title.includes('Explore'))!.url, ctx), 'http://grafana');
      expect(explore.pathname).toBe('/explore');
      const pane = (JSON.parse(explore.searchParams.get('panes')!) as { a: { datasource: string; queries: Record<string, unknown>[] } }).a;
      expect(pane.datasource).toBe('jaeger');
      expect(pane.queries[0]).toMatchObject({ queryType: 'search', service: 'mcptap-tap', operation: 'tools/call echo', datasource: { type: 'jaeger', uid: 'jaeger' } });
      if (p.title.startsWith('p99')) expect(pane.queries[0]!.minDuration).toBe('0.25s');
      else expect(pane.queries[0]!.tags).toBe('error=true');
    }
  });
});

describe('dashboards/mcptap-load.json', () => {
  const queries = dashboardQueries(LOAD_DASHBOARD_FILE);

  it('parses, has the load views, and uses provisioned data sources only', () => {
    const dash = loadDashboard(LOAD_DASHBOARD_FILE);
    expect(dash.uid).toBe('mcptap-load');
    expect(dash.schemaVersion).toBe(loadDashboard().schemaVersion);
    const titles = allPanels(LOAD_DASHBOARD_FILE).map((p) => p.title);
    for (const want of ['Target vs achieved rate (merged)', 'Iterations in flight', 'Dropped iterations', 'Latency p50 / p95 / p99 (merged)', 'p95 per shard', 'Errors per layer', 'Thresholds (merged: failed if any shard fails)']) {
      expect(titles).toContain(want);
    }
    for (const q of queries) expect(q.datasourceUid, q.panel).toBe('prometheus');
    for (const v of dash.templating.list) expect(v.datasource?.uid).toBe('prometheus');
    // Every selector is filtered by the scenario and shard variables.
    for (const q of queries) expect(q.expr, q.panel).not.toMatch(/mcptap_load_\w+\{(?![^}]*mcptap_load_shard=~"\$shard")/);
  });

  itPromtool('has only PromQL that promtool parses', () => {
    needPromtool();
    const dir = mkdtempSync(join(tmpdir(), 'mcptap-dash-'));
    const rules = { groups: [{ name: 'load', rules: queries.map((q, i) => ({ record: `mcptap:load:q${i}`, expr: concreteExpr(q.expr) })) }] };
    writeFileSync(join(dir, 'rules.yml'), JSON.stringify(rules));
    const r = promtool(['check', 'rules', join(dir, 'rules.yml')]);
    expect(r.code, r.output).toBe(0);
  });

  it('names only metrics a load run emits on --metrics', async () => {
    const emitted = await loadRunMetricNames();
    const used = [...new Set(queries.flatMap((q) => metricNames(q.expr)))].sort();
    expect(used.length).toBeGreaterThanOrEqual(12);
    for (const name of used) expect(emitted.has(name), `${name} is not emitted`).toBe(true);
  });
});

describe('metric names on the scrape endpoint and over OTLP', () => {
  /**
   * What Prometheus' OTLP receiver makes of an OTLP metric by default (translation strategy
   * UnderscoreEscapingWithSuffixes): `.` -> `_`, the unit's word appended (`s` -> `seconds`;
   * `{…}` annotations add nothing; `X/s` -> `_per_second`), `_total` for monotonic sums.
   * Written out here from Prometheus' documentation, apart from src/telemetry/prometheus-units.ts.
   */
  const otlpName = (m: { name: string; unit?: string; sum?: { isMonotonic?: boolean } }) => {
    const words: Record<string, string> = { s: 'seconds', '': '' };
    const [main = '', per] = (m.unit ?? '').replace(/\{[^}]*\}/g, '').split('/');
    let name = m.name.replace(/\./g, '_');
    if (words[main] === undefined) throw new Error(`unit ${m.unit} not in this test's table`);
    if (words[main]) name += `_${words[main]}`;
    if (per === 's') name += '_per_second';
    return m.sum?.isMonotonic ? `${name}_total` : name;
  };

  it('are the same: the tap and a load run export over OTLP what they serve to scrapes', async () => {
    const pushed = await otlpJsonMetrics();
    const scraped = new Set([...(await loadRunMetricNames()), ...(await tapMetricNames())].map((n) => n.replace(/_(bucket|count|sum)$/, '')));
    const translated = new Set(pushed.filter((m) => m.name !== 'target_info').map(otlpName));
    expect([...translated].sort()).toEqual([...scraped].filter((n) => n !== 'target_info').sort());
    expect(translated).toContain('mcp_client_operation_duration_seconds');
    expect(translated).toContain('mcptap_load_target_rate_per_second');
  });
});

/** The load run's live metrics on a Prometheus endpoint, after a few samples of every kind. */
async function loadRunMetricNames(): Promise<Set<string>> {
  const t = await createTelemetry(resolveTelemetryConfig({ metrics: '127.0.0.1:0' }, {}), { tapSinks: false });
  try {
    feedLoadMetrics(new LoadLiveMetrics(t.meter!));
    return new Set(parseProm(await (await fetch(t.metricsUrl!)).text()).map((s) => s.name));
  } finally {
    await t.shutdown();
  }
}

async function tapMetricNames(): Promise<Set<string>> {
  const t = await createTelemetry(resolveTelemetryConfig({ metrics: '127.0.0.1:0' }, {}), { dropCounts: () => ({ 'sqlite-recorder': 0 }) });
  try {
    for (const e of allInstrumentsEvents()) t.metricsSink!.onEvent(e);
    return new Set(parseProm(await (await fetch(t.metricsUrl!)).text()).map((s) => s.name));
  } finally {
    await t.shutdown();
  }
}

/** Samples of every kind into a load observer (an in-process stand-in for a run: e2e tests run real ones). */
function feedLoadMetrics(o: LoadLiveMetrics): void {
  const metrics = new LoadMetrics(o);
  o.attach({ scenario: 's', shard: { index: 1, count: 2 }, metrics, targetRate: () => 10, thresholds: () => [{ scope: 'all', expression: 'p(95) < 1s', ok: true, observed: 1, observedText: '1us' }] });
  const phase = metrics.beginPhase({ name: 'steady', kind: 'open', startUs: 0 });
  phase.scheduled = 3;
  const base = { step: 'echo', method: 'tools/call', tool: 'echo', intendedUs: 0, sentUs: 10, endUs: 2000, isError: false, violations: [] as string[], sse: false, checks: 1, checkFailures: 1 };
  metrics.record({ ...base, outcome: 'ok', httpStatus: 200 });
  metrics.record({ ...base, outcome: 'tool_error', isError: true, httpStatus: 200, sse: true, eventTimesUs: [100, 300], violations: ['bad_frame'] });
  metrics.record({ ...base, outcome: 'jsonrpc_error', rpcCode: -32000, httpStatus: 400 });
  metrics.record({ ...base, outcome: 'transport_error', transportError: 'timeout' });
  metrics.recordViolation('stdout_pollution');
}

/** Both exporters' metrics as an OTLP/HTTP JSON export delivers them (a local receiver catches the request). */
async function otlpJsonMetrics(): Promise<{ name: string; unit?: string; sum?: { isMonotonic?: boolean } }[]> {
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (b: Buffer) => (body += b.toString()));
    req.on('end', () => {
      bodies.push(body);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const env = { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' };
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const load = await createTelemetry(resolveTelemetryConfig({ otlp: url }, env), { tapSinks: false });
    feedLoadMetrics(new LoadLiveMetrics(load.meter!));
    await load.shutdown();
    const tap = await createTelemetry({ ...resolveTelemetryConfig({ otlp: url }, env), traces: {} }, { dropCounts: () => ({ 'sqlite-recorder': 0 }) });
    for (const e of allInstrumentsEvents()) tap.metricsSink!.onEvent(e);
    await tap.shutdown();
  } finally {
    server.close();
  }
  type Export = { resourceMetrics: { scopeMetrics: { metrics: { name: string; unit?: string; sum?: { isMonotonic?: boolean } }[] }[] }[] };
  return bodies.flatMap((b) => (JSON.parse(b) as Export).resourceMetrics.flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics)));
}

describe('deploy/', () => {
  itPromtool('has a Prometheus config promtool accepts', () => {
    needPromtool();
    const r = promtool(['check', 'config', join(ROOT, 'deploy', 'prometheus.yml')]);
    expect(r.code, r.output).toBe(0);
    expect(r.output).toContain('SUCCESS');
  });

  it('links the Jaeger data source from the dashboard', () => {
    expect(readFileSync(join(ROOT, 'dashboards', 'mcptap.json'), 'utf8')).toContain('%22datasource%22:%22jaeger%22');
  });
});
