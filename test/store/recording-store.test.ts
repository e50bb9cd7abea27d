import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TapEvent } from '../../src/model/events.js';
import { RecordingStore } from '../../src/store/recording-store.js';
import { SqliteRecorder } from '../../src/sinks/sqlite-recorder.js';
import { silentLogger } from '../../src/util/logger.js';
import { EventScript, sampleEvents, T0 } from '../sinks/sample-events.js';

const recording = { transport: 'stdio' as const, target: 'node server.mjs', startedUs: T0, mcptapVersion: '0.1.0-test', meta: { argv: ['a'] } };
const clock = { nowUs: () => T0 + 200_000 };

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mcptap-store-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function record(events: TapEvent[], path = join(dir, 'rec.db')): Promise<string> {
  const rec = new SqliteRecorder({ path, recording, logger: silentLogger, clock });
  for (const e of events) rec.onEvent(e);
  await rec.close();
  expect(rec.stats().dropped).toBe(0);
  return path;
}

describe('RecordingStore round trip', () => {
  it('turns a recording back into the same TapEvent stream, every kind, original times', async () => {
    const events = sampleEvents();
    const kinds = new Set(events.map((e) => e.type));
    expect(kinds.size).toBe(8); // the sample covers the whole union
    const store = RecordingStore.open(await record(events));
    const back = [...store.events(1)];
    expect(back).toEqual(events);
    store.close();
  });

  it('round-trips the same when every event is written in its own transaction', async () => {
    const events = sampleEvents();
    const path = join(dir, 'one-by-one.db');
    const rec = new SqliteRecorder({ path, recording, logger: silentLogger, clock });
    for (const e of events) {
      rec.onEvent(e);
      await rec.flush();
    }
    await rec.close();
    expect(rec.stats().transactions).toBe(events.length);
    const store = RecordingStore.open(path);
    expect([...store.events(1)]).toEqual(events);
    store.close();
  });

  it('round-trips exchanges in flight together, completing in any order, and one left pending', async () => {
    // events() reads each exchange row once and holds it until its completion: out-of-order ends test that hold.
    const s = new EventScript();
    const call = (id: number, at: number) =>
      s.request(`{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"t${id}"}}`, at, { target: `t${id}` });
    const answer = (ex: ReturnType<typeof call>, id: number, at: number) =>
      s.respond(ex, `{"jsonrpc":"2.0","id":${id},"result":{"content":[]}}`, at, { outcome: 'ok' });
    const [a, b, c, d] = [call(1, 1), call(2, 2), call(3, 3), call(4, 4)];
    answer(c, 3, 5);
    const e = call(5, 6);
    answer(a, 1, 7);
    answer(e, 5, 8);
    call(6, 9); // never answered: pending at the end
    answer(d, 4, 10);
    answer(b, 2, 11);
    const store = RecordingStore.open(await record(s.events));
    expect([...store.events(1)]).toEqual(s.events);
    expect([...store.events(1, { types: new Set(['exchange-completed']) })]).toEqual(s.events.filter((x) => x.type === 'exchange-completed'));
    store.close();
  });

  it('an abandoned events() iteration leaves the store usable for writes', async () => {
    const store = RecordingStore.open(await record(sampleEvents()), { create: true });
    for (const e of store.events(1)) if (e.type === 'exchange-started') break;
    expect(() => store.beginRecording(recording)).not.toThrow();
    store.close();
  });

  it('keeps ids 1 and "1" apart, in rows and in lookups', async () => {
    const store = RecordingStore.open(await record(sampleEvents()));
    const rows = store.db.prepare("SELECT id_text, id_type, method FROM exchanges WHERE id_text = '1' ORDER BY id_type").all();
    expect(rows).toEqual([
      { id_text: '1', id_type: 'number', method: 'initialize' },
      { id_text: '1', id_type: 'string', method: 'tools/call' },
    ]);
    expect(store.exchange(1, '1')).toMatchObject({ id: 1, idType: 'number', method: 'initialize' });
    expect(store.exchange(1, '"1"')).toMatchObject({ id: '1', idType: 'string', method: 'tools/call' });
    expect(store.exchange(1, { id: '1' })?.method).toBe('tools/call');
    expect(store.exchange(1, { id: 1 })?.method).toBe('initialize');
    // A bare number with no number id falls back to the string id of that text; the quoted form never falls back.
    expect(store.exchange(1, '"2"')).toBeUndefined();
    expect(store.exchange(1, 'abc')?.method).toBe('resources/read');
    const byKey = store.exchange(1, 'conn-1/c2s/2');
    expect(byKey?.id).toBe('1');
    expect(store.exchange(1, `#${byKey!.rowid}`)?.key).toBe('conn-1/c2s/2');
    store.close();
  });

  it('filters exchanges and finds the frames and anomalies of one', async () => {
    const store = RecordingStore.open(await record(sampleEvents()));
    expect(store.exchanges({ recordingId: 1 }).map((e) => e.method)).toEqual([
      'initialize',
      'tools/call',
      'tools/call',
      'sampling/createMessage',
      'resources/read',
      '',
      'tools/call',
    ]);
    expect(store.exchanges({ recordingId: 1, method: 'tools/call', outcome: 'cancelled' }).map((e) => e.id)).toEqual([2]);
    expect(store.exchanges({ recordingId: 1, outcome: 'pending' }).map((e) => e.id)).toEqual([3]);
    expect(store.exchanges({ target: 'delay', limit: 1 })).toHaveLength(1);
    const slow = store.exchange(1, '2')!;
    expect(slow.cancel).toEqual({ timeUs: T0 + 45_000, by: 'c2s', reason: 'user' });
    expect(slow.responseAfterCancel).toBe(true);
    const frames = store.framesOfExchange(1, slow.key);
    expect(frames.map((f) => (f.kind === 'message' ? f.messageKind : f.kind))).toEqual(['request', 'notification', 'response']);
    expect(store.anomalies(1, { exchangeKey: slow.key }).map((a) => a.kind)).toEqual(['response_after_cancel']);
    expect(store.anomalies(1).map((a) => a.kind)).toEqual(['response_after_cancel', 'orphan_response', 'stdout_pollution']);
    const http = store.exchange(1, 'abc')!;
    expect(http.transport).toMatchObject({ httpStatus: 502, errorClass: 'upstream_reset' });
    const row = store.db.prepare('SELECT http_status, transport_error_class, sse_event_count, first_event_us FROM exchanges WHERE id = ?').get(http.rowid);
    expect(row).toEqual({ http_status: 502, transport_error_class: 'upstream_reset', sse_event_count: 1, first_event_us: T0 + 62_000 });
    const sse = store.db.prepare("SELECT http_status, sse_event_id, stream_id FROM frames WHERE channel = 'sse'").get();
    expect(sse).toEqual({ http_status: 200, sse_event_id: 'ev-7', stream_id: 'st-1' });
    store.close();
  });

  it('gives each tool of tools/call its own row: a 1 ms tool and a 3 s tool are not mixed', async () => {
    const s = new EventScript();
    for (let i = 1; i <= 10; i++) {
      const fast = s.request(`{"jsonrpc":"2.0","id":"f${i}","method":"tools/call","params":{"name":"echo"}}`, i * 5000, { target: 'echo' });
      s.respond(fast, `{"jsonrpc":"2.0","id":"f${i}","result":{}}`, i * 5000 + 1, { outcome: 'ok' });
      const slow = s.request(`{"jsonrpc":"2.0","id":"s${i}","method":"tools/call","params":{"name":"summarize"}}`, i * 5000 + 2, { target: 'summarize' });
      s.respond(slow, `{"jsonrpc":"2.0","id":"s${i}","result":{}}`, i * 5000 + 3002, { outcome: 'ok' });
    }
    const ping = s.request('{"jsonrpc":"2.0","id":"p","method":"ping"}', 60_000);
    s.respond(ping, '{"jsonrpc":"2.0","id":"p","result":{}}', 60_002, { outcome: 'ok' });
    const store = RecordingStore.open(await record(s.events));
    const rows = store.summary(1).methods.map((m) => [m.method, m.tool, m.count, m.p50Us, m.maxUs]);
    expect(rows).toEqual([
      ['ping', undefined, 1, 2000, 2000],
      ['tools/call', 'echo', 10, 1000, 1000],
      ['tools/call', 'summarize', 10, 3_000_000, 3_000_000],
    ]);
    store.close();
  });

  it('summarises per method with outcome counts and latency percentiles', async () => {
    const s = new EventScript();
    for (let i = 1; i <= 100; i++) {
      const ex = s.request(`{"jsonrpc":"2.0","id":${i},"method":"tools/call","params":{"name":"echo"}}`, i * 10, { target: 'echo' });
      s.respond(ex, `{"jsonrpc":"2.0","id":${i},"result":{}}`, i * 10 + i / 10, { outcome: i % 10 === 0 ? 'tool_error' : 'ok' });
    }
    const store = RecordingStore.open(await record(s.events));
    const sum = store.summary(1);
    expect(sum.exchanges).toBe(100);
    expect(sum.frames).toBe(200);
    expect(sum.outcomes).toEqual({ ok: 90, tool_error: 10 });
    expect(sum.methods).toEqual([
      { method: 'tools/call', tool: 'echo', count: 100, outcomes: { ok: 90, tool_error: 10 }, p50Us: 5000, p95Us: 9500, p99Us: 9900, maxUs: 10_000 },
    ]);
    const [listing] = store.listRecordings();
    expect(listing).toMatchObject({
      id: 1,
      transport: 'stdio',
      target: 'node server.mjs',
      startedUs: T0,
      endedUs: T0 + 200_000,
      exchanges: 100,
      anomalies: 0,
      droppedQueue: 0,
      droppedWrite: 0,
      meta: { argv: ['a'] },
    });
    store.close();
  });

  it('holds several recordings in one file, apart', async () => {
    const path = await record(sampleEvents());
    await record(sampleEvents().slice(0, 5), path);
    const store = RecordingStore.open(path);
    expect(store.listRecordings().map((r) => [r.id, r.exchanges])).toEqual([
      [1, 7],
      [2, 1],
    ]);
    expect(store.latestRecordingId()).toBe(2);
    expect([...store.events(2)]).toEqual(sampleEvents().slice(0, 5));
    store.close();
  });

  it('rejects a bad row alone and keeps the rest of the batch', () => {
    const store = RecordingStore.open(join(dir, 'bad.db'), { create: true });
    const id = store.beginRecording(recording);
    const good = sampleEvents().slice(0, 3);
    const bad = { type: 'frame', frame: { ...(good[2] as { frame: object }).frame, timeUs: null } } as unknown as TapEvent;
    const r = store.writeEvents(
      id,
      [good[0]!, bad, good[1]!, good[2]!].map((event, i) => ({ ord: i + 1, event })),
    );
    expect(r.written).toBe(3);
    expect(r.rejected).toBe(1);
    expect(r.firstError?.message).toMatch(/NOT NULL/);
    expect(store.db.prepare('SELECT count(*) n FROM frames').get()).toEqual({ n: 1 });
    store.close();
  });
});

