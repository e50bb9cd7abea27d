/**
 * JSONL export -> import on the library, for what real peers do not produce on demand: traffic
 * built by the real frame parser and Correlator (TrafficScript), with a batch, stdout pollution, a
 * stderr line, an orphan, a client cancellation answered late, a request unanswered at close, and
 * HTTP streams that ended cancelled (client disconnect) and failed. Also the time and line codecs.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeLine, isoMicros, parseTimeUs } from '../../src/interchange/jsonl-format.js';
import { jsonlLines } from '../../src/interchange/jsonl-export.js';
import { importJsonl } from '../../src/interchange/jsonl-import.js';
import type { TapEvent } from '../../src/model/events.js';
import { Redactor } from '../../src/redact/redactor.js';
import { RecordingStore } from '../../src/store/recording-store.js';
import { TrafficScript, T0, us } from '../sinks/traffic-script.js';
import { exchangeFacts } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'mcptap-jsonl-'));

function stdioTraffic(): TapEvent[] {
  const s = new TrafficScript('stdio-1').open({ transport: 'stdio', target: 'node server.mjs', pid: 42 }, 0);
  s.handshake(1);
  s.send('c2s', '[{"jsonrpc":"2.0","id":10,"method":"tools/list"},{"jsonrpc":"2.0","id":11,"method":"ping"}]', 10);
  s.send('s2c', '[{"jsonrpc":"2.0","id":10,"result":{"tools":[]}},{"jsonrpc":"2.0","id":11,"result":{}}]', 12);
  s.send('s2c', 'starting up...', 13);
  s.send('s2c', { jsonrpc: '2.0', id: 99, result: {} }, 14); // an orphan
  s.request(5, 'tools/call', { name: 'slow', arguments: {} }, 20);
  s.send('c2s', { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 5, reason: 'user' } }, 30);
  s.tick(2100); // past the grace (1 s here, 2 s in the pipeline): cancelled
  s.result(5, { content: [] }, 2300); // answered after that: an orphan, response_after_cancel
  s.request(6, 'tools/call', { name: 'never', arguments: {} }, 2400);
  s.close(3500, 'exited with code 1', 1);
  return s.events;
}

/** Separate from the stdio traffic: each script numbers its frames from 1, and frames pair up by number within a recording. */
function httpTraffic(): TapEvent[] {
  const h = new TrafficScript('http-1').open({ transport: 'http', target: 'http://127.0.0.1:9/mcp' }, 0);
  const headers = { 'mcp-session-id': 'sess-1', authorization: 'Bearer abc' };
  h.request(1, 'tools/call', { name: 'op', arguments: {}, _meta: { progressToken: 't' } }, 0, { channel: 'http-body', context: { streamId: 'x', headers } });
  for (let i = 1; i <= 3; i++)
    h.send('s2c', { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 't', progress: i } }, 100 * i, {
      channel: 'sse',
      context: { streamId: 'x', sseEventId: `e${i}`, httpStatus: 200, responseHeadersUs: us(50) },
    });
  h.result(1, { content: [] }, 400, { channel: 'sse', context: { streamId: 'x', httpStatus: 200, sseEventId: 'e4' } });
  h.request(2, 'tools/call', { name: 'op', arguments: {} }, 500, { channel: 'http-body', context: { streamId: 'y' } });
  h.endStream('y', { outcome: 'cancelled' }, 700);
  h.request(3, 'tools/list', {}, 800, { channel: 'http-body', context: { streamId: 'z' } });
  h.endStream('z', { outcome: 'transport_error', errorClass: 'upstream_reset', httpStatus: 502 }, 900);
  h.close(1000, 'session ended');
  return h.events;
}

