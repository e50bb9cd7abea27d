/**
 * The span sink end to end: events from the real Correlator -> OtelSpanSink -> the real SDK
 * provider and BatchSpanProcessor -> the real OTLP/HTTP (json) exporter -> an OTLP receiver in
 * this test. Checks one span per exchange with semconv names, kinds, attributes, events, status
 * and trace context; the session span; content capture with the real Redactor.
 */
import { describe, expect, it } from 'vitest';
import type { TapEvent } from '../../src/model/events.js';
import { Redactor } from '../../src/redact/redactor.js';
import { createTelemetry, type TelemetryDeps } from '../../src/telemetry/telemetry.js';
import { resolveTelemetryConfig, type TelemetryFlags } from '../../src/telemetry/telemetry-config.js';
import { startOtlpReceiver, type ReceivedSpan } from './otlp-receiver.js';
import { sinkContract } from '../sinks/sink-contract.js';
import { TrafficScript, us } from '../sinks/traffic-script.js';

const ENV = { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_METRICS_EXPORTER: 'none' };
const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const CALLER_TRACEPARENT = `00-${CALLER_TRACE}-${CALLER_SPAN}-01`;
const ns = (ms: number) => BigInt(us(ms)) * 1000n;

async function exportSpans(
  events: TapEvent[] | ((t: Awaited<ReturnType<typeof createTelemetry>>) => TapEvent[]),
  flags: TelemetryFlags = {},
  deps: TelemetryDeps = {},
): Promise<ReceivedSpan[]> {
  const receiver = await startOtlpReceiver();
  try {
    const telemetry = await createTelemetry(resolveTelemetryConfig({ otlp: receiver.url, ...flags }, ENV), deps);
    expect(telemetry.sinks.map((s) => s.name)).toEqual(['otel-spans']);
    const list = typeof events === 'function' ? events(telemetry) : events;
    for (const e of list) for (const s of telemetry.sinks) s.onEvent(e);
    await telemetry.shutdown();
    expect(telemetry.spanSink!.stats()).toMatchObject({ dropped: 0, errors: 0 });
    expect(telemetry.spanSink!.stats().events).toBeGreaterThanOrEqual(list.length);
    return receiver.spans;
  } finally {
    await receiver.close();
  }
}

/** A stdio session: handshake, ok / isError / -32601 / progress / traceparent / two cancels / a server->client request / an orphan. */
function stdioSession(): TrafficScript {
  const s = new TrafficScript('stdio-1').open({ transport: 'stdio', target: 'node server.mjs --token=s3cret', pid: 4242 }, 0);
  s.handshake(1);
  s.request(1, 'tools/call', { name: 'echo', arguments: { message: 'hi' } }, 10);
  s.result(1, { content: [{ type: 'text', text: 'Echo: hi' }] }, 25);
  s.request(2, 'tools/call', { name: 'get-sum', arguments: { a: 'x' } }, 30);
  s.result(2, { content: [{ type: 'text', text: 'invalid a: secret detail' }], isError: true }, 31);
  s.request(3, 'no/such-method', {}, 40);
  s.error(3, -32601, 'Method not found', 41);
  s.request(4, 'tools/call', { name: 'long-op', arguments: { steps: 2 }, _meta: { progressToken: 'p4' } }, 50);
  s.send('s2c', { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'p4', progress: 1, total: 2, message: 'step 1' } }, 60);
  s.send('s2c', { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'p4', progress: 2, total: 2 } }, 70);
  s.result(4, { content: [] }, 80);
  s.request(5, 'tools/call', { name: 'echo', arguments: {}, _meta: { traceparent: CALLER_TRACEPARENT, tracestate: 'vendor=1' } }, 90);
  s.result(5, { content: [] }, 95);
  s.request(6, 'tools/call', { name: 'slow', arguments: {} }, 100);
  s.send('c2s', { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 6, reason: 'user pressed stop' } }, 110);
  s.result(6, { content: [] }, 120);
  s.request(7, 'tools/call', { name: 'slow', arguments: {} }, 130);
  s.send('c2s', { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7 } }, 140);
  s.request('s1', 'sampling/createMessage', { messages: [], maxTokens: 10 }, 150, { direction: 's2c' });
  s.result('s1', { role: 'assistant', content: { type: 'text', text: 'ok' }, model: 'm' }, 160, { direction: 'c2s' });
  s.result(99, {}, 170);
  s.tick(1200);
  s.close(2000);
  return s;
}