describe('RecordingStore write rules', () => {
  it("keeps the schema's CHECK rules: the write path refuses what SQLite would, other connections are checked by SQLite", () => {
    const path = join(dir, 'checks.db');
    const store = RecordingStore.open(path, { create: true });
    const id = store.beginRecording(recording);
    const s = new EventScript();
    const ex = s.request('{"jsonrpc":"2.0","id":1,"method":"ping"}', 1);
    s.respond(ex, '{"jsonrpc":"2.0","id":1,"result":{}}', 2, { outcome: 'ok' });
    const bad = s.events.map((e) => {
      if (e.type === 'frame' && e.frame.seq === ex.requestSeq) return { ...e, frame: { ...e.frame, kind: 'bogus' } } as unknown as TapEvent;
      if (e.type === 'exchange-completed') return { ...e, exchange: { ...e.exchange, idType: 'bogus' } } as unknown as TapEvent;
      return e;
    });
    const r = store.writeEvents(
      id,
      bad.map((event, i) => ({ ord: i + 1, event })),
    );
    // The frame alone, and the exchange row that holds both its start and completion (two events).
    expect(r).toMatchObject({ written: 1, rejected: 3 });
    expect(r.firstError).toMatchObject({ code: 'SQLITE_CONSTRAINT_CHECK', message: "CHECK constraint failed: kind IN ('message', 'invalid', 'log')" });
    expect(store.db.prepare('SELECT count(*) n FROM exchanges').get()).toEqual({ n: 0 });
    store.close();
    const other = new BetterSqlite3(path);
    expect(() => other.prepare("UPDATE frames SET kind = 'bogus'").run()).toThrow(/CHECK constraint failed: kind IN/);
    other.close();
  });

  it('refuses a row holding a value SQLite cannot bind (an array is not taken apart into parameters)', () => {
    const store = RecordingStore.open(join(dir, 'bind.db'), { create: true });
    const id = store.beginRecording(recording);
    const [opened, , frame] = sampleEvents() as [TapEvent, TapEvent, TapEvent & { type: 'frame' }];
    const bad = { ...frame, frame: { ...frame.frame, seq: [5] } } as unknown as TapEvent;
    const r = store.writeEvents(
      id,
      [opened, bad].map((event, i) => ({ ord: i + 1, event })),
    );
    expect(r).toMatchObject({ written: 1, rejected: 1 });
    expect(r.firstError).toBeInstanceOf(TypeError);
    expect(store.db.prepare('SELECT count(*) n FROM frames').get()).toEqual({ n: 0 });
    store.close();
  });

  it('refuses rows of a recording that does not exist, as the foreign key did', () => {
    const store = RecordingStore.open(join(dir, 'fk.db'), { create: true });
    const r = store.writeEvents(
      42,
      sampleEvents().map((event, i) => ({ ord: i + 1, event })),
    );
    expect(r.written).toBe(0);
    expect(r.rejected).toBe(sampleEvents().length);
    expect(r.firstError).toMatchObject({ code: 'SQLITE_CONSTRAINT_FOREIGNKEY' });
    for (const t of ['frames', 'exchanges', 'progress', 'anomalies', 'connections'])
      expect(store.db.prepare(`SELECT count(*) n FROM ${t}`).get()).toEqual({ n: 0 });
    store.close();
  });

  it('answers one-exchange lookups from indexes, not by walking the recording', async () => {
    const store = RecordingStore.open(await record(sampleEvents()));
    const plan = (sql: string, ...args: unknown[]) =>
      (store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as { detail: string }[]).map((p) => p.detail).join('; ');
    const { SQL } = await import('../../src/store/statements.js');
    const frames = plan(SQL.framesOfExchange, { r: 1, k: 'k' });
    expect(frames).toMatch(/frames_exchange \(recording_id=\? AND exchange_key=\?\)/);
    expect(frames).toMatch(/frames_seq \(recording_id=\? AND seq=\?\)/);
    expect(plan(`${SQL.exchangeById} WHERE e.recording_id = 1 AND e.id_text = '1' AND e.id_type = 'number' ORDER BY e.start_us, e.id`)).toMatch(
      /exchanges_id \(recording_id=\? AND id_text=\? AND id_type=\?\)/,
    );
    store.close();
  });
});
