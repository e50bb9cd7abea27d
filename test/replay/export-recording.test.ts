/**
 * exportRecording as a library: recordings written through the real RecordingStore from event
 * streams made by the real parser and Correlator (TrafficScript), exported with the real SDK and
 * OTLP/HTTP json exporter to the in-test OTLP receiver. Pacing (more spans than the span queue
 * holds), recordings without a stored seed, and spans still open when the recording ends.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TapEvent } from '../../src/model/events.js';
import { exportRecording, type ExportProgress } from '../../src/replay/export-recording.js';
import { RecordingStore } from '../../src/store/recording-store.js';
import { recordingOtelMeta } from '../../src/telemetry/recording-otel-meta.js';
import { resolveTelemetryConfig } from '../../src/telemetry/telemetry-config.js';
import { TrafficScript, us } from '../sinks/traffic-script.js';
import { startOtlpReceiver, type OtlpReceiver } from '../telemetry/otlp-receiver.js';

const ENV = { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' };
let dir: string;
let receiver: OtlpReceiver;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mcptap-export-lib-'));
  receiver = await startOtlpReceiver();
});
afterEach(async () => {
  await receiver.close();
  rmSync(dir, { recursive: true, force: true });
});

function record(events: TapEvent[], meta?: Record<string, unknown>): { store: RecordingStore; id: number } {
  const store = RecordingStore.open(join(dir, 'r.db'), { create: true });
  const id = store.beginRecording({ transport: 'stdio', target: 'node server.mjs', startedUs: us(0), mcptapVersion: 'test', ...(meta ? { meta } : {}) });
  store.writeEvents(
    id,
    events.map((event, i) => ({ ord: i + 1, event })),
  );
  return { store, id };
}

function calls(n: number): TrafficScript {
  const s = new TrafficScript('stdio').open({ transport: 'stdio', target: 'node server.mjs' }, 0);
  for (let i = 1; i <= n; i++) {
    s.request(i, 'tools/call', { name: 'echo', arguments: { i } }, i);
    s.result(i, { content: [] }, i + 0.5);
  }
  return s;
}

const config = (url: string) => resolveTelemetryConfig({ otlp: url }, ENV);

describe('exportRecording', () => {
  it('applies OTEL_TRACES_SAMPLER as live: always_off exports nothing, a ratio the same spans as the live run would', async () => {
    const { store, id } = record(calls(200).close(300).events, recordingOtelMeta({ spanIdSeed: 'fixed-seed', traceContextInjected: false }));
    try {
      const off = await exportRecording({
        store,
        recordingId: id,
        config: resolveTelemetryConfig({ otlp: receiver.url }, { ...ENV, OTEL_TRACES_SAMPLER: 'always_off' }),
      });
      expect(off).toMatchObject({ exchangeSpans: 200, failed: false });
      expect(off.counts.exported).toBe(0);
      const ratio = { ...ENV, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.5' };
      const first = await exportRecording({ store, recordingId: id, config: resolveTelemetryConfig({ otlp: receiver.url }, ratio) });
      const firstIds = receiver.spans.map((x) => x.spanId).sort();
      const second = await exportRecording({ store, recordingId: id, config: resolveTelemetryConfig({ otlp: receiver.url }, ratio) });
      // The seed fixes the trace ids, so the ratio keeps the same spans every time: some, not all.
      expect(first.counts.exported).toBe(second.counts.exported);
      expect(first.counts.exported).toBeGreaterThan(0);
      expect(first.counts.exported).toBeLessThan(201);
      expect(receiver.spans.map((x) => x.spanId).sort()).toEqual([...firstIds, ...firstIds].sort());
    } finally {
      store.close();
    }
  });

  it('exports more spans than the span queue holds without dropping any, reporting progress', async () => {
    const { store, id } = record(calls(3000).close(4000).events);
    const progress: ExportProgress[] = [];
    try {
      const r = await exportRecording({ store, recordingId: id, config: config(receiver.url), onProgress: (p) => progress.push(p) });
      expect(r).toMatchObject({ exchangeSpans: 3000, sessionSpans: 1, failed: false, aborted: false, liveSpanIds: false });
      expect(r.counts).toEqual({ exported: 3001, droppedQueueFull: 0, droppedExportFailed: 0, queued: 0, sending: 0, rejectedByCollector: 0 });
    } finally {
      store.close();
    }
    expect(receiver.spans).toHaveLength(3001);
    expect(progress.at(-1)).toEqual({ exchanges: 3000, totalExchanges: 3000 });
    const first = receiver.spans.find((s) => s.attributes['jsonrpc.request.id'] === '1')!;
    expect(first.startTimeUnixNano).toBe(BigInt(us(1)) * 1000n);
    expect(first.endTimeUnixNano).toBe(BigInt(us(1.5)) * 1000n);
  });

  it('derives stable ids for a recording without a stored seed, and uses the stored seed when there is one', async () => {
    const events = calls(3).close(10).events;
    const ids = async (meta?: Record<string, unknown>) => {
      receiver.spans.length = 0;
      const { store, id } = record(events, meta);
      try {
        await exportRecording({ store, recordingId: id, config: config(receiver.url) });
      } finally {
        store.close();
        rmSync(join(dir, 'r.db'));
      }
      return receiver.spans.map((s) => `${s.name} ${s.attributes['jsonrpc.request.id']} ${s.traceId} ${s.spanId}`).sort();
    };
    const derived = await ids();
    expect(await ids()).toEqual(derived);
    const seeded = await ids(recordingOtelMeta({ spanIdSeed: 'a'.repeat(32), traceContextInjected: false }));
    expect(seeded).toHaveLength(4);
    expect(seeded.filter((line) => derived.includes(line))).toEqual([]);
    expect(await ids(recordingOtelMeta({ spanIdSeed: 'a'.repeat(32), traceContextInjected: false }))).toEqual(seeded);
  });

  it("ends spans still open at the end of a cut-off recording at the recording's last time, not now", async () => {
    const s = new TrafficScript('stdio').open({ transport: 'stdio', target: 'srv' }, 0);
    s.request(1, 'tools/call', { name: 'slow', arguments: {} }, 10);
    s.send('s2c', { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x' } }, 250);
    const { store, id } = record(s.events);
    try {
      const r = await exportRecording({ store, recordingId: id, config: config(receiver.url) });
      expect(r).toMatchObject({ exchangeSpans: 1, sessionSpans: 1, failed: false });
    } finally {
      store.close();
    }
    const slow = receiver.spans.find((x) => x.name === 'tools/call slow')!;
    expect(slow.attributes['mcptap.unfinished']).toBe(true);
    expect(slow.endTimeUnixNano).toBe(BigInt(us(250)) * 1000n);
    expect(receiver.spans.find((x) => x.name === 'mcp.session')!.endTimeUnixNano).toBe(BigInt(us(250)) * 1000n);
  });
});
