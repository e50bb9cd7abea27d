/**
 * Real peers end to end through the HTTP tap as users run it: the built `mcptap http --otlp`
 * (its pipeline in the worker thread) between the MCP SDK 1.x Client over Streamable HTTP and
 * server-everything `streamableHttp`; the real OTLP/HTTP exporter posts http/json to a receiver
 * in this test, and the tap's Prometheus endpoint is scraped before the tap is stopped.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { freePort, startEverything, type ChildPeer } from '../helpers/http-peers.js';
import { startHttpTapCli } from '../helpers/http-tap-cli.js';
import { CALLER_SPAN, CALLER_TRACE, everythingCallSet } from '../helpers/everything-call-set.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../telemetry/otlp-receiver.js';
import { findSamples, parseProm } from '../telemetry/prometheus-text.js';

const HEADER_TRACE = '11111111111111111111111111111111';
const HEADER_SPAN = '2222222222222222';

describe('OTel on the HTTP tap (mcptap http --otlp) with server-everything', () => {
  let peer: ChildPeer;
  let receiver: OtlpReceiver;
  let spans: ReceivedSpan[];
  let prometheus: string;
  let sessionId: string | undefined;
  let tapStderr = '';
  const progress: number[] = [];

  beforeAll(async () => {
    [peer, receiver] = await Promise.all([startEverything('streamableHttp'), startOtlpReceiver()]);
    const metricsPort = await freePort();
    const tap = await startHttpTapCli(peer.url, ['--otlp', receiver.url, '--metrics', `127.0.0.1:${metricsPort}`], {
      ...process.env,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    });
    try {
      const client = new Client({ name: 'mcptap-otel-http-e2e', version: '1.0.0' });
      // Every POST carries an HTTP traceparent: the tap links it (the MCP parent comes from _meta).
      const transport = new StreamableHTTPClientTransport(new URL(tap.url), {
        requestInit: { headers: { traceparent: `00-${HEADER_TRACE}-${HEADER_SPAN}-01` } },
      });
      await client.connect(transport);
      sessionId = transport.sessionId;
      await everythingCallSet(client, progress);
      await transport.terminateSession();
      await client.close();
      // The session ends with the DELETE, which the worker sees a batch later: scrape until it has (bounded).
      // The endpoint opens once the tap's sinks have booted (after the server's first answer).
      for (let i = 0; i < 50; i++) {
        prometheus = await fetch(`http://127.0.0.1:${metricsPort}/metrics`).then(
          (r) => r.text(),
          () => '',
        );
        if (prometheus.includes('mcp_client_session_duration_seconds_count')) break;
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      tap.child.kill('SIGTERM');
      await tap.exited; // the tap flushes its spans on the way out
      tapStderr = tap.stderr();
    }
    spans = receiver.spans;
  });

  afterAll(async () => {
    await Promise.all([receiver?.close(), peer?.stop()]);
  });

  const named = (name: string) => spans.filter((s) => s.name === name);

  it('exports exactly one CLIENT span per exchange, one session span and one for the GET stream', () => {
    expect(tapStderr).not.toContain('[stdout]');
    for (const name of [
      'initialize',
      'tools/list',
      'tools/call echo',
      'tools/call trigger-long-running-operation',
      'tools/call get-sum',
      'no/such-method',
      'mcp.session',
      'mcptap.stream',
    ]) {
      expect(named(name), name).toHaveLength(1);
    }
    expect(spans).toHaveLength(8);
    for (const s of spans) expect(s.kind).toBe(3);
  });

  it('gives every exchange span the HTTP transport, server, session and protocol attributes', () => {
    expect(sessionId).toBeTruthy();
    for (const s of spans.filter((x) => x.name !== 'mcp.session' && x.name !== 'mcptap.stream')) {
      expect(s.attributes, s.name).toMatchObject({
        'network.transport': 'tcp',
        'network.protocol.name': 'http',
        'network.protocol.version': '1.1',
        'server.address': '127.0.0.1',
        'server.port': peer.port,
        'http.response.status_code': 200,
        'mcp.session.id': sessionId,
        'jsonrpc.request.id': expect.any(String),
      });
      expect(s.attributes['mcp.protocol.version']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(s.links).toContainEqual({ traceId: HEADER_TRACE, spanId: HEADER_SPAN, attributes: { 'mcptap.link': 'http' } });
    }
  });

  it("spans the SDK client's standalone GET stream from its opening to its close, with its notifications", () => {
    const get = named('mcptap.stream')[0]!;
    expect(get.attributes).toMatchObject({
      'mcptap.stream.kind': 'get',
      'mcptap.stream.notifications': expect.any(Number),
      'mcp.session.id': sessionId,
      'network.transport': 'tcp',
      'server.port': peer.port,
    });
    const session = named('mcp.session')[0]!;
    expect(get.startTimeUnixNano).toBeGreaterThanOrEqual(session.startTimeUnixNano);
    expect(get.endTimeUnixNano).toBeGreaterThan(get.startTimeUnixNano);
    expect(get.links).toContainEqual(expect.objectContaining({ spanId: session.spanId }));
  });

  it('parents the echo span on the client-sent _meta.traceparent', () => {
    const echo = named('tools/call echo')[0]!;
    expect(echo.traceId).toBe(CALLER_TRACE);
    expect(echo.parentSpanId).toBe(CALLER_SPAN);
    expect(echo.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'echo',
      'gen_ai.operation.name': 'execute_tool',
      'mcptap.outcome': 'ok',
    });
    expect(echo.status.code).toBe(0);
  });

  it('records the progress notifications (and the SSE events carrying them) as span events', () => {
    const long = named('tools/call trigger-long-running-operation')[0]!;
    const events = long.events.filter((e) => e.name === 'mcptap.progress');
    expect(events.map((e) => e.attributes['mcptap.progress.progress'])).toEqual([1, 2, 3]);
    expect(progress).toEqual([1, 2, 3]);
    expect(long.events.filter((e) => e.name === 'mcptap.sse.event').length).toBeGreaterThanOrEqual(3);
    for (const e of events) {
      expect(e.timeUnixNano).toBeGreaterThan(long.startTimeUnixNano);
      expect(e.timeUnixNano).toBeLessThanOrEqual(long.endTimeUnixNano);
    }
  });

  it('keeps the failure layers apart: isError is tool_error, the unknown method its JSON-RPC code', () => {
    const sum = named('tools/call get-sum')[0]!;
    expect(sum.attributes['error.type']).toBe('tool_error');
    expect(sum.attributes['rpc.response.status_code']).toBeUndefined();
    expect(sum.status.code).toBe(2);
    const unknown = named('no/such-method')[0]!;
    expect(unknown.attributes).toMatchObject({ 'error.type': '-32601', 'rpc.response.status_code': '-32601', 'http.response.status_code': 200 });
    expect(unknown.status).toMatchObject({ code: 2, message: expect.stringMatching(/not found/i) });
  });

  it('labels the semconv metrics with the same attributes', () => {
    const samples = parseProm(prometheus);
    const conn = {
      network_transport: 'tcp',
      network_protocol_name: 'http',
      network_protocol_version: '1.1',
      server_address: '127.0.0.1',
      server_port: String(peer.port),
    };
    expect(
      findSamples(samples, 'mcp_client_operation_duration_seconds_count', {
        ...conn,
        mcp_method_name: 'tools/call',
        gen_ai_tool_name: 'echo',
        gen_ai_operation_name: 'execute_tool',
      })[0]?.value,
    ).toBe(1);
    expect(
      findSamples(samples, 'mcp_client_operation_duration_seconds_count', { ...conn, gen_ai_tool_name: 'get-sum', error_type: 'tool_error' })[0]?.value,
    ).toBe(1);
    expect(
      findSamples(samples, 'mcp_client_operation_duration_seconds_count', {
        ...conn,
        mcp_method_name: 'no/such-method',
        error_type: '-32601',
        rpc_response_status_code: '-32601',
      })[0]?.value,
    ).toBe(1);
    expect(findSamples(samples, 'mcp_client_session_duration_seconds_count', conn)[0]?.value).toBe(1);
  });
});