const byId = (spans: ReceivedSpan[], id: string) => spans.filter((s) => s.attributes['jsonrpc.request.id'] === id && s.name !== 'mcp.session');

describe('OtelSpanSink over OTLP/HTTP json', () => {
  it('exports exactly one CLIENT span per request exchange, plus one session span', async () => {
    const script = stdioSession();
    const spans = await exportSpans(script.events);
    const exchangeSpans = spans.filter((s) => s.name !== 'mcp.session');
    expect(exchangeSpans).toHaveLength(script.completed().length);
    expect(exchangeSpans).toHaveLength(9); // initialize, ids 1..7, s1; the orphan has no request
    expect(new Set(exchangeSpans.map((s) => s.attributes['mcptap.exchange.key'])).size).toBe(9);
    expect(spans.filter((s) => s.name === 'mcp.session')).toHaveLength(1);
    for (const s of spans) expect(s.kind).toBe(3);
    expect(exchangeSpans.map((s) => s.name).sort()).toEqual(
      [
        'initialize',
        'tools/call echo',
        'tools/call get-sum',
        'no/such-method',
        'tools/call long-op',
        'tools/call echo',
        'tools/call slow',
        'tools/call slow',
        'sampling/createMessage',
      ].sort(),
    );
  });

  it('sets jsonrpc.protocol.version when a request is not JSON-RPC 2.0', async () => {
    const s = new TrafficScript('stdio-3').open({ transport: 'stdio', target: 'srv' }, 0);
    s.send('c2s', { jsonrpc: '1.5', id: 1, method: 'tools/list' }, 1);
    s.result(1, { tools: [] }, 2);
    s.send('c2s', { id: 2, method: 'tools/list' }, 3); // JSON-RPC 1.0 has no jsonrpc member
    s.result(2, { tools: [] }, 4);
    const spans = await exportSpans(s.events);
    expect(byId(spans, '1')[0]!.attributes['jsonrpc.protocol.version']).toBe('1.5');
    expect(byId(spans, '2')[0]!.attributes['jsonrpc.protocol.version']).toBe('1.0');
  });

  it('maps a successful tools/call to semconv attributes with exact timestamps', async () => {
    const spans = await exportSpans(stdioSession().events);
    const [echo] = byId(spans, '1');
    expect(echo!.name).toBe('tools/call echo');
    expect(echo!.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'jsonrpc.request.id': '1',
      'gen_ai.tool.name': 'echo',
      'gen_ai.operation.name': 'execute_tool',
      'mcp.protocol.version': '2025-11-25',
      'network.transport': 'pipe',
      'mcptap.outcome': 'ok',
      'mcptap.direction': 'c2s',
    });
    expect(echo!.attributes['error.type']).toBeUndefined();
    expect(echo!.attributes['gen_ai.tool.call.arguments']).toBeUndefined();
    expect(echo!.attributes['network.protocol.name']).toBeUndefined();
    expect(echo!.attributes['jsonrpc.protocol.version']).toBeUndefined(); // semconv: only when not 2.0
    expect(echo!.status.code).toBe(0);
    expect(echo!.startTimeUnixNano).toBe(ns(10));
    expect(echo!.endTimeUnixNano).toBe(ns(25));
    expect(echo!.resource['service.name']).toBe('mcptap');
  });

  it('marks isError as tool_error and JSON-RPC errors with their code, without leaking tool output', async () => {
    const spans = await exportSpans(stdioSession().events);
    const [bad] = byId(spans, '2');
    expect(bad!.attributes['error.type']).toBe('tool_error');
    expect(bad!.attributes['rpc.response.status_code']).toBeUndefined();
    expect(bad!.status.code).toBe(2);
    expect(bad!.status.message).not.toContain('secret detail');
    const [unknown] = byId(spans, '3');
    expect(unknown!.name).toBe('no/such-method');
    expect(unknown!.attributes).toMatchObject({ 'error.type': '-32601', 'rpc.response.status_code': '-32601', 'mcptap.outcome': 'jsonrpc_error' });
    expect(unknown!.status).toEqual({ code: 2, message: 'Method not found' });
  });

  it('turns progress notifications into mcptap.progress span events at their times', async () => {
    const spans = await exportSpans(stdioSession().events);
    const [long] = byId(spans, '4');
    const progress = long!.events.filter((e) => e.name === 'mcptap.progress');
    expect(progress.map((e) => e.timeUnixNano)).toEqual([ns(60), ns(70)]);
    expect(progress[0]!.attributes).toEqual({ 'mcptap.progress.progress': 1, 'mcptap.progress.total': 2, 'mcptap.progress.message': 'step 1' });
    expect(progress[1]!.attributes).toEqual({ 'mcptap.progress.progress': 2, 'mcptap.progress.total': 2 });
  });

  it('parents a span on params._meta.traceparent (SEP-414) and starts new roots otherwise', async () => {
    const spans = await exportSpans(stdioSession().events);
    const [traced] = byId(spans, '5');
    expect(traced!.traceId).toBe(CALLER_TRACE);
    expect(traced!.parentSpanId).toBe(CALLER_SPAN);
    const [plain] = byId(spans, '1');
    expect(plain!.parentSpanId).toBeUndefined();
    expect(plain!.traceId).not.toBe(CALLER_TRACE);
    const session = spans.find((s) => s.name === 'mcp.session')!;
    expect(session.parentSpanId).toBeUndefined();
    // Exchanges are not children of the session span, but link to it.
    for (const s of spans.filter((x) => x.name !== 'mcp.session')) {
      expect(s.parentSpanId).not.toBe(session.spanId);
      expect(s.links).toContainEqual({ traceId: session.traceId, spanId: session.spanId, attributes: { 'mcptap.link': 'session' } });
    }
  });

  it('records cancellation (by whom, why) and a response that arrived after it', async () => {
    const spans = await exportSpans(stdioSession().events);
    const [late] = byId(spans, '6');
    expect(late!.attributes['error.type']).toBe('cancelled');
    expect(late!.status).toEqual({ code: 2, message: 'cancelled by c2s: user pressed stop' });
    expect(late!.events.find((e) => e.name === 'mcptap.cancelled')).toEqual({
      name: 'mcptap.cancelled',
      timeUnixNano: ns(110),
      // What followed the cancel: the response still came 10 ms later (the server went on working).
      attributes: {
        'mcptap.cancel.by': 'c2s',
        'mcptap.cancel.reason': 'user pressed stop',
        'mcptap.cancel.mechanism': 'notification',
        'mcptap.cancel.progress_after': 0,
        'mcptap.cancel.work_after_ms': 10,
      },
    });
    expect(late!.events.find((e) => e.name === 'mcptap.response_after_cancel')?.timeUnixNano).toBe(ns(120));
    expect(late!.endTimeUnixNano).toBe(ns(120));
    const [never] = byId(spans, '7');
    expect(never!.attributes['error.type']).toBe('cancelled');
    expect(never!.events.map((e) => e.name)).toEqual(['mcptap.cancelled']);
    expect(never!.endTimeUnixNano).toBe(ns(140));
  });

  it('spans server->client requests too, and the session span covers the connection', async () => {
    const spans = await exportSpans(stdioSession().events);
    const [sampling] = byId(spans, 's1');
    expect(sampling!.name).toBe('sampling/createMessage');
    expect(sampling!.attributes['mcptap.direction']).toBe('s2c');
    expect(sampling!.status.code).toBe(0);
    const session = spans.find((s) => s.name === 'mcp.session')!;
    expect(session.startTimeUnixNano).toBe(ns(0));
    expect(session.endTimeUnixNano).toBe(ns(2000));
    expect(session.attributes).toMatchObject({
      'network.transport': 'pipe',
      'process.pid': 4242,
      'process.exit.code': 0,
      'mcp.protocol.version': '2025-11-25',
    });
    // The command line can carry secrets: it is content, exported only on opt-in.
    expect(session.attributes['mcptap.connection.target']).toBeUndefined();
  });

  it('maps Streamable HTTP exchanges: transport, server, status code, session, SSE events, header link', async () => {
    const headerTraceparent = '00-11111111111111111111111111111111-2222222222222222-01';
    const s = new TrafficScript('http-1').open(
      { transport: 'http', target: 'http://127.0.0.1:3001/mcp', peer: { address: '127.0.0.1', port: 50000, httpVersion: '1.1' } },
      0,
    );
    const ctx = { streamId: 'st-1', sessionId: 'sess-9', headerProtocolVersion: '2025-11-25', headers: { traceparent: headerTraceparent } };
    s.request('a', 'tools/call', { name: 'long-op', arguments: {}, _meta: { progressToken: 9 } }, 10, { channel: 'http-body', context: ctx });
    s.send('s2c', { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 9, progress: 1 } }, 20, {
      channel: 'sse',
      context: { streamId: 'st-1', httpStatus: 200 },
    });
    s.send('s2c', { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'working' } }, 25, {
      channel: 'sse',
      context: { streamId: 'st-1', httpStatus: 200 },
    });
    s.result('a', { content: [] }, 30, { channel: 'sse', context: { streamId: 'st-1', httpStatus: 200, sessionId: 'sess-9' } });
    s.request('b', 'tools/list', {}, 40, { channel: 'http-body', context: { streamId: 'st-2', sessionId: 'sess-9' } });
    s.endStream('st-2', { outcome: 'transport_error', errorClass: 'connection_reset', httpStatus: 502 }, 45);
    s.close(50, 'session deleted', null);
    const spans = await exportSpans(s.events);
    const [a] = byId(spans, 'a');
    expect(a!.attributes).toMatchObject({
      'network.transport': 'tcp',
      'network.protocol.name': 'http',
      'network.protocol.version': '1.1',
      'server.address': '127.0.0.1',
      'server.port': 3001,
      'http.response.status_code': 200,
      'mcp.session.id': 'sess-9',
      'mcp.protocol.version': '2025-11-25',
      'mcptap.sse.events': 3, // progress, message, the response
      'mcptap.sse.time_to_first_event': 0.01,
      'mcptap.sse.gap_max': 0.005,
    });
    expect(a!.events.filter((e) => e.name === 'mcptap.sse.event').map((e) => e.timeUnixNano)).toEqual([ns(20), ns(25), ns(30)]);
    expect(a!.links).toContainEqual({ traceId: '11111111111111111111111111111111', spanId: '2222222222222222', attributes: { 'mcptap.link': 'http' } });
    expect(a!.parentSpanId).toBeUndefined();
    const [b] = byId(spans, 'b');
    expect(b!.attributes).toMatchObject({ 'error.type': 'connection_reset', 'http.response.status_code': 502, 'mcptap.outcome': 'transport_error' });
    expect(b!.status.code).toBe(2);
    expect(b!.endTimeUnixNano).toBe(ns(45));
  });

  it('captures redacted, truncated content only when opted in', async () => {
    const redactor = new Redactor({ key: 'test-key' });
    const s = new TrafficScript('stdio-2').open({ transport: 'stdio', target: 'node server.mjs --token=s3cret' }, 0);
    s.request(1, 'tools/call', { name: 'login', arguments: { user: 'ann', token: 'tok-123' } }, 1);
    s.result(1, { content: [{ type: 'text', text: 'x'.repeat(20_000) }] }, 2);
    s.request(2, 'resources/read', { uri: 'file:///etc/motd' }, 3);
    s.result(2, { contents: [{ uri: 'file:///etc/motd', text: 'hello' }] }, 4);
    s.request(3, 'tools/call', { name: 'fail', arguments: {} }, 5);
    s.result(3, { content: [{ type: 'text', text: 'failed: password=hunter2' }], isError: true }, 6);
    const redact = (v: unknown) => (typeof v === 'string' ? redactor.redactText(v) : redactor.redactJson(v));
    const spans = await exportSpans(s.events, { captureContent: true }, { redact });
    const [login] = byId(spans, '1');
    const args = JSON.parse(login!.attributes['gen_ai.tool.call.arguments'] as string);
    expect(args.user).toBe('ann');
    expect(args.token).toBe(redactor.token('tok-123'));
    const result = login!.attributes['gen_ai.tool.call.result'] as string;
    expect(result.length).toBeLessThan(8300);
    expect(result).toMatch(/…\[truncated \d+ chars\]$/);
    const [read] = byId(spans, '2');
    expect(read!.name).toBe('resources/read');
    expect(read!.attributes['mcp.resource.uri']).toBe('file:///etc/motd');
    expect(JSON.parse(read!.attributes['mcptap.request.params'] as string)).toEqual({ uri: 'file:///etc/motd' });
    const [fail] = byId(spans, '3');
    expect(fail!.status.message).toContain('failed: password=');
    expect(fail!.status.message).not.toContain('hunter2');
    // semconv: gen_ai.tool.call.result only for a successful execution; a failed tool's result is mcptap's own attribute.
    expect(fail!.attributes['gen_ai.tool.call.result']).toBeUndefined();
    expect(JSON.parse(fail!.attributes['mcptap.response.result'] as string)).toMatchObject({ isError: true });
    const session = spans.find((x) => x.name === 'mcp.session')!;
    expect(session.attributes['mcptap.connection.target']).toBe(`node server.mjs --token=${redactor.token('s3cret')}`);
  });

  it('drops a captured value rather than export it when the redactor throws', async () => {
    const s = new TrafficScript().open({ transport: 'stdio', target: 'srv' }, 0);
    s.request(1, 'tools/call', { name: 'echo', arguments: { a: 1 } }, 1);
    s.result(1, { content: [] }, 2);
    const receiver = await startOtlpReceiver();
    const telemetry = await createTelemetry(resolveTelemetryConfig({ otlp: receiver.url, captureContent: true }, ENV), {
      redact: () => {
        throw new Error('redactor broke');
      },
    });
    for (const e of s.events) telemetry.spanSink!.onEvent(e);
    await telemetry.shutdown();
    await receiver.close();
    const [echo] = byId(receiver.spans, '1');
    expect(echo!.attributes['gen_ai.tool.call.arguments']).toBeUndefined();
    expect(echo!.attributes['gen_ai.tool.call.result']).toBeUndefined();
    expect(telemetry.spanSink!.stats().errors).toBeGreaterThan(0);
  });
});

