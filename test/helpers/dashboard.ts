/**
 * The Grafana dashboard in dashboards/ as test data: its PromQL expressions (with Grafana's
 * variables replaced by concrete values), the metric names they use, and an event stream that
 * makes every instrument of the metrics sink report (stdio and HTTP/SSE exchanges, violations,
 * a closed session) for checking those names against what the Prometheus exporter emits.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TapEvent } from '../../src/model/events.js';
import { TrafficScript } from '../sinks/traffic-script.js';
import { ROOT } from './paths.js';

export const DASHBOARD_FILE = join(ROOT, 'dashboards', 'mcptap.json');
export const LOAD_DASHBOARD_FILE = join(ROOT, 'dashboards', 'mcptap-load.json');

export interface DashboardQuery {
  panel: string;
  refId: string;
  /** As written in the dashboard. */
  expr: string;
  datasourceUid: string | undefined;
}

export interface PanelJson {
  type: string;
  title: string;
  datasource?: { uid?: string };
  targets?: { refId: string; expr: string; datasource?: { uid?: string } }[];
  panels?: PanelJson[];
  fieldConfig?: { defaults?: { links?: { title: string; url: string }[] } };
}

export interface DashboardJson {
  uid: string;
  schemaVersion: number;
  panels: PanelJson[];
  templating: { list: { name: string; datasource?: { uid?: string } }[] };
}

export function loadDashboard(file = DASHBOARD_FILE): DashboardJson {
  return JSON.parse(readFileSync(file, 'utf8'));
}

export function dashboardQueries(file = DASHBOARD_FILE): DashboardQuery[] {
  const out: DashboardQuery[] = [];
  const walk = (panels: PanelJson[]) => {
    for (const p of panels) {
      if (p.panels) walk(p.panels);
      for (const t of p.targets ?? []) out.push({ panel: p.title, refId: t.refId, expr: t.expr, datasourceUid: t.datasource?.uid ?? p.datasource?.uid });
    }
  };
  walk(loadDashboard(file).panels);
  return out;
}

/** Every panel, rows' panels included. */
export function allPanels(file = DASHBOARD_FILE): PanelJson[] {
  const out: PanelJson[] = [];
  const walk = (panels: PanelJson[]) => panels.forEach((p) => (out.push(p), walk(p.panels ?? [])));
  walk(loadDashboard(file).panels);
  return out;
}

/**
 * Grafana variables -> values Prometheus can run: the dashboards' variables (always in `=~`
 * matchers) -> every value, `$__rate_interval` -> `rateInterval`. (`$1` in label_replace stays.)
 */
export function concreteExpr(expr: string, rateInterval = '15s'): string {
  return expr.replaceAll('$__rate_interval', rateInterval).replace(/\$(job|scenario|shard)\b/g, '.*');
}

/** Metric names selected in an expression (every selector in the dashboard has a `{...}` matcher). */
export function metricNames(expr: string): string[] {
  return [...new Set([...expr.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\{/g)].map((m) => m[1]!))];
}

/**
 * Events that make every instrument report: a stdio session (ok, tool error, JSON-RPC error,
 * a cancelled request answered anyway, an orphan and stdout pollution, then closed) and HTTP
 * exchanges: one answered over SSE, one whose upstream reset, one answered by a bare HTTP 502.
 */
export function allInstrumentsEvents(): TapEvent[] {
  const s = new TrafficScript('stdio-1').open({ transport: 'stdio', target: 'srv' }, 0);
  s.handshake(1);
  s.request(1, 'tools/call', { name: 'echo', arguments: {} }, 10);
  s.result(1, { content: [] }, 25);
  s.request(2, 'tools/call', { name: 'echo', arguments: {} }, 30);
  s.result(2, { content: [], isError: true }, 330);
  s.request(3, 'nope', {}, 400);
  s.error(3, -32601, 'Method not found', 401);
  s.result(77, {}, 410);
  s.send('s2c', 'not json at all', 420);
  s.request(4, 'tools/call', { name: 'slow', arguments: {} }, 430);
  s.request(5, 'tools/call', { name: 'slow', arguments: {} }, 440);
  s.send('c2s', { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 5, reason: 'user' } }, 450);
  s.result(5, { content: [] }, 460);
  s.close(2500);
  const h = new TrafficScript('http-1').open({ transport: 'http', target: 'http://127.0.0.1:9/mcp' }, 0);
  h.request(1, 'tools/call', { name: 'op', arguments: {}, _meta: { progressToken: 't' } }, 0, { channel: 'http-body', context: { streamId: 'x' } });
  for (let i = 1; i <= 3; i++)
    h.send('s2c', { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 't', progress: i } }, 100 * i, {
      channel: 'sse',
      context: { streamId: 'x' },
    });
  h.result(1, { content: [] }, 400, { channel: 'sse', context: { streamId: 'x', httpStatus: 200 } });
  h.request(2, 'tools/list', {}, 500, { channel: 'http-body', context: { streamId: 'y' } });
  // Failures below JSON-RPC: a reset upstream (a transport class) and a bare HTTP 502.
  h.request(3, 'tools/call', { name: 'op', arguments: {} }, 600, { channel: 'http-body', context: { streamId: 'z' } });
  h.endStream('z', { outcome: 'transport_error', errorClass: 'upstream_reset' }, 650);
  h.request(4, 'tools/call', { name: 'op', arguments: {} }, 700, { channel: 'http-body', context: { streamId: 'w' } });
  h.endStream('w', { outcome: 'transport_error', httpStatus: 502 }, 710);
  return [...s.events, ...h.events];
}
