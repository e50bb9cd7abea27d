import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { TapEvent } from '../../src/model/events.js';
import { Redactor } from '../../src/redact/redactor.js';
import { SqliteRecorder, type SqliteRecorderOptions } from '../../src/sinks/sqlite-recorder.js';
import { RecordingStore } from '../../src/store/recording-store.js';
import { createLogger, silentLogger } from '../../src/util/logger.js';
import { EventScript, sampleEvents, T0 } from './sample-events.js';
import { sinkContract } from './sink-contract.js';

const recording = { transport: 'stdio' as const, target: 'node server.mjs', startedUs: T0, mcptapVersion: '0.1.0-test' };
const clock = { nowUs: () => T0 + 1_000_000 };

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mcptap-rec-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function capture(): { lines: string[]; logger: ReturnType<typeof createLogger> } {
  const lines: string[] = [];
  return { lines, logger: createLogger('debug', (l) => lines.push(l)) };
}

function recorder(extra: Partial<SqliteRecorderOptions> = {}): SqliteRecorder {
  return new SqliteRecorder({ path: join(dir, 'rec.db'), recording, logger: silentLogger, clock, ...extra });
}

function manyFrames(n: number): TapEvent[] {
  const s = new EventScript();
  for (let i = 0; i < n; i++) s.frame(`{"jsonrpc":"2.0","method":"notifications/message","params":{"i":${i}}}`, 's2c', i);
  return s.events;
}

sinkContract('SqliteRecorder', () => {
  const d = mkdtempSync(join(tmpdir(), 'mcptap-contract-'));
  return {
    sink: new SqliteRecorder({ path: join(d, 'c.db'), recording, logger: silentLogger, clock }),
    cleanup: () => rmSync(d, { recursive: true, force: true }),
  };
});

describe('SqliteRecorder batching', () => {
  it('writes many events in few transactions, off the onEvent call', async () => {
    const store = RecordingStore.open(join(dir, 'rec.db'), { create: true });
    const write = vi.spyOn(store, 'writeBatch');
    const rec = new SqliteRecorder({ store, recording, logger: silentLogger, clock, batchSize: 1000 });
    const events = manyFrames(2500);
    for (const e of events) rec.onEvent(e);
    expect(write).not.toHaveBeenCalled(); // onEvent only queues
    await rec.flush();
    expect(write.mock.calls.length).toBeLessThanOrEqual(3);
    expect(rec.stats()).toMatchObject({ events: 2500, written: 2500, dropped: 0 });
    expect(store.db.prepare('SELECT count(*) n, min(seq) lo, max(seq) hi FROM frames').get()).toEqual({ n: 2500, lo: 1, hi: 2500 });
    await rec.close();
    expect(store.isOpen).toBe(true); // a passed-in store belongs to the caller
    expect(store.getRecording(rec.recordingId)?.endedUs).toBe(T0 + 1_000_000);
    store.close();
  });

  it('writes on its own timer without flush()', async () => {
    const rec = recorder({ flushIntervalMs: 5 });
    for (const e of manyFrames(10)) rec.onEvent(e);
    await vi.waitFor(() => expect(rec.stats().written).toBe(10), { timeout: 5000, interval: 10 });
    expect(rec.stats().transactions).toBe(1);
    await rec.close();
  });

  it('writes when the queue reaches the batch size without waiting for the timer', async () => {
    const rec = recorder({ flushIntervalMs: 60_000, batchSize: 50 });
    for (const e of manyFrames(50)) rec.onEvent(e);
    await vi.waitFor(() => expect(rec.stats().written).toBe(50), { timeout: 5000, interval: 10 });
    await rec.close();
  });
});