describe('--inject-trace-context', () => {
  it('gives the exchange span the ids injected at request time, under the caller parent', async () => {
    let injected: string[] = [];
    const spans = await exportSpans(
      (telemetry) => {
        const minter = telemetry.minter!;
        expect(minter).toBeDefined();
        const s = new TrafficScript().open({ transport: 'stdio', target: 'srv' }, 0);
        // What the tap does before forwarding: rewrite the request, then the pipeline sees the rewritten bytes.
        const withParent = minter.inject('conn-1', 'c2s', {
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'echo', _meta: { traceparent: CALLER_TRACEPARENT } },
        });
        const rootless = minter.inject('conn-1', 'c2s', { jsonrpc: '2.0', id: 2, method: 'tools/list' });
        injected = [withParent, rootless].map((r) => (r.params as { _meta: { traceparent: string } })._meta.traceparent);
        s.request(1, 'tools/call', withParent.params as Record<string, unknown>, 1);
        s.result(1, { content: [] }, 2);
        s.request(2, 'tools/list', rootless.params as Record<string, unknown>, 3);
        s.result(2, { tools: [] }, 4);
        return s.events;
      },
      { injectTraceContext: true },
    );
    const [, traceId1, spanId1] = injected[0]!.split('-');
    const [, traceId2, spanId2] = injected[1]!.split('-');
    expect(traceId1).toBe(CALLER_TRACE);
    const [call] = byId(spans, '1');
    expect(call).toMatchObject({ traceId: CALLER_TRACE, spanId: spanId1, parentSpanId: CALLER_SPAN });
    const [list] = byId(spans, '2');
    expect(list).toMatchObject({ traceId: traceId2, spanId: spanId2 });
    expect(list!.parentSpanId).toBeUndefined();
  });
});

sinkContract('otel-span-sink', async () => {
  const receiver = await startOtlpReceiver();
  const telemetry = await createTelemetry(resolveTelemetryConfig({ otlp: receiver.url }, ENV));
  return {
    sink: telemetry.spanSink!,
    cleanup: async () => {
      await telemetry.shutdown();
      await receiver.close();
    },
  };
});
