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

export interface DashboardQuery {
  panel: string;
  refId: string;
  /** As written in the dashboard. */
  expr: string;
  datasourceUid: string | undefined;
}

interface PanelJson {
  type: string;
  title: string;
  datasource?: { uid?: string };
  targets?: { refId: string; expr: string; datasource?: { uid?: string } }[];
  panels?: PanelJson[];
}

export function loadDashboard(): { uid: string; panels: PanelJson[]; templating: { list: { name: string }[] } } {
  return JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8'));
}

export function dashboardQueries(): DashboardQuery[] {
  const out: DashboardQuery[] = [];
  const walk = (panels: PanelJson[]) => {
    for (const p of panels) {
      if (p.panels) walk(p.panels);
      for (const t of p.targets ?? []) out.push({ panel: p.title, refId: t.refId, expr: t.expr, datasourceUid: t.datasource?.uid ?? p.datasource?.uid });
    }
  };
  walk(loadDashboard().panels);
  return out;
}

/** Grafana variables -> values Prometheus can run: `$job` -> every job, `$__rate_interval` -> `rateInterval`. */
export function concreteExpr(expr: string, rateInterval = '15s'): string {
  return expr.replaceAll('$__rate_interval', rateInterval).replaceAll('$job', '.*');
}

/** Metric names selected in an expression (every selector in the dashboard has a `{...}` matcher). */
export function metricNames(expr: string): string[] {
  return [...new Set([...expr.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\{/g)].map((m) => m[1]!))];
}

/**
 * Events that make every instrument report: a stdio session (ok, tool error, JSON-RPC error,
 * an orphan and stdout pollution, then closed) and an HTTP exchange answered over SSE.
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
  return [...s.events, ...h.events];
}
