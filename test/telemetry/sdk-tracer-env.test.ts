/**
 * The OTEL_* variables the SDK's tracer provider reads from `process.env` (span limits) apply to
 * every span: the SDK's tracer makes them all. The sampler is resolved from the same environment
 * and given to the provider and the span sink (sampling.test.ts). Checked against the OTLP
 * receiver in this process.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createTelemetry } from '../../src/telemetry/telemetry.js';
import { resolveTelemetryConfig } from '../../src/telemetry/telemetry-config.js';
import { TrafficScript } from '../sinks/traffic-script.js';
import { startOtlpReceiver, type ReceivedSpan } from './otlp-receiver.js';

const SET: string[] = [];

function setEnv(name: string, value: string): void {
  SET.push(name);
  process.env[name] = value;
}

afterEach(() => {
  for (const name of SET.splice(0)) delete process.env[name];
});

async function exportCalls(n: number): Promise<ReceivedSpan[]> {
  const receiver = await startOtlpReceiver();
  try {
    // The config is resolved from the same environment the SDK reads (as the CLI resolves it from process.env).
    const set = Object.fromEntries(SET.map((name) => [name, process.env[name]]));
    const t = await createTelemetry(
      resolveTelemetryConfig({ otlp: receiver.url }, { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_METRICS_EXPORTER: 'none', ...set }),
    );
    const s = new TrafficScript('stdio-1').open({ transport: 'stdio', target: 'srv' }, 0);
    for (let i = 1; i <= n; i++) {
      s.request(i, 'tools/call', { name: 'echo', arguments: {} }, i * 10);
      s.result(i, { content: [] }, i * 10 + 5);
    }
    s.close(1000);
    for (const e of s.events) for (const sink of t.sinks) sink.onEvent(e);
    await t.shutdown();
    return receiver.spans;
  } finally {
    await receiver.close();
  }
}

describe('OTEL_* span variables read by the SDK', () => {
  it('without them, every exchange and the session are exported', async () => {
    expect(await exportCalls(3)).toHaveLength(4);
  });

  it('OTEL_TRACES_SAMPLER=always_off exports nothing', async () => {
    setEnv('OTEL_TRACES_SAMPLER', 'always_off');
    expect(await exportCalls(3)).toHaveLength(0);
  });

  it('OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT caps the attributes of every span', async () => {
    setEnv('OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT', '3');
    const spans = await exportCalls(2);
    expect(spans).toHaveLength(3);
    for (const s of spans) expect(Object.keys(s.attributes)).toHaveLength(3);
  });
});
