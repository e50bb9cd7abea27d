/**
 * EventBatchEncoder + RecordingStore.writeBatch: an exchange's request and response are stored once
 * (as references to their frames) when they are those frames' messages; everything else keeps its
 * own copy; and whatever the batching, the recording reads back as the events that went in.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TapEvent } from '../../src/model/events.js';
import type { MessageFrame } from '../../src/model/frame.js';
import { Pipeline } from '../../src/pipeline/pipeline.js';
import { EventBatchEncoder } from '../../src/store/event-batch.js';
import { RecordingStore } from '../../src/store/recording-store.js';
import { silentLogger } from '../../src/util/logger.js';
import { EventScript, sampleEvents, T0 } from '../sinks/sample-events.js';

const recording = { transport: 'stdio' as const, target: 'node server.mjs', startedUs: T0, mcptapVersion: 't' };

let dir: string;
let store: RecordingStore;
let id: number;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mcptap-batch-'));
  store = RecordingStore.open(join(dir, 'rec.db'), { create: true });
  id = store.beginRecording(recording);
});
afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Encodes `events` in batches that close after the given event indexes, and writes them. */
function write(events: TapEvent[], opts: { closeAfter?: number[] } = {}): void {
  const enc = new EventBatchEncoder({ recordingId: id });
  events.forEach((e, i) => {
    enc.add(i + 1, e);
    if (opts.closeAfter?.includes(i)) {
      const sealed = enc.seal();
      if (sealed) store.writeBatch(sealed.batch);
    }
  });
  const sealed = enc.seal();
  if (sealed) store.writeBatch(sealed.batch);
}

type Copies = { request_json: string; request_frame_id: number | null; response_json: string | null; response_frame_id: number | null };
const copies = (key: string) =>
  store.db.prepare('SELECT request_json, request_frame_id, response_json, response_frame_id FROM exchanges WHERE key = ?').get(key) as Copies;
const frameId = (seq: number) => (store.db.prepare('SELECT id FROM frames WHERE seq = ?').get(seq) as { id: number }).id;

