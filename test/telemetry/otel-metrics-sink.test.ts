/**
 * The metrics sink end to end: events from the real Correlator -> OtelMetricsSink -> the real SDK
 * MeterProvider -> the real Prometheus exporter served on 127.0.0.1:0, scraped with fetch.
 */
import { describe, expect, it } from 'vitest';
import { createTelemetry, type Telemetry } from '../../src/telemetry/telemetry.js';
import { resolveTelemetryConfig } from '../../src/telemetry/telemetry-config.js';
import { DURATION_BUCKETS_S } from '../../src/telemetry/otel-metric-instruments.js';
import { sinkContract } from '../sinks/sink-contract.js';
import { TrafficScript, us } from '../sinks/traffic-script.js';
import { findSamples, parseProm, type Sample } from './prometheus-text.js';

const find = findSamples;

async function scrape(t: Telemetry): Promise<Sample[]> {
  const res = await fetch(t.metricsUrl!);
  expect(res.status).toBe(200);
  return parseProm(await res.text());
}

async function withPrometheus(fn: (t: Telemetry) => Promise<void>, dropCounts?: () => Record<string, number>): Promise<void> {
  const t = await createTelemetry(resolveTelemetryConfig({ metrics: '127.0.0.1:0' }, {}), dropCounts ? { dropCounts } : {});
  try {
    expect(t.sinks.map((s) => s.name)).toEqual(['otel-metrics']);
    expect(t.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect((await fetch(t.metricsUrl!, { method: 'HEAD' })).status).toBe(200); // probes and curl -I
    await fn(t);
  } finally {
    await t.shutdown();
  }
}

function session(): TrafficScript {
  const s = new TrafficScript('stdio-1').open({ transport: 'stdio', target: 'srv' }, 0);
  s.handshake(1);
  s.request(1, 'tools/call', { name: 'echo', arguments: {} }, 10);
  s.result(1, { content: [] }, 25); // 15 ms
  s.request(2, 'tools/call', { name: 'echo', arguments: {} }, 30);
  s.result(2, { content: [], isError: true }, 330); // 300 ms
  s.request(3, 'nope', {}, 400);
  s.error(3, -32601, 'Method not found', 401);
  s.result(77, {}, 410); // orphan
  s.send('s2c', 'not json at all', 420);
  return s;
}

describe('OtelMetricsSink via the Prometheus exporter', () => {
  it('exposes mcp.client.operation.duration with semconv labels and buckets', async () => {
    await withPrometheus(async (t) => {
      for (const e of session().events) t.metricsSink!.onEvent(e);
      const samples = await scrape(t);
      const ok = find(samples, 'mcp_client_operation_duration_seconds_bucket', {
        mcp_method_name: 'tools/call',
        gen_ai_tool_name: 'echo',
        network_transport: 'pipe',
        mcp_protocol_version: '2025-11-25',
      }).filter((s) => s.labels.error_type === undefined);
      expect(ok.map((s) => s.labels.le)).toEqual([...DURATION_BUCKETS_S.map(String), '+Inf']);
      expect(ok.find((s) => s.labels.le === '0.01')!.value).toBe(0);
      expect(ok.find((s) => s.labels.le === '0.02')!.value).toBe(1);
      const toolErr = find(samples, 'mcp_client_operation_duration_seconds_bucket', { error_type: 'tool_error', gen_ai_tool_name: 'echo' });
      expect(toolErr.find((s) => s.labels.le === '0.2')!.value).toBe(0);
      expect(toolErr.find((s) => s.labels.le === '0.5')!.value).toBe(1);
      expect(
        find(samples, 'mcp_client_operation_duration_seconds_count', { mcp_method_name: 'nope', error_type: '-32601', network_transport: 'pipe' })[0]?.value,
      ).toBe(1);
      expect(find(samples, 'mcp_client_operation_duration_seconds_count', { mcp_method_name: 'initialize' })[0]?.value).toBe(1);
    });
  });

  it('counts exchanges by outcome, requests in flight and protocol violations', async () => {
    await withPrometheus(async (t) => {
      const s = session();
      s.request(9, 'tools/call', { name: 'slow', arguments: {} }, 500);
      for (const e of s.events) t.metricsSink!.onEvent(e);
      let samples = await scrape(t);
      const outcomes = Object.fromEntries(
        find(samples, 'mcptap_exchanges_total').map((x) => [`${x.labels.mcptap_outcome}/${x.labels.mcp_method_name ?? ''}`, x.value]),
      );
      expect(outcomes).toEqual({ 'ok/initialize': 1, 'ok/tools/call': 1, 'tool_error/tools/call': 1, 'jsonrpc_error/nope': 1, 'orphan_response/': 1 });
      expect(find(samples, 'mcptap_requests_in_flight', { mcp_method_name: 'tools/call', network_transport: 'pipe' })[0]?.value).toBe(1);
      const violations = Object.fromEntries(find(samples, 'mcptap_protocol_violations_total').map((x) => [x.labels.mcptap_anomaly_kind, x.value]));
      expect(violations).toEqual({ orphan_response: 1, stdout_pollution: 1 });
      s.close(600);
      for (const e of s.events.slice(-2)) t.metricsSink!.onEvent(e);
      samples = await scrape(t);
      expect(find(samples, 'mcptap_requests_in_flight', { mcp_method_name: 'tools/call' })[0]?.value).toBe(0);
      expect(find(samples, 'mcp_client_operation_duration_seconds_count', { error_type: 'unanswered' })[0]?.value).toBe(1);
    });
  });

  it('records session duration when the connection closes', async () => {
    await withPrometheus(async (t) => {
      const s = session().close(2500, 'exited with code 3', 3);
      for (const e of s.events) t.metricsSink!.onEvent(e);
      const samples = await scrape(t);
      const sum = find(samples, 'mcp_client_session_duration_seconds_sum', {
        network_transport: 'pipe',
        mcp_protocol_version: '2025-11-25',
        error_type: 'child_exit',
      });
      expect(sum[0]?.value).toBeCloseTo(2.5, 6);
      const buckets = find(samples, 'mcp_client_session_duration_seconds_bucket', { network_transport: 'pipe' });
      expect(buckets.map((b) => b.labels.le)).toEqual([...DURATION_BUCKETS_S.map(String), '+Inf']);
      expect(buckets.find((b) => b.labels.le === '2')!.value).toBe(0);
      expect(buckets.find((b) => b.labels.le === '5')!.value).toBe(1);
    });
  });

  it('records SSE time to first event and events per stream', async () => {
    await withPrometheus(async (t) => {
      const s = new TrafficScript('http-1').open({ transport: 'http', target: 'http://127.0.0.1:9/mcp' }, 0);
      s.request(1, 'tools/call', { name: 'op', arguments: {}, _meta: { progressToken: 't' } }, 0, { channel: 'http-body', context: { streamId: 'x' } });
      for (let i = 1; i <= 3; i++)
        s.send('s2c', { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 't', progress: i } }, 100 * i, {
          channel: 'sse',
          context: { streamId: 'x' },
        });
      s.result(1, { content: [] }, 400, { channel: 'sse', context: { streamId: 'x', httpStatus: 200 } });
      // A response that is its stream's only event: the first event is the response.
      s.request(2, 'tools/list', {}, 500, { channel: 'http-body', context: { streamId: 'y' } });
      s.result(2, { tools: [] }, 530, { channel: 'sse', context: { streamId: 'y', httpStatus: 200 } });
      for (const e of s.events) t.metricsSink!.onEvent(e);
      const samples = await scrape(t);
      expect(find(samples, 'mcptap_sse_time_to_first_event_seconds_sum', { mcp_method_name: 'tools/call' })[0]?.value).toBeCloseTo(0.1, 6);
      expect(find(samples, 'mcptap_sse_events_per_stream_sum', { mcp_method_name: 'tools/call' })[0]?.value).toBe(4); // 3 progress, 1 response
      expect(find(samples, 'mcptap_sse_time_to_first_event_seconds_sum', { mcp_method_name: 'tools/list' })[0]?.value).toBeCloseTo(0.03, 6);
      expect(find(samples, 'mcptap_sse_events_per_stream_sum', { mcp_method_name: 'tools/list' })[0]?.value).toBe(1);
      // The figures by series, per method and tool: events at 100, 200, 300 and the response at 400 ms.
      const figure = (series: string, what: 'sum' | 'count') =>
        find(samples, `mcptap_sse_duration_seconds_${what}`, { mcp_method_name: 'tools/call', gen_ai_tool_name: 'op', mcptap_sse_series: series })[0]?.value;
      expect(figure('first_event', 'sum')).toBeCloseTo(0.1, 6);
      expect([figure('gap', 'count'), figure('gap', 'sum')]).toEqual([3, expect.closeTo(0.3, 6)]);
      expect([figure('progress', 'count'), figure('progress', 'sum')]).toEqual([2, expect.closeTo(0.2, 6)]);
      expect(figure('final', 'sum')).toBeCloseTo(0.4, 6);
      expect(find(samples, 'mcp_client_operation_duration_seconds_count', { network_transport: 'tcp', mcp_method_name: 'tools/call' })[0]?.value).toBe(1);
    });
  });

  it('counts server notifications by method, and the delivery delay of those stamped with their firing time', async () => {
    await withPrometheus(async (t) => {
      const s = new TrafficScript('http-listen').open({ transport: 'http', target: 'http://127.0.0.1:9/mcp' }, 0);
      s.request('L', 'subscriptions/listen', { notifications: { toolsListChanged: true } }, 0, { channel: 'http-body', context: { streamId: 'l' } });
      // Three list-changed notifications on the listen stream, fired 2, 4 and 6 ms before the tap saw them; one unstamped.
      for (let i = 1; i <= 3; i++)
        s.send(
          's2c',
          { jsonrpc: '2.0', method: 'notifications/tools/list_changed', params: { _meta: { 'io.mcptap/firedAtUs': us(100 * i - 2 * i) } } },
          100 * i,
          {
            channel: 'sse',
            context: { streamId: 'l', httpStatus: 200 },
          },
        );
      s.send('s2c', { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x' } }, 400, {
        channel: 'sse',
        context: { streamId: 'l' },
      });
      for (const e of s.events) t.metricsSink!.onEvent(e);
      const samples = await scrape(t);
      expect(find(samples, 'mcptap_notifications_total', { mcp_method_name: 'notifications/tools/list_changed' })[0]?.value).toBe(3);
      expect(find(samples, 'mcptap_notifications_total', { mcp_method_name: 'notifications/message' })[0]?.value).toBe(1);
      const delay = (what: string) =>
        find(samples, `mcptap_notification_delivery_delay_seconds_${what}`, { mcp_method_name: 'notifications/tools/list_changed' })[0]?.value;
      expect(delay('count')).toBe(3);
      expect(delay('sum')).toBeCloseTo(0.012, 6);
      expect(find(samples, 'mcptap_notification_delivery_delay_seconds_count', { mcp_method_name: 'notifications/message' })).toEqual([]);
      // The listen stream open is a request in flight of its own method.
      expect(find(samples, 'mcptap_requests_in_flight', { mcp_method_name: 'subscriptions/listen' })[0]?.value).toBe(1);
    });
  });

  it('labels operations with the semconv metric attributes: connection, operation, prompt, rpc status code', async () => {
    await withPrometheus(async (t) => {
      const s = new TrafficScript('http-2').open(
        { transport: 'http', target: 'http://127.0.0.1:3001/mcp', peer: { address: '127.0.0.1', port: 50000, httpVersion: '1.1' } },
        0,
      );
      const body = (streamId: string) => ({ channel: 'http-body' as const, context: { streamId } });
      s.request(1, 'tools/call', { name: 'echo', arguments: {} }, 0, body('a'));
      s.result(1, { content: [] }, 5, body('a'));
      s.request(2, 'prompts/get', { name: 'greet' }, 10, body('b'));
      s.error(2, 500, 'server said 500', 12, body('b'));
      s.request(3, 'prompts/get', { name: 'greet' }, 20, body('c'));
      s.endStream('c', { outcome: 'transport_error', httpStatus: 500 }, 22);
      for (const e of s.events) t.metricsSink!.onEvent(e);
      const samples = await scrape(t);
      const conn = {
        network_transport: 'tcp',
        network_protocol_name: 'http',
        network_protocol_version: '1.1',
        server_address: '127.0.0.1',
        server_port: '3001',
      };
      expect(
        find(samples, 'mcp_client_operation_duration_seconds_count', {
          ...conn,
          mcp_method_name: 'tools/call',
          gen_ai_operation_name: 'execute_tool',
          gen_ai_tool_name: 'echo',
        })[0]?.value,
      ).toBe(1);
      // A JSON-RPC error code 500 and an HTTP 500 share error.type, but only the first has an rpc status code.
      const prompts = find(samples, 'mcp_client_operation_duration_seconds_count', {
        ...conn,
        mcp_method_name: 'prompts/get',
        gen_ai_prompt_name: 'greet',
        error_type: '500',
      });
      expect(prompts.map((p) => [p.labels.rpc_response_status_code, p.value]).sort()).toEqual([
        [undefined, 1],
        ['500', 1],
      ]);
      expect(prompts.every((p) => p.labels.gen_ai_operation_name === undefined)).toBe(true);
    });
  });

  it('observes sink drop counts through the callback at scrape time', async () => {
    const drops: Record<string, number> = { recorder: 0 };
    await withPrometheus(
      async (t) => {
        drops.recorder = 5;
        drops['otel-spans'] = 2;
        const samples = await scrape(t);
        const observed = Object.fromEntries(find(samples, 'mcptap_sink_dropped_total').map((x) => [x.labels.mcptap_sink_name, x.value]));
        expect(observed).toEqual({ recorder: 5, 'otel-spans': 2 });
      },
      () => drops,
    );
  });
});

sinkContract('otel-metrics-sink', async () => {
  const t = await createTelemetry(resolveTelemetryConfig({ metrics: '127.0.0.1:0' }, {}));
  return { sink: t.metricsSink!, cleanup: () => t.shutdown() };
});
