/**
 * Both dashboards against a real Prometheus (Debian package): it scrapes a real `mcptap http` tap
 * in front of the reference server and two shards of a real `mcptap load --metrics` run driving
 * traffic through that tap (tool results, tool errors, JSON-RPC errors, SSE progress streams,
 * checks, a phase whose in-flight cap drops iterations, thresholds that pass and one that fails).
 * While the run goes on, every PromQL expression of dashboards/mcptap.json and
 * dashboards/mcptap-load.json must return data (what a live HTTP tap cannot produce, transport
 * failures, cancellations, closed sessions, comes from the in-process stand-in of
 * prometheus-stdio.test.ts: the real exporter fed with events). At the end, the counters
 * Prometheus holds for each shard equal that shard's JSON result, and the shards add up to both.
 * The Jaeger links of the slow and failed series, filled in with a real series, have the Jaeger
 * query API's URL shape.
 * Without prometheus: fails on CI (it must be installed there), skips locally.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoadResult } from '../../src/load/results/load-result.js';
import { httpErrors, sum } from '../../src/load/results/group-stats.js';
import { startReferenceHttpServer, type ReferenceHttpServer } from '../../src/reference/reference-server.js';
import { createTelemetry, type Telemetry } from '../../src/telemetry/telemetry.js';
import { resolveTelemetryConfig } from '../../src/telemetry/telemetry-config.js';
import { allInstrumentsEvents, allPanels, concreteExpr, dashboardQueries, DASHBOARD_FILE, LOAD_DASHBOARD_FILE } from '../helpers/dashboard.js';
import { startHttpTapCli, type HttpTapCli } from '../helpers/http-tap-cli.js';
import { jaegerApiUrlOf, fillLink } from '../helpers/jaeger-links.js';
import { MCPTAP } from '../helpers/paths.js';
import { ON_CI, PROMETHEUS, startPrometheus, type PromSample, type RunningPrometheus } from '../helpers/prometheus.js';
import { unusedPort } from '../helpers/tap-client.js';

const WINDOW = '15s';
const SHARDS = ['1/2', '2/2'] as const;

const scenarioYaml = (tapUrl: string) => `
name: live-dash
target: { url: "${tapUrl}" }
era: legacy
timeout: 10s
phases:
  - name: steady
    open: { rate: 16, duration: 9s, maxInFlight: 50 }
  # 30/s per shard: an arrival every 33 ms, so each 60 ms call (slow, streamed) in the one slot drops
  # the next arrival, however quiet the machine (at 15/s per shard the calls could all end within the gap).
  - name: squeezed
    open: { rate: 60, duration: 6s, maxInFlight: 1 }
steps:
  - { name: echo, tool: echo, weight: 8, arguments: { text: "hello {{iteration}}" }, check: { path: "result.content[0].text", matches: "^hello " } }
  - { name: slow, tool: delay, weight: 2, arguments: { ms: 60 } }
  - { name: streamed, tool: progress, weight: 2, progress: true, arguments: { steps: 3, intervalMs: 20 } }
  - { name: tool-error, tool: fail, weight: 1 }
  - { name: rpc-error, tool: rpc-error, weight: 1, arguments: { code: -32000, message: "demo error" } }
  - { name: list, method: tools/list, weight: 1 }
thresholds:
  all: ["p(95) < 5s", "errors < 60%"]
  tool:fail: ["tool_errors < 1"]
`;

if (!PROMETHEUS && ON_CI) {
  describe('real Prometheus', () => {
    it('is installed on CI', () => {
      throw new Error('prometheus not found on PATH: .ci/run installs the Debian "prometheus" package; install it (apt-get install prometheus)');
    });
  });
}

interface ShardRun {
  shard: string;
  port: number;
  jsonFile: string;
  exit: Promise<number | null>;
  stderr: () => string;
}

describe.skipIf(!PROMETHEUS)('real Prometheus scraping a live tap and a sharded mcptap load run', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-prom-load-'));
  let reference: ReferenceHttpServer | undefined;
  let tap: HttpTapCli | undefined;
  let synthetic: Telemetry | undefined;
  let prom: RunningPrometheus | undefined;
  const runs: ShardRun[] = [];
  const results = new Map<string, LoadResult>();
  const exits: (number | null)[] = [];
  /** Dashboard expression -> the first non-empty result seen while the run went on. */
  const live = new Map<string, PromSample[]>();
  const slowSeries: PromSample[] = [];
  const failedSeries: PromSample[] = [];

  beforeAll(async () => {
    reference = await startReferenceHttpServer();
    tap = await startHttpTapCli(reference.url, ['--metrics', '127.0.0.1:0']);
    const tapMetrics = await waitForText(tap.stderr, /Prometheus metrics at http:\/\/([\d.]+:\d+)\/metrics/);
    synthetic = await createTelemetry(resolveTelemetryConfig({ metrics: '127.0.0.1:0' }, {}), { dropCounts: () => ({ 'sqlite-recorder': 0 }) });
    for (const e of allInstrumentsEvents()) synthetic.metricsSink!.onEvent(e);
    const ports = [await unusedPort(), await unusedPort()];
    prom = await startPrometheus({
      'mcptap-tap': [tapMetrics],
      'mcptap-synthetic': [new URL(synthetic.metricsUrl!).host],
      'mcptap-load': ports.map((p) => `127.0.0.1:${p}`),
    });
    const scenarioFile = join(dir, 'scenario.yaml');
    writeFileSync(scenarioFile, scenarioYaml(tap.url));
    SHARDS.forEach((shard, i) => runs.push(startLoad(scenarioFile, shard, ports[i]!, join(dir, `shard-${i + 1}.json`))));

    // While the run goes on: every expression of both dashboards, until each has returned data (bounded).
    const queries = [...dashboardQueries(DASHBOARD_FILE), ...dashboardQueries(LOAD_DASHBOARD_FILE)];
    const end = Date.now() + 40_000;
    while (Date.now() < end && live.size < queries.length) {
      for (const q of queries) {
        if (live.has(q.expr)) continue;
        const r = await prom.query(concreteExpr(q.expr, WINDOW));
        if (r.length > 0) live.set(q.expr, r);
      }
      await new Promise((r) => setTimeout(r, 500));
    }
    // Both shards report side by side (the first result above may have come before one started).
    const perShardExpr = dashboardQueries(LOAD_DASHBOARD_FILE).find((q) => q.panel === 'Achieved rate per shard')!.expr;
    live.set(perShardExpr, await prom.waitFor(concreteExpr(perShardExpr, WINDOW), (r) => new Set(r.map((x) => x.metric.mcptap_load_shard)).size === 2, 20_000));
    const byTitle = (t: string) => dashboardQueries(DASHBOARD_FILE).find((q) => q.panel.startsWith(t))!.expr;
    slowSeries.push(...(await prom.query(concreteExpr(byTitle('p99 latency by method and tool'), WINDOW))));
    failedSeries.push(...(await prom.query(concreteExpr(byTitle('Failed requests by method and tool'), WINDOW))));

    for (const r of runs) exits.push(await r.exit);
    for (const r of runs) results.set(r.shard, JSON.parse(readFileSync(r.jsonFile, 'utf8')) as LoadResult);
  }, 120_000);

  afterAll(async () => {
    for (const r of runs) await r.exit;
    tap?.child.kill('SIGTERM');
    await tap?.exited;
    await prom?.stop();
    await synthetic?.shutdown();
    await reference?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('ran both shards to the end (a shard never exits 3)', () => {
    expect(exits, runs.map((r) => r.stderr()).join('\n')).toEqual([0, 0]);
    for (const r of results.values()) {
      expect(r.overall.counters.requests).toBeGreaterThan(40);
      expect(r.overall.counters.toolErrors).toBeGreaterThan(0);
      expect(r.phases.reduce((a, p) => a + p.dropped, 0)).toBeGreaterThan(0);
    }
  });

  it('returns data for every expression of both dashboards while the run goes on', () => {
    const missing = [...dashboardQueries(DASHBOARD_FILE), ...dashboardQueries(LOAD_DASHBOARD_FILE)]
      .filter((q) => !live.has(q.expr))
      .map((q) => `${q.panel} ${q.refId}: ${q.expr}`);
    expect(missing).toEqual([]);
    // Shards add up: the merged series and one series per shard.
    const perShard = live.get(dashboardQueries(LOAD_DASHBOARD_FILE).find((q) => q.panel === 'Achieved rate per shard')!.expr)!;
    expect(perShard.map((s) => s.metric.mcptap_load_shard).sort()).toEqual(expect.arrayContaining(['1/2', '2/2']));
  });

  it('holds, for each shard, the counters of its JSON result', async () => {
    for (const shard of SHARDS) {
      const r = results.get(shard)!;
      const c = r.overall.counters;
      const total = async (metric: string, extra = '') => {
        const out = await prom!.query(`sum(last_over_time(${metric}{mcptap_load_shard="${shard}"${extra}}[5m]))`);
        return out[0]?.value ?? 0;
      };
      const phases = (k: 'scheduled' | 'started' | 'dropped' | 'completed') => r.phases.reduce((a, p) => a + p[k], 0);
      // The shard exits once a scrape has read its final values; Prometheus may take a moment more
      // to make that scrape queryable (seen on a loaded machine): wait for it, bounded.
      for (let i = 0; i < 40 && (await total('mcptap_load_iterations_completed_total')) !== phases('completed'); i++)
        await new Promise((res) => setTimeout(res, 250));
      const seen = {
        requests: await total('mcptap_load_requests_total'),
        ok: await total('mcptap_load_requests_total', ', mcptap_outcome="ok"'),
        errors: await total('mcptap_load_requests_total', ', mcptap_outcome!="ok"'),
        durations: await total('mcptap_load_request_duration_seconds_count'),
        transport: await total('mcptap_load_errors_total', ', mcptap_load_error_layer="transport"'),
        http: await total('mcptap_load_errors_total', ', mcptap_load_error_layer="http"'),
        jsonrpc: await total('mcptap_load_errors_total', ', mcptap_load_error_layer="jsonrpc"'),
        tool: await total('mcptap_load_errors_total', ', mcptap_load_error_layer="tool"'),
        violations: await total('mcptap_load_errors_total', ', mcptap_load_error_layer="violation"'),
        checkFailures: await total('mcptap_load_errors_total', ', mcptap_load_error_layer="check"'),
        checks: await total('mcptap_load_checks_total'),
        http200: await total('mcptap_load_http_responses_total', ', http_response_status_code="200"'),
        scheduled: await total('mcptap_load_iterations_scheduled_total'),
        started: await total('mcptap_load_iterations_started_total'),
        dropped: await total('mcptap_load_iterations_dropped_total'),
        completed: await total('mcptap_load_iterations_completed_total'),
        sseStreams: await total('mcptap_load_sse_duration_seconds_count', ', mcptap_load_sse_series="first_event"'),
        echo: await total('mcptap_load_requests_total', ', gen_ai_tool_name="echo"'),
        streamedStep: await total('mcptap_load_requests_total', ', mcptap_load_step="streamed"'),
        rpcCode: await total('mcptap_load_errors_total', ', error_type="-32000"'),
      };
      expect(seen, shard).toEqual({
        requests: c.requests,
        ok: c.ok,
        errors: c.errors,
        durations: c.requests,
        transport: sum(c.transport),
        http: httpErrors(c),
        jsonrpc: sum(c.jsonrpc),
        tool: c.toolErrors,
        violations: sum(c.violations),
        checkFailures: c.checkFailures,
        checks: c.checks,
        http200: c.http['200'] ?? 0,
        scheduled: phases('scheduled'),
        started: phases('started'),
        dropped: phases('dropped'),
        completed: phases('completed'),
        sseStreams: r.overall.sse?.first_event.summary.count ?? 0,
        echo: r.tools.echo!.counters.requests,
        streamedStep: r.steps.streamed!.counters.requests,
        rpcCode: c.jsonrpc['-32000'] ?? 0,
      });
      expect(c.requests).toBeGreaterThan(0);
    }
    // Merged: summed over the shards in PromQL, as the load dashboard does.
    const merged = await prom!.query('sum(last_over_time(mcptap_load_requests_total[5m]))');
    expect(merged[0]!.value).toBe([...results.values()].reduce((a, r) => a + r.overall.counters.requests, 0));
  });

  it("ends with each shard's threshold states as its JSON result judged them (the tool:fail one failed)", async () => {
    const states = await prom!.query('last_over_time(mcptap_load_threshold_passed[5m])');
    for (const [shard, r] of results) {
      const seen = states
        .filter((s) => s.metric.mcptap_load_shard === shard)
        .map((s) => `${s.metric.mcptap_load_threshold_scope}: ${s.metric.mcptap_load_threshold_expression} = ${s.value}`)
        .sort();
      expect(seen, shard).toEqual(r.thresholds.map((t) => `${t.scope}: ${t.expression} = ${t.ok ? 1 : 0}`).sort());
      expect(seen, shard).toContain('tool:fail: tool_errors < 1 = 0');
    }
  });

  it('links a slow series and a failed series to Jaeger searches of the query API shape', () => {
    const slow = slowSeries.find((s) => s.metric.span_name === 'tools/call delay')!;
    expect(slow, JSON.stringify(slowSeries)).toBeDefined();
    const failed = failedSeries.find((s) => s.metric.span_name === 'tools/call fail')!;
    expect(failed, JSON.stringify(failedSeries)).toBeDefined();
    const linksOf = (title: string) => allPanels(DASHBOARD_FILE).find((p) => p.title.startsWith(title))!.fieldConfig!.defaults!.links!;
    const ctx = { from: 1_700_000_000_000, to: 1_700_000_600_000, vars: { trace_service: 'mcptap-tap', jaeger_url: 'http://localhost:16686' } };
    const slowApi = jaegerApiUrlOf(
      fillLink(linksOf('p99 latency by method and tool').find((l) => l.title.includes('Jaeger UI'))!.url, { ...ctx, series: slow }),
    );
    expect(slowApi.pathname).toBe('/api/traces');
    expect(slowApi.searchParams.get('service')).toBe('mcptap-tap');
    expect(slowApi.searchParams.get('operation')).toBe('tools/call delay');
    expect(slowApi.searchParams.get('minDuration')).toBe(`${slow.value}s`);
    const failedApi = jaegerApiUrlOf(
      fillLink(linksOf('Failed requests by method and tool').find((l) => l.title.includes('Jaeger UI'))!.url, { ...ctx, series: failed }),
    );
    expect(failedApi.searchParams.get('operation')).toBe('tools/call fail');
    expect(JSON.parse(failedApi.searchParams.get('tags')!)).toEqual({ error: 'true' });
  });
});

function startLoad(scenarioFile: string, shard: string, port: number, jsonFile: string): ShardRun {
  const args = [
    MCPTAP,
    'load',
    scenarioFile,
    '--shard',
    shard,
    '--metrics',
    `127.0.0.1:${port}`,
    '--metrics-linger',
    '20s',
    '--json',
    jsonFile,
    '--progress',
    'none',
  ];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (b: Buffer) => (err += b.toString()));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { shard, port, jsonFile, exit, stderr: () => err };
}

async function waitForText(text: () => string, re: RegExp, timeoutMs = 10_000): Promise<string> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const m = re.exec(text());
    if (m) return m[1]!;
    if (Date.now() > end) throw new Error(`never saw ${re} in: ${text()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