describe('SqliteRecorder drops', () => {
  it('a full queue drops the newest events, counts them, says so once, and records the count', async () => {
    const { lines, logger } = capture();
    const rec = recorder({ logger, queueLimit: 10 });
    for (const e of manyFrames(25)) rec.onEvent(e);
    expect(rec.stats()).toMatchObject({ events: 25, dropped: 15, droppedQueue: 15 });
    expect(lines.filter((l) => /queue full/.test(l))).toHaveLength(1);
    await rec.close();
    const store = RecordingStore.open(join(dir, 'rec.db'));
    expect(store.getRecording(1)).toMatchObject({ droppedQueue: 15, droppedWrite: 0 });
    expect(store.summary(1).frames).toBe(10);
    store.close();
  });

  it('a byte budget bounds the queue too (frames can be megabytes)', async () => {
    const rec = recorder({ queueByteLimit: 3 * 2 ** 20 });
    const big = manyFrames(1)[0] as Extract<TapEvent, { type: 'frame' }>;
    for (let i = 0; i < 5; i++) rec.onEvent({ ...big, frame: { ...big.frame, seq: i, raw: Buffer.alloc(2 ** 20, 0x20) } });
    expect(rec.stats().droppedQueue).toBe(3);
    await rec.close();
  });

  it('a database closed underneath: no throw, the batch is counted as dropped, said once', async () => {
    const { lines, logger } = capture();
    const store = RecordingStore.open(join(dir, 'rec.db'), { create: true });
    const rec = new SqliteRecorder({ store, recording, logger, clock });
    store.close();
    for (const e of sampleEvents()) expect(() => rec.onEvent(e)).not.toThrow();
    await rec.flush();
    for (const e of sampleEvents()) rec.onEvent(e);
    await expect(rec.close()).resolves.toBeUndefined();
    const n = sampleEvents().length;
    expect(rec.stats()).toMatchObject({ events: 2 * n, dropped: 2 * n, droppedWrite: 2 * n, written: 0 });
    expect(lines.filter((l) => /write of .* failed/.test(l))).toHaveLength(1);
  });

  it('a read-only database (query_only): drops counted; --require-recording calls onFatal once', async () => {
    const store = RecordingStore.open(join(dir, 'rec.db'), { create: true });
    const onFatal = vi.fn();
    const rec = new SqliteRecorder({ store, recording, logger: silentLogger, clock, requireRecording: true, onFatal });
    store.db.pragma('query_only = ON');
    for (const e of manyFrames(20)) rec.onEvent(e);
    await rec.flush();
    for (const e of manyFrames(5)) rec.onEvent(e);
    await rec.flush();
    expect(rec.stats().droppedWrite).toBe(25);
    expect(onFatal).toHaveBeenCalledTimes(1);
    expect(String(onFatal.mock.calls[0]![0])).toMatch(/readonly/i);
    store.db.pragma('query_only = OFF');
    await rec.close();
    expect(store.db.prepare('SELECT count(*) n FROM frames').get()).toEqual({ n: 0 });
    expect(store.getRecording(rec.recordingId)).toMatchObject({ droppedWrite: 25 });
    store.close();
  });

  it('a database locked by another process: the batch is dropped, later batches get through', async () => {
    const path = join(dir, 'rec.db');
    const rec = recorder({ path });
    const other = new BetterSqlite3(path); // stands in for another process holding the write lock
    other.prepare('BEGIN EXCLUSIVE').run();
    for (const e of manyFrames(3)) rec.onEvent(e);
    await rec.flush();
    expect(rec.stats().droppedWrite).toBe(3);
    other.prepare('COMMIT').run();
    other.close();
    for (const e of manyFrames(4)) rec.onEvent(e);
    await rec.flush();
    expect(rec.stats()).toMatchObject({ written: 4, droppedWrite: 3 });
    await rec.close();
  });

  it('without --require-recording a failed write never calls onFatal', async () => {
    const store = RecordingStore.open(join(dir, 'rec.db'), { create: true });
    const onFatal = vi.fn();
    const rec = new SqliteRecorder({ store, recording, logger: silentLogger, clock, onFatal, queueLimit: 1 });
    store.close();
    for (const e of manyFrames(3)) rec.onEvent(e);
    await rec.close();
    expect(rec.stats().dropped).toBe(3);
    expect(onFatal).not.toHaveBeenCalled();
  });
});

describe('SqliteRecorder redaction', () => {
  it('keeps secrets out of the file: raw frames, request JSON, headers, log lines, details', async () => {
    const s = new EventScript();
    const ex = s.request(
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"login","arguments":{"password":"hunter2-SECRET","progressToken":"keep-me"}}}',
      1,
    );
    s.respond(ex, '{"jsonrpc":"2.0","id":1,"result":{"access_token":"tok-SECRET"}}', 2, { outcome: 'ok' });
    s.frame('{"jsonrpc":"2.0","method":"notifications/x"}', 'c2s', 3, undefined, { headers: { authorization: 'Bearer bearer-SECRET', 'mcp-method': 'x' } });
    s.events.push({ type: 'anomaly', kind: 'invalid_message', connectionId: 'conn-1', timeUs: T0, detail: 'not JSON: {"api_key": "key-SECRET"' });
    s.events.push({
      type: 'frame',
      frame: {
        seq: 99,
        connectionId: 'conn-1',
        direction: 's2c',
        channel: 'stderr',
        timeUs: T0,
        raw: Buffer.from('using token=log-SECRET'),
        kind: 'log',
        text: 'using token=log-SECRET',
      },
    });
    const path = join(dir, 'rec.db');
    s.events.push({
      type: 'connection-opened',
      timeUs: T0,
      connection: { connectionId: 'c2', transport: 'http', target: 'http://127.0.0.1:1/mcp?api_key=url-SECRET' },
    });
    const rec = recorder({ path, redactor: new Redactor({ key: 'k' }), recording: { ...recording, target: 'node server.mjs --token=argv-SECRET' } });
    for (const e of s.events) rec.onEvent(e);
    await rec.close();
    const bytes = Buffer.concat([readFileSync(path), readFileSync(`${path}-wal`, { flag: 'a+' })]).toString('latin1');
    expect(bytes).not.toMatch(/SECRET/);
    expect(bytes).toContain('keep-me');
    const store = RecordingStore.open(path);
    const back = store.exchange(1, '1')!;
    expect((back.request as unknown as { params: { arguments: { password: string } } }).params.arguments.password).toBe(
      new Redactor({ key: 'k' }).token('hunter2-SECRET'),
    );
    store.close();
  });
});

describe('SqliteRecorder start', () => {
  it('refuses to start (a clear error, before any traffic) where it cannot record', () => {
    expect(() => new SqliteRecorder({ path: join(dir, 'no', 'such', 'dir', 'rec.db'), recording, logger: silentLogger, clock })).toThrow(
      /cannot open recording/,
    );
    const store = RecordingStore.open(join(dir, 'ro.db'), { create: true });
    store.db.pragma('query_only = ON');
    expect(() => new SqliteRecorder({ store, recording, logger: silentLogger, clock })).toThrow(
      expect.objectContaining({ code: 'MCPTAP_RECORDING_UNWRITABLE', kind: 'invalid_input' }),
    );
    expect(store.isOpen).toBe(true);
    store.close();
  });
});