function storeWith(events: TapEvent[]): { store: RecordingStore; id: number } {
  const store = RecordingStore.open(join(dir, `src-${Math.random().toString(36).slice(2)}.db`), { create: true });
  const id = store.beginRecording({ transport: 'stdio', target: 'node server.mjs', startedUs: T0, mcptapVersion: 'test' });
  const r = store.writeEvents(
    id,
    events.map((event, i) => ({ ord: i + 1, event })),
  );
  expect(r.rejected).toBe(0);
  store.endRecording(id, { endedUs: us(3500), droppedQueue: 0, droppedWrite: 0 });
  return { store, id };
}

async function* linesOf(lines: Iterable<string>): AsyncGenerator<string> {
  yield* lines;
}

/** In a stable order that does not depend on frame sequence numbers (the script numbers each connection apart). */
const sorted = (store: RecordingStore, id: number) =>
  store
    .exchanges({ recordingId: id })
    .sort((a, b) => a.startUs - b.startUs || a.connectionId.localeCompare(b.connectionId) || String(a.id).localeCompare(String(b.id)));

describe('JSONL round trip (library)', () => {
  it.each([
    [
      'stdio',
      stdioTraffic,
      ['(orphan):orphan_response', '(orphan):orphan_response', 'initialize:ok', 'ping:ok', 'tools/call:cancelled', 'tools/call:unanswered', 'tools/list:ok'],
    ],
    ['http', httpTraffic, ['tools/call:cancelled', 'tools/call:ok', 'tools/list:transport_error']],
  ] as const)('%s: keeps every exchange (batches, orphans, late answers to cancels, closes, stream ends)', async (name, traffic, outcomes) => {
    const { store, id } = storeWith(traffic());
    const lines = [...jsonlLines(store, id)];
    expect(lines.filter((l) => l.includes('"event":"stream-end"'))).toHaveLength(name === 'http' ? 2 : 0);
    const outPath = join(dir, `${name}-back.db`);
    const result = await importJsonl({ lines: linesOf(lines), file: 'edge.jsonl', outPath, mcptapVersion: 'test' });
    expect(result).toMatchObject({ recordingId: 1, lines: lines.length, connections: 1 });
    const back = RecordingStore.open(outPath, { create: false });
    try {
      const original = sorted(store, id);
      // What the traffic holds, so the comparison below is not vacuous.
      expect(original.map((e) => `${e.method || '(orphan)'}:${e.outcome}`).sort()).toEqual(outcomes);
      expect(sorted(back, 1).map(exchangeFacts)).toEqual(original.map(exchangeFacts));
      const anomalies = (s: RecordingStore, r: number) => s.anomalies(r).map((a) => `${a.kind}@${a.timeUs - T0}`);
      expect(anomalies(back, 1)).toEqual(anomalies(store, id));
      expect(back.summary(1).frames).toBe(store.summary(id).frames);
      const info = back.getRecording(1)!;
      expect(info).toMatchObject({
        transport: 'stdio',
        target: 'node server.mjs',
        startedUs: T0,
        endedUs: us(3500),
        meta: { imported: { file: 'edge.jsonl', mcptapVersion: 'test' } },
      });
    } finally {
      back.close();
      store.close();
    }
  });

  it('an INCOMPLETE recording stays INCOMPLETE through export and import; a complete one stays complete', async () => {
    const killed = RecordingStore.open(join(dir, 'killed.db'), { create: true });
    const id = killed.beginRecording({ transport: 'stdio', target: 'node server.mjs', startedUs: T0, mcptapVersion: 'test' });
    killed.writeEvents(
      id,
      stdioTraffic().map((event, i) => ({ ord: i + 1, event })),
    );
    killed.endRecording(id, { endedUs: us(3500), droppedQueue: 0, droppedWrite: 0, incomplete: 'the tap was killed (SIGKILL)' });
    const notClosed = storeWith(httpTraffic());
    // Not closed at all: as a tap still running, or killed with its indexer, leaves it.
    const open = RecordingStore.open(join(dir, 'open.db'), { create: true });
    const openId = open.beginRecording({ transport: 'http', target: 'http://127.0.0.1:9/mcp', startedUs: T0, mcptapVersion: 'test' });
    const cases = [
      ['killed', killed, id, 'the tap was killed (SIGKILL)'],
      ['complete', notClosed.store, notClosed.id, undefined],
      ['open', open, openId, 'not closed when exported (its tap was still running, or it or its indexer was killed)'],
    ] as const;
    try {
      for (const [name, store, rid, why] of cases) {
        const lines = [...jsonlLines(store, rid)];
        const header = JSON.parse(lines[0]!) as { recording: { incomplete?: string } };
        expect(header.recording.incomplete, name).toBe(why);
        const outPath = join(dir, `${name}-incomplete-back.db`);
        await importJsonl({ lines: linesOf(lines), file: `${name}.jsonl`, outPath, mcptapVersion: 'test' });
        const back = RecordingStore.open(outPath, { create: false });
        try {
          expect(back.listRecordings()[0]!.meta?.incomplete, name).toBe(why);
        } finally {
          back.close();
        }
      }
    } finally {
      for (const [, store] of cases) store.close();
    }
  });

  it('redacts a capture as the recorder does at record time', async () => {
    const lines = [
      '{"mcptap":"jsonl","version":1,"recording":{"transport":"http","target":"http://u:hunter2@127.0.0.1:9/mcp"}}',
      '{"t":1,"dir":"c2s","http":{"stream":"1","headers":{"authorization":"Bearer sk-live"}},"message":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"login","arguments":{"apiKey":"sk-live"}}}}',
      '{"t":2,"dir":"s2c","channel":"stderr","stderr":"GITHUB_TOKEN=ghp_secret starting"}',
    ];
    const outPath = join(dir, 'redacted.db');
    await importJsonl({ lines: linesOf(lines), file: 'cap.jsonl', outPath, mcptapVersion: 'test', redactor: new Redactor({ key: 'k' }) });
    const store = RecordingStore.open(outPath, { create: false });
    try {
      const text = JSON.stringify([store.getRecording(1), store.exchanges({ recordingId: 1 }), [...store.frames(1)].map((f) => [f.raw.toString(), f.context])]);
      for (const secret of ['hunter2', 'sk-live', 'ghp_secret']) expect(text).not.toContain(secret);
      expect(text).toContain('redacted:hmac-sha256:');
    } finally {
      store.close();
    }
  });
});