describe('exchanges store their request and response once', () => {
  it('references the frames the pipeline took them from (real decoder and correlator)', () => {
    const pipeline = new Pipeline({ logger: silentLogger, tickMs: 0 });
    const seen: TapEvent[] = [];
    pipeline.subscribe((e) => seen.push(e));
    const push = (direction: 'c2s' | 's2c', line: string) =>
      pipeline.pushChunk({ connectionId: 'c', direction, channel: 'stdio', bytes: Buffer.from(`${line}\n`), timeUs: T0 });
    push('c2s', `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"t":"${'y'.repeat(5000)}"}}}`);
    push('s2c', `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"${'x'.repeat(5000)}"}]}}`);
    push('s2c', '{"jsonrpc":"2.0","id":99,"result":{}}'); // an orphan: its request is made up
    write(seen);
    const [ex, orphan] = store.exchanges({ recordingId: id });
    const frames = store.framesOfExchange(id, ex!.key);
    expect(copies(ex!.key)).toEqual({
      request_json: '',
      request_frame_id: frameId(frames[0]!.seq),
      response_json: null,
      response_frame_id: frameId(frames[1]!.seq),
    });
    expect(ex!.request).toEqual((frames[0] as MessageFrame).message);
    expect(ex!.response).toEqual((frames[1] as MessageFrame).message);
    expect(copies(orphan!.key).request_json).toBe('{"jsonrpc":"2.0","id":99,"method":""}');
    expect(orphan!.response).toEqual({ jsonrpc: '2.0', id: 99, result: {} });
    // The 10 KB of payload is stored once: in the frames.
    const bytes = store.db
      .prepare('SELECT (SELECT sum(length(raw)) FROM frames) f, (SELECT sum(length(request_json) + coalesce(length(response_json), 0)) FROM exchanges) e')
      .get() as { f: number; e: number };
    expect(bytes.f).toBeGreaterThan(10_000);
    expect(bytes.e).toBeLessThan(100);
  });

  it('reads back the same events for any batching', () => {
    const events = sampleEvents();
    for (const closeAfter of [[], events.map((_, i) => i), [2, 5, 11, 17]]) {
      const other = RecordingStore.open(join(dir, `b-${closeAfter.length}.db`), { create: true });
      const enc = new EventBatchEncoder({ recordingId: other.beginRecording(recording) });
      events.forEach((e, i) => {
        enc.add(i + 1, e);
        if (closeAfter.includes(i)) other.writeBatch(enc.seal()!.batch);
      });
      const last = enc.seal();
      if (last) other.writeBatch(last.batch);
      expect([...other.events(1)]).toEqual(events);
      other.close();
    }
  });

  it('a completion in a later batch leaves the request its start wrote', () => {
    const s = new EventScript();
    const ex = s.request('{"jsonrpc":"2.0","id":5,"method":"tools/list"}', 1);
    s.respond(ex, '{"jsonrpc":"2.0","id":5,"result":{"tools":[]}}', 2, { outcome: 'ok' });
    write(s.events, { closeAfter: [1] }); // started + request frame | response frame + completed
    expect(copies(ex.key)).toMatchObject({
      request_json: '',
      request_frame_id: expect.any(Number),
      response_json: null,
      response_frame_id: expect.any(Number),
    });
    expect(store.exchange(id, { key: ex.key })).toMatchObject({ state: 'completed', request: ex.request, response: { id: 5, result: { tools: [] } } });
  });

  it('keeps a copy when the request is not the frame message (hand-made) or its frame is in another batch', () => {
    const s = new EventScript();
    const ex = s.request('{"jsonrpc":"2.0","id":6,"method":"ping"}', 1);
    const handMade = s.events.map((e) =>
      e.type === 'exchange-started' ? { ...e, exchange: { ...e.exchange, request: { jsonrpc: '2.0', id: 6, method: 'ping' } as never } } : e,
    );
    write(handMade);
    expect(copies(ex.key).request_json).toBe('{"jsonrpc":"2.0","id":6,"method":"ping"}');
    const t = new EventScript({ seq: 100, exchange: 100 });
    const split = t.request('{"jsonrpc":"2.0","id":7,"method":"ping"}', 1);
    write(t.events, { closeAfter: [0] }); // the batch closes between the start and its request frame
    expect(copies(split.key).request_json).toBe('{"jsonrpc":"2.0","id":7,"method":"ping"}');
    expect(store.exchange(id, { key: split.key })?.request).toEqual({ jsonrpc: '2.0', id: 7, method: 'ping' });
  });

  it('an exchange whose request frame was lost reads back with what its row says of the request', () => {
    const s = new EventScript();
    const ex = s.request('{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x"}}', 1);
    // The frame row is refused (a NOT NULL column), the exchange row is not.
    const events = s.events.map((e) => (e.type === 'frame' ? { ...e, frame: { ...e.frame, timeUs: null as unknown as number } } : e));
    const enc = new EventBatchEncoder({ recordingId: id });
    events.forEach((e, i) => enc.add(i + 1, e));
    expect(store.writeBatch(enc.seal()!.batch)).toMatchObject({ written: 1, rejected: 1 });
    expect(store.exchange(id, { key: ex.key })?.request).toEqual({ jsonrpc: '2.0', id: 'a', method: 'tools/call' });
  });

  it('refuses a malformed event alone, adding nothing to the batch', () => {
    const enc = new EventBatchEncoder({ recordingId: id });
    expect(() => enc.add(1, { type: 'frame' } as TapEvent)).toThrow(TypeError);
    expect(() => enc.add(2, { type: 'nope' } as unknown as TapEvent)).toThrow(/unknown event type/);
    expect(enc.seal()).toBeUndefined();
  });
});
