/**
 * `mcptap stdio --inject-trace-context` with real peers: the SDK 1.x client calls a real SDK 1.x
 * server (test/fixtures/meta-echo-server.mjs, whose tool answers with the `_meta` it received)
 * through the built CLI with `--otlp` to an OTLP receiver in this test. The server must receive a
 * traceparent naming exactly the span the tap exported; the recording holds the bytes the server
 * got; `mcptap export` of that recording gives the same span and trace ids.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES, MCPTAP } from '../helpers/paths.js';
import { connectThroughTap } from '../helpers/tap-client.js';
import { RecordingStore } from '../../src/store/recording-store.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../telemetry/otlp-receiver.js';

const OTLP_JSON = { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_METRIC_EXPORT_INTERVAL: '60000' };
const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

type Meta = { traceparent?: string; progressToken?: unknown } | null;

function received(result: unknown): Meta {
  const text = (result as { content: { text: string }[] }).content[0]!.text;
  return JSON.parse(text) as Meta;
}

describe('--inject-trace-context on the stdio tap', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-inject-'));
  const db = join(dir, 'inject.db');
  let live: OtlpReceiver;
  let metaWithCaller: Meta;
  let metaPlain: Meta;
  let spans: ReceivedSpan[];

  beforeAll(async () => {
    live = await startOtlpReceiver();
    const tapped = await connectThroughTap(
      ['--record', db, '--otlp', live.url, '--inject-trace-context'],
      [process.execPath, join(FIXTURES, 'meta-echo-server.mjs')],
      OTLP_JSON,
    );
    metaWithCaller = received(
      await tapped.client.callTool({ name: 'show-meta', arguments: {}, _meta: { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` } }),
    );
    metaPlain = received(await tapped.client.callTool({ name: 'show-meta', arguments: {} }));
    await tapped.client.listTools();
    await tapped.close();
    spans = await live.waitForSpans(5, 10_000);
  });

  afterAll(async () => {
    await live?.close();
  });

  const spanOfRequest = (id: number) => spans.find((s) => s.attributes['jsonrpc.request.id'] === String(id) && s.name !== 'mcp.session')!;

  it('hands the server a traceparent naming the exported span, which is the child of the caller', () => {
    const call = spanOfRequest(1);
    expect(call.name).toBe('tools/call show-meta');
    expect(metaWithCaller?.traceparent).toBe(`00-${call.traceId}-${call.spanId}-01`);
    expect(call.traceId).toBe(CALLER_TRACE);
    expect(call.parentSpanId).toBe(CALLER_SPAN);
  });

  it('starts a new trace when the caller sent none, and injects into requests without params', () => {
    const call = spanOfRequest(2);
    expect(metaPlain?.traceparent).toBe(`00-${call.traceId}-${call.spanId}-01`);
    expect(call.parentSpanId).toBeUndefined();
    expect(call.traceId).not.toBe(CALLER_TRACE);
    expect(spans.map((s) => s.name).sort()).toEqual(['initialize', 'mcp.session', 'tools/call show-meta', 'tools/call show-meta', 'tools/list']);
  });

  it('records the bytes the server got: requests carry the injected context, notifications are untouched', () => {
    const store = RecordingStore.open(db);
    try {
      const c2s = [...store.frames(1)].filter((f) => f.direction === 'c2s' && f.kind === 'message');
      const requests = c2s.filter((f) => f.kind === 'message' && f.messageKind === 'request');
      expect(requests).toHaveLength(4);
      for (const f of requests) {
        const span = spanOfRequest((f as { message: { id: number } }).message.id);
        expect(JSON.parse(f.raw.toString()).params._meta.traceparent).toBe(`00-${span.traceId}-${span.spanId}-01`);
      }
      const initialized = c2s.find((f) => f.kind === 'message' && f.messageKind === 'notification')!;
      expect(JSON.parse(initialized.raw.toString())).toEqual({ jsonrpc: '2.0', method: 'notifications/initialized' });
    } finally {
      store.close();
    }
  });

  it('exports the recording with the live span and trace ids (the overwritten caller parent is not known then)', async () => {
    const again = await startOtlpReceiver();
    try {
      const child = spawn(process.execPath, [MCPTAP, 'export', db, '--otlp', again.url], { env: { ...process.env, ...OTLP_JSON }, stdio: 'ignore' });
      expect(await new Promise((r) => child.once('close', r))).toBe(0);
      const ids = (list: ReceivedSpan[]) => list.map((s) => `${s.name} ${s.traceId} ${s.spanId}`).sort();
      expect(ids(again.spans)).toEqual(ids(spans));
      const exported = again.spans.find((s) => s.spanId === spanOfRequest(1).spanId)!;
      expect(exported.parentSpanId).toBeUndefined();
      const { parentSpanId: _p, ...liveRest } = spanOfRequest(1);
      expect(exported).toEqual(liveRest);
    } finally {
      await again.close();
    }
  });
});

describe('--inject-trace-context with OTEL_TRACES_SAMPLER=parentbased_traceidratio and ratio 0', () => {
  let live: OtlpReceiver;
  let sampledCaller: Meta;
  let unsampledCaller: Meta;
  let noCaller: Meta;
  let spans: ReceivedSpan[];

  beforeAll(async () => {
    live = await startOtlpReceiver();
    const tapped = await connectThroughTap(['--otlp', live.url, '--inject-trace-context'], [process.execPath, join(FIXTURES, 'meta-echo-server.mjs')], {
      ...OTLP_JSON,
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0',
    });
    const call = async (flags?: '00' | '01') =>
      received(
        await tapped.client.callTool({
          name: 'show-meta',
          arguments: {},
          ...(flags ? { _meta: { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-${flags}` } } : {}),
        }),
      );
    sampledCaller = await call('01');
    unsampledCaller = await call('00');
    noCaller = await call();
    await tapped.close();
    spans = await live.waitForSpans(1, 10_000);
  });

  afterAll(async () => {
    await live?.close();
  });

  it('exports only the child of the sampled caller, and tells the server so', () => {
    // The tap has exited, so every span it would send has arrived.
    expect(spans.map((s) => s.name)).toEqual(['tools/call show-meta']);
    expect(spans[0]!.parentSpanId).toBe(CALLER_SPAN);
    expect(sampledCaller?.traceparent).toBe(`00-${CALLER_TRACE}-${spans[0]!.spanId}-01`);
  });

  it('injects flags 00 where the tap samples its span out: a sampled-out caller, and a root the ratio refuses', () => {
    expect(unsampledCaller?.traceparent).toMatch(new RegExp(`^00-${CALLER_TRACE}-[0-9a-f]{16}-00$`));
    expect(noCaller?.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
    expect(noCaller?.traceparent?.slice(3, 35)).not.toBe(CALLER_TRACE);
  });
});