describe('JSONL codecs', () => {
  it('times: ISO with µs both ways, µs numbers, offsets; junk refused', () => {
    const t = 1_767_225_600_123_456;
    expect(isoMicros(t)).toBe('2026-01-01T00:00:00.123456Z');
    expect(parseTimeUs(isoMicros(t))).toBe(t);
    expect(parseTimeUs(t)).toBe(t);
    expect(parseTimeUs('2026-01-01T01:00:00.5+01:00')).toBe(1_767_225_600_500_000);
    expect(parseTimeUs('2026-01-01T00:00:00Z')).toBe(1_767_225_600_000_000);
    for (const bad of ['2026-01-01', 'now', -1, 1.5, null]) expect(parseTimeUs(bad)).toBeUndefined();
  });

  it('lines: one body per message line; errors name file:line: field', () => {
    const at = { file: 'f.jsonl', line: 7 };
    expect(() => decodeLine('{"t":1,"dir":"c2s","message":{},"invalid":"x"}', at)).toThrow(
      'f.jsonl:7: invalid: a line carries one of "message", "invalid", "stderr", not message and invalid',
    );
    expect(() => decodeLine('{"t":1,"dir":"c2s","message":"x"}', at)).toThrow(
      'f.jsonl:7: message: expected a JSON-RPC message (an object) or a batch (an array)',
    );
    expect(() => decodeLine('{"t":1,"event":"stream-end","conn":"c"}', at)).toThrow('f.jsonl:7: stream: missing (expected a stream id (string))');
    expect(() => decodeLine('[1]', at)).toThrow('f.jsonl:7: (line): expected a JSON object');
    expect(decodeLine('{"t":1,"event":"close","conn":"c"}', at)).toEqual({ t: 1, event: 'close', conn: 'c' });
  });
});
