/**
 * The recorder's writer thread (the default for a recording file): SQL runs off the calling
 * thread, `flush()` means committed, batches in flight are bounded, and a writer that cannot
 * write or does not finish costs counted drops, never a throw or a hang.
 * The lock held by a second connection stands in for another process holding the file.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { TapEvent } from '../../src/model/events.js';
import { SqliteRecorder, type SqliteRecorderOptions } from '../../src/sinks/sqlite-recorder.js';
import { writerThreadEntry } from '../../src/sinks/worker-batch-writer.js';
import { RecordingStore } from '../../src/store/recording-store.js';
import { createLogger, silentLogger } from '../../src/util/logger.js';
import { EventScript, T0 } from './sample-events.js';
import { sinkContract } from './sink-contract.js';

const recording = { transport: 'stdio' as const, target: 'node server.mjs', startedUs: T0, mcptapVersion: '0.1.0-test' };
const clock = { nowUs: () => T0 + 1_000_000 };

let dir: string;
let path: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mcptap-thread-'));
  path = join(dir, 'rec.db');
});
afterEach(() => {
  vi.restoreAllMocks();
  rmSync(dir, { recursive: true, force: true });
});

function recorder(extra: Partial<SqliteRecorderOptions> = {}): SqliteRecorder {
  return new SqliteRecorder({ path, recording, logger: silentLogger, clock, ...extra });
}

function exchanges(n: number, size = 100): TapEvent[] {
  const s = new EventScript();
  for (let i = 1; i <= n; i++) {
    const ex = s.request(`{"jsonrpc":"2.0","id":${i},"method":"tools/call","params":{"name":"echo","arguments":{"t":"${'y'.repeat(size)}"}}}`, i);
    s.respond(ex, `{"jsonrpc":"2.0","id":${i},"result":{"content":[]}}`, i + 0.5, { outcome: 'ok' });
  }
  return s.events;
}

function count(table: string): number {
  const db = new BetterSqlite3(path, { readonly: true });
  try {
    return (db.prepare(`SELECT count(*) n FROM ${table}`).get() as { n: number }).n;
  } finally {
    db.close();
  }
}

sinkContract('SqliteRecorder (inline writer)', () => {
  const d = mkdtempSync(join(tmpdir(), 'mcptap-contract-'));
  return { sink: new SqliteRecorder({ path: join(d, 'c.db'), writer: 'inline', recording, logger: silentLogger, clock }), cleanup: () => rmSync(d, { recursive: true, force: true }) };
});

describe('SqliteRecorder writer thread', () => {
  it('has an entry to start from, compiled or from the sources', () => {
    expect(existsSync(new URL(writerThreadEntry()))).toBe(true);
  });

  it('runs no SQL on the calling thread, and flush() resolves once the rows are committed', async () => {
    const write = vi.spyOn(RecordingStore.prototype, 'writeBatch');
    const rec = recorder();
    const events = exchanges(300, 5000);
    for (const e of events) rec.onEvent(e);
    await rec.flush();
    expect(count('frames')).toBe(600); // read through another connection: committed
    expect(count('exchanges')).toBe(300);
    expect(write).not.toHaveBeenCalled();
    expect(rec.stats()).toMatchObject({ events: events.length, written: events.length, dropped: 0 });
    await rec.close();
    const store = RecordingStore.open(path);
    expect(store.getRecording(rec.recordingId)?.endedUs).toBe(T0 + 1_000_000);
    expect(store.exchange(rec.recordingId, '300')?.request).toMatchObject({ params: { arguments: { t: 'y'.repeat(5000) } } });
    store.close();
  });

  it("writer: 'inline' writes on the calling thread", async () => {
    const write = vi.spyOn(RecordingStore.prototype, 'writeBatch');
    const rec = recorder({ writer: 'inline' });
    for (const e of exchanges(3)) rec.onEvent(e);
    await rec.flush();
    expect(write).toHaveBeenCalledTimes(1);
    await rec.close();
    expect(count('exchanges')).toBe(3);
  });

  it('bounds the batches in flight: with the writer stalled, closed batches wait and the queue limit drops the rest', async () => {
    const rec = recorder({ maxBatchesInFlight: 1, batchSize: 10, queueLimit: 30, busyTimeoutMs: 10_000 });
    const other = new BetterSqlite3(path); // another process holding the write lock stalls the writer
    other.prepare('BEGIN IMMEDIATE').run();
    const events = exchanges(25); // 100 events
    for (const e of events) rec.onEvent(e);
    await new Promise((r) => setTimeout(r, 100));
    expect(rec.stats()).toMatchObject({ transactions: 1, droppedQueue: 70 });
    other.prepare('COMMIT').run();
    other.close();
    await rec.flush();
    expect(rec.stats()).toMatchObject({ written: 30, droppedQueue: 70, droppedWrite: 0 });
    await rec.close();
  });

  it('a writer that cannot open the file: every batch counted as dropped and said once; --require-recording calls onFatal once', async () => {
    const lines: string[] = [];
    const onFatal = vi.fn();
    const rec = recorder({ logger: createLogger('warn', (l) => lines.push(l)), requireRecording: true, onFatal });
    rmSync(path); // before the thread (which starts asynchronously) opens it
    for (const e of exchanges(5)) rec.onEvent(e);
    await rec.flush();
    for (const e of exchanges(5)) rec.onEvent(e);
    await expect(rec.close()).resolves.toBeUndefined();
    expect(rec.stats()).toMatchObject({ events: 40, written: 0, droppedWrite: 40 });
    expect(onFatal).toHaveBeenCalledTimes(1);
    expect(String(onFatal.mock.calls[0]![0])).toMatch(/no such recording file/);
    expect(lines.filter((l) => /write of .* failed/.test(l))).toHaveLength(1);
    expect(lines.filter((l) => /could not write the end/.test(l))).toHaveLength(1);
  });

  it('close() gives up on a writer that does not commit in time: what it had not started counts as dropped', async () => {
    const rec = recorder({ batchSize: 5, busyTimeoutMs: 10_000, closeTimeoutMs: 100, writerNice: 0 });
    for (const e of exchanges(1)) rec.onEvent(e);
    await rec.flush(); // the thread is up
    const other = new BetterSqlite3(path);
    other.prepare('BEGIN IMMEDIATE').run(); // the writer waits on this lock...
    const events = exchanges(10); // 40 events, 8 batches
    for (const e of events) rec.onEvent(e);
    const closed = rec.close();
    setTimeout(() => {
      other.prepare('COMMIT').run(); // ...until well after close() gave up on it
      other.close();
    }, 500);
    await expect(closed).resolves.toBeUndefined();
    // At most the batch under way commits once the lock goes; the rest was given up on, and the end row says so.
    const s = rec.stats();
    expect(s.written + s.droppedWrite).toBe(4 + events.length);
    expect(s.droppedWrite).toBeGreaterThanOrEqual(35);
    const store = RecordingStore.open(path);
    expect(store.getRecording(rec.recordingId)).toMatchObject({ droppedWrite: s.droppedWrite, endedUs: T0 + 1_000_000 });
    store.close();
  });
});
