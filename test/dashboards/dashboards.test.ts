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
import { allInstrumentsEvents, concreteExpr, dashboardQueries, loadDashboard, metricNames } from '../helpers/dashboard.js';
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
        'mcp_client_operation_duration_seconds_bucket', 'mcp_client_operation_duration_seconds_count', 'mcp_client_session_duration_seconds_bucket', 'mcptap_exchanges_total',
        'mcptap_protocol_violations_total', 'mcptap_requests_in_flight', 'mcptap_sink_dropped_total', 'mcptap_sse_events_per_stream_count',
        'mcptap_sse_events_per_stream_sum', 'mcptap_sse_time_to_first_event_seconds_bucket',
      ].sort(),
    );
    for (const name of used) expect(emitted.has(name), `${name} is not emitted`).toBe(true);
  });
});

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
