/**
 * Real peers end to end, in process: the MCP SDK 1.x Client talks to server-everything through the
 * stdio tap; the pipeline feeds the OTel sinks built by createTelemetry; the real OTLP/HTTP (json)
 * exporter posts to an OTLP receiver in this test and Prometheus is scraped with fetch.
 * The client reaches the tap through in-memory streams (the tap's host side), the server is a
 * real child process.
 */
import { PassThrough } from 'node:stream';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { Pipeline } from '../../src/pipeline/pipeline.js';
import { startStdioTap } from '../../src/tap/stdio-tap.js';
import { createTelemetry } from '../../src/telemetry/telemetry.js';
import { resolveTelemetryConfig } from '../../src/telemetry/telemetry-config.js';
import { BIN } from '../helpers/paths.js';
import { CALLER_SPAN, CALLER_TRACE, everythingCallSet } from '../helpers/everything-call-set.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../telemetry/otlp-receiver.js';
import { findSamples, parseProm } from '../telemetry/prometheus-text.js';

const EVERYTHING = join(BIN, 'mcp-server-everything');

/** The host side of the tap as an SDK transport: NDJSON over the tap's stdin/stdout streams. */
class StreamTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private readonly buffer = new ReadBuffer();

  constructor(
    private readonly toServer: PassThrough,
    private readonly fromServer: PassThrough,
  ) {}

  async start(): Promise<void> {
    this.fromServer.on('data', (chunk: Buffer) => {
      this.buffer.append(chunk);
      for (let m = this.buffer.readMessage(); m; m = this.buffer.readMessage()) this.onmessage?.(m);
    });
  }

  async send(message: JSONRPCMessage): Promise<void> {
    this.toServer.write(serializeMessage(message));
  }

  async close(): Promise<void> {
    this.toServer.end();
    this.onclose?.();
  }
}

describe('OTel sinks on the stdio tap with server-everything', () => {
  let receiver: OtlpReceiver;
  let spans: ReceivedSpan[];
  let prometheus: string;
  const progress: number[] = [];

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    const telemetry = await createTelemetry(
      resolveTelemetryConfig(
        { otlp: receiver.url, metrics: '127.0.0.1:0' },
        { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_METRIC_EXPORT_INTERVAL: '60000' },
      ),
    );
    const pipeline = new Pipeline();
    for (const s of telemetry.sinks) pipeline.addSink(s);
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const tap = await startStdioTap({
      command: EVERYTHING,
      args: ['stdio'],
      pipeline,
      logger: { debug() {}, info() {}, warn() {}, error() {} },
      stdin,
      stdout,
      stderr: new PassThrough().resume(),
    });
    const client = new Client({ name: 'mcptap-otel-e2e', version: '1.0.0' });
    await client.connect(new StreamTransport(stdin, stdout));
    await everythingCallSet(client, progress);
    await client.close();
    await tap.done;
    prometheus = await (await fetch(telemetry.metricsUrl!)).text();
    await pipeline.close();
    await telemetry.shutdown();
    spans = receiver.spans;
  });

  afterAll(async () => {
    await receiver?.close();
  });

  const named = (name: string) => spans.filter((s) => s.name === name);

  it('exports one span per exchange and one session span', () => {
    expect(named('mcp.session')).toHaveLength(1);
    for (const name of ['initialize', 'tools/list', 'tools/call echo', 'tools/call trigger-long-running-operation', 'tools/call get-sum', 'no/such-method']) {
      expect(named(name), name).toHaveLength(1);
    }
    expect(spans).toHaveLength(7);
    const session = named('mcp.session')[0]!;
    expect(session.attributes).toMatchObject({ 'network.transport': 'pipe', 'process.exit.code': expect.any(Number) });
    expect(session.attributes['mcp.protocol.version']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });

  it('parents the echo span on the client-sent _meta.traceparent', () => {
    const echo = named('tools/call echo')[0]!;
    expect(echo.traceId).toBe(CALLER_TRACE);
    expect(echo.parentSpanId).toBe(CALLER_SPAN);
    expect(echo.attributes).toMatchObject({ 'gen_ai.tool.name': 'echo', 'gen_ai.operation.name': 'execute_tool', 'mcptap.outcome': 'ok' });
  });

  it('records the server progress notifications as span events', () => {
    const long = named('tools/call trigger-long-running-operation')[0]!;
    const events = long.events.filter((e) => e.name === 'mcptap.progress');
    expect(events.map((e) => e.attributes['mcptap.progress.progress'])).toEqual([1, 2, 3]);
    expect(progress.slice(0, 2)).toEqual([1, 2]);
    for (const e of events) {
      expect(e.timeUnixNano).toBeGreaterThan(long.startTimeUnixNano);
      expect(e.timeUnixNano).toBeLessThanOrEqual(long.endTimeUnixNano);
    }
  });

  it('classifies the isError result and the unknown method', () => {
    expect(named('tools/call get-sum')[0]!.attributes['error.type']).toBe('tool_error');
    expect(named('no/such-method')[0]!.attributes).toMatchObject({ 'error.type': '-32601', 'rpc.response.status_code': '-32601' });
  });

  it('exposes the operation-duration histogram to Prometheus with semconv labels', () => {
    const samples = parseProm(prometheus);
    expect(
      findSamples(samples, 'mcp_client_operation_duration_seconds_count', {
        mcp_method_name: 'tools/call',
        gen_ai_tool_name: 'echo',
        network_transport: 'pipe',
      })[0]?.value,
    ).toBe(1);
    expect(findSamples(samples, 'mcp_client_operation_duration_seconds_count', { gen_ai_tool_name: 'get-sum', error_type: 'tool_error' })[0]?.value).toBe(1);
    expect(findSamples(samples, 'mcptap_exchanges_total', { mcptap_outcome: 'jsonrpc_error', mcp_method_name: 'no/such-method' })[0]?.value).toBe(1);
    expect(findSamples(samples, 'mcp_client_session_duration_seconds_count', { network_transport: 'pipe' })[0]?.value).toBe(1);
  });
});
