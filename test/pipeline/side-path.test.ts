/**
 * The tap's side path: what the tap hands over is recorded whole and in order, a full side path
 * drops (and says so in the recording) without ever touching forwarding, and a recording that
 * cannot be opened fails before any traffic.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { createServer, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { resolveTelemetryConfig } from '../../src/telemetry/telemetry-config.js';
import { SidePath } from '../../src/pipeline/side-path.js';
import { SeededSpanIds } from '../../src/telemetry/seeded-span-ids.js';
import { readRecordingOtelMeta } from '../../src/telemetry/recording-otel-meta.js';
import { recordingOptions } from '../../src/pipeline/recording-options.js';
import { RecordingStore } from '../../src/store/recording-store.js';
import { silentLogger } from '../../src/util/logger.js';
import { ROOT } from '../helpers/paths.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDb(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-wp-'));
  dirs.push(dir);
  return join(dir, 'rec.db');
}

const line = (id: number, pad = 0) =>
  Buffer.from(`{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"t":"${'x'.repeat(pad)}"}}}\n`);
const answer = (id: number) => Buffer.from(`{"jsonrpc":"2.0","id":${id},"result":{"content":[]}}\n`);
const tick = () => new Promise<void>((r) => setImmediate(r));

async function start(path: string, maxQueueBytes?: number) {
  return SidePath.start({
    sinks: { transport: 'stdio', target: 'test-server', spanIdSeed: SeededSpanIds.randomSeed() },
    recording: recordingOptions(path),
    logger: silentLogger,
    logLevel: 'silent',
    ...(maxQueueBytes ? { maxQueueBytes } : {}),
  });
}

function read(path: string) {
  const store = RecordingStore.open(path);
  try {
    const rec = store.listRecordings()[0]!;
    return { exchanges: store.exchanges({ recordingId: rec.id }), anomalies: store.anomalies(rec.id), frames: [...store.frames(rec.id)] };
  } finally {
    store.close();
  }
}

describe('SidePath', () => {
  it('records what the tap saw, split anywhere, in order, once closed', async () => {
    const path = tempDb();
    const wp = await start(path);
    const c = (direction: 'c2s' | 's2c', bytes: Buffer) =>
      wp.pushChunk({ connectionId: 'stdio', direction, channel: 'stdio', bytes, timeUs: wp.clock.nowUs() });
    wp.openConnection({ connectionId: 'stdio', transport: 'stdio', target: 'test-server' });
    for (let id = 1; id <= 50; id++) {
      const req = line(id);
      c('c2s', req.subarray(0, 7));
      c('c2s', req.subarray(7));
      if (id % 10 === 0) await tick();
      c('s2c', answer(id));
    }
    wp.closeConnection('stdio', { reason: 'exited with code 0', exitCode: 0 });
    expect(await wp.close()).toEqual([]);
    const r = read(path);
    expect(r.exchanges.map((e) => [e.id, e.outcome])).toEqual(Array.from({ length: 50 }, (_, i) => [i + 1, 'ok']));
    expect(r.frames).toHaveLength(100);
    expect(r.anomalies).toEqual([]);
  });

  it('drops past its queue bound, says so in the recording, and resumes at a line boundary', async () => {
    const path = tempDb();
    // Room for about two 400-byte lines: within one tick nothing is spooled, so the rest drops.
    const wp = await start(path, 850);
    const c = (bytes: Buffer) => wp.pushChunk({ connectionId: 'stdio', direction: 'c2s', channel: 'stdio', bytes, timeUs: wp.clock.nowUs() });
    wp.openConnection({ connectionId: 'stdio', transport: 'stdio', target: 'test-server' });
    c(line(1, 300));
    c(line(2, 300));
    const third = line(3, 300);
    c(third.subarray(0, 100)); // dropped: the line is cut, so decoding must skip its rest
    c(third.subarray(100, 200));
    expect(wp.droppedCounts).toEqual({ chunks: 2, messages: 0, bytes: 200 });
    await new Promise((r) => setTimeout(r, 200)); // spooled: room again
    c(third.subarray(200)); // the tail of the cut line: not a message of its own
    c(line(4, 10));
    wp.closeConnection('stdio', { reason: 'exited with code 0', exitCode: 0 });
    const lines = await wp.close();
    expect(lines.join('\n')).toMatch(/dropped 2 chunks and 0 message bodies \(200 bytes\)/);
    const r = read(path);
    expect(r.exchanges.map((e) => e.id)).toEqual([1, 2, 4]);
    expect(r.frames.filter((f) => f.kind === 'invalid')).toEqual([]);
    expect(r.anomalies.map((a) => [a.kind, a.detail])).toEqual([
      ['dropped', expect.stringMatching(/^200 bytes \(2 chunks\) of stdio forwarded but not observed/)],
    ]);
  });

  it("with requireRecording, a write the recorder cannot make reaches onFatal on the tap's thread", async () => {
    const path = tempDb();
    let fatal: Error | undefined;
    let closed: Promise<unknown> = Promise.resolve();
    let startFailed: (err: Error) => void = () => {};
    const failedToStart = new Promise<never>((_, reject) => (startFailed = reject));
    const gotFatal = new Promise<void>((resolve) => {
      void SidePath.start({
        sinks: { transport: 'stdio', target: 'test-server', spanIdSeed: SeededSpanIds.randomSeed() },
        // A short wait for the lock: the failure, not the patience, is under test.
        recording: recordingOptions(path, { required: true, lockWaitMs: 200 }),
        logger: silentLogger,
        logLevel: 'silent',
        onFatal: (err) => {
          fatal = err;
          resolve();
        },
      }).then((wp) => {
        // Another process holds the write lock: every write of the recorder fails (busy).
        const other = new BetterSqlite3(path);
        other.exec('BEGIN EXCLUSIVE');
        wp.openConnection({ connectionId: 'stdio', transport: 'stdio', target: 'test-server' });
        wp.pushChunk({ connectionId: 'stdio', direction: 'c2s', channel: 'stdio', bytes: line(1), timeUs: wp.clock.nowUs() });
        closed = gotFatal.then(async () => {
          other.exec('ROLLBACK');
          other.close();
          return wp.close();
        });
      }, startFailed);
    });
    await Promise.race([gotFatal, failedToStart, new Promise((_, reject) => setTimeout(() => reject(new Error('no onFatal within 45 s')), 45_000))]);
    await closed;
    expect(fatal?.message).toMatch(/record|write|busy|locked/i);
  });

  it('a recording goes on when the live telemetry beside it cannot start (its metrics port taken)', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const { port } = blocker.address() as AddressInfo;
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const path = tempDb();
    try {
      const wp = await SidePath.start({
        sinks: {
          transport: 'stdio',
          target: 'test-server',
          spanIdSeed: SeededSpanIds.randomSeed(),
          telemetry: resolveTelemetryConfig({ metrics: `127.0.0.1:${port}` }, {}),
        },
        recording: recordingOptions(path),
        logger: silentLogger,
        logLevel: 'error',
      });
      expect(wp.metricsUrl).toBeUndefined();
      wp.openConnection({ connectionId: 'stdio', transport: 'stdio', target: 'test-server' });
      for (let id = 1; id <= 5; id++) {
        wp.pushChunk({ connectionId: 'stdio', direction: 'c2s', channel: 'stdio', bytes: line(id), timeUs: wp.clock.nowUs() });
        wp.pushChunk({ connectionId: 'stdio', direction: 's2c', channel: 'stdio', bytes: answer(id), timeUs: wp.clock.nowUs() });
      }
      wp.closeConnection('stdio', { reason: 'exited with code 0', exitCode: 0 });
      expect(await wp.close()).toEqual([]);
      const said = stderr.mock.calls.map((c) => String(c[0])).filter((l) => l.includes('live telemetry cannot start'));
      expect(said).toHaveLength(1);
      expect(said[0]).toMatch(/EADDRINUSE.*; the recording goes on without it/);
    } finally {
      stderr.mockRestore();
      await new Promise<void>((r) => blocker.close(() => r()));
    }
    expect(read(path).exchanges.map((e) => [e.id, e.outcome])).toEqual(Array.from({ length: 5 }, (_, i) => [i + 1, 'ok']));
  });

  it('a recording and live spans beside it get every exchange, under one span-id seed', async () => {
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const path = tempDb();
    const spanIdSeed = SeededSpanIds.randomSeed();
    try {
      const wp = await SidePath.start({
        sinks: { transport: 'stdio', target: 'test-server', spanIdSeed, telemetry: resolveTelemetryConfig({}, { OTEL_TRACES_EXPORTER: 'console' }) },
        recording: recordingOptions(path),
        logger: silentLogger,
        logLevel: 'silent',
      });
      wp.openConnection({ connectionId: 'stdio', transport: 'stdio', target: 'test-server' });
      for (let id = 1; id <= 20; id++) {
        wp.pushChunk({ connectionId: 'stdio', direction: 'c2s', channel: 'stdio', bytes: line(id), timeUs: wp.clock.nowUs() });
        wp.pushChunk({ connectionId: 'stdio', direction: 's2c', channel: 'stdio', bytes: answer(id), timeUs: wp.clock.nowUs() });
        if (id % 5 === 0) await tick();
      }
      wp.closeConnection('stdio', { reason: 'exited with code 0', exitCode: 0 });
      expect(await wp.close()).toEqual([]);
      const spans = stderr.mock.calls
        .map((c) => String(c[0]))
        .filter((l) => l.startsWith('{"otel":"span"'))
        .map((l) => JSON.parse(l) as { name: string; spanId: string });
      expect(spans.filter((s) => s.name.startsWith('tools/call'))).toHaveLength(20);
    } finally {
      stderr.mockRestore();
    }
    expect(read(path).exchanges.map((e) => [e.id, e.outcome])).toEqual(Array.from({ length: 20 }, (_, i) => [i + 1, 'ok']));
    const store = RecordingStore.open(path);
    try {
      expect(readRecordingOtelMeta(store.listRecordings()[0]!.meta)?.spanIdSeed).toBe(spanIdSeed);
    } finally {
      store.close();
    }
  });

  it('fails before any traffic when the recording cannot be opened', async () => {
    const bad = join(tempDb(), 'no-such-dir', 'rec.db');
    await expect(start(bad)).rejects.toMatchObject({ code: 'MCPTAP_RECORD_OPEN' });
  });

  it('once closing has handed over, the process may exit at once: the indexer completes the recording', async () => {
    const path = tempDb();
    // A process of its own that opens the pipeline (sinks booting beside the traffic, as a tap does),
    // hands it 300 exchanges, closes, and exits the moment `handedOver` resolves: what a tap does on
    // SIGTERM while closing (an indexer still loading is replaced first, see indexer-unheard-death.test.ts). The built code, as the CLI runs it.
    const script = `
      import { SidePath } from ${JSON.stringify(join(ROOT, 'dist/src/pipeline/side-path.js'))};
      import { recordingOptions } from ${JSON.stringify(join(ROOT, 'dist/src/pipeline/recording-options.js'))};
      import { silentLogger } from ${JSON.stringify(join(ROOT, 'dist/src/util/logger.js'))};
      const wp = new SidePath({ sinks: { transport: 'stdio', target: 'test-server', spanIdSeed: '0123456789abcdef0123456789abcdef' }, recording: recordingOptions(${JSON.stringify(path)}), logger: silentLogger, logLevel: 'silent' });
      const c = (direction, text) => wp.pushChunk({ connectionId: 'stdio', direction, channel: 'stdio', bytes: Buffer.from(text), timeUs: wp.clock.nowUs() });
      wp.openConnection({ connectionId: 'stdio', transport: 'stdio', target: 'test-server' });
      for (let id = 1; id <= 300; id++) {
        c('c2s', JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list' }) + '\\n');
        c('s2c', JSON.stringify({ jsonrpc: '2.0', id, result: { tools: [] } }) + '\\n');
      }
      wp.closeConnection('stdio', { reason: 'exited with code 0', exitCode: 0 });
      void wp.close();
      await wp.handedOver;
      wp.checkIndexer();
      process.exit(0);
    `;
    const file = join(dirname(path), 'exit-when-handed-over.mjs');
    writeFileSync(file, script);
    execFileSync(process.execPath, [file], { timeout: 60_000 });
    // The indexer outlives it: poll (bounded) until the recording has ended.
    let ended = false;
    for (let i = 0; i < 300 && !ended; i++) {
      if (existsSync(path)) {
        const store = RecordingStore.open(path);
        try {
          ended = store.listRecordings()[0]?.endedUs !== undefined;
        } finally {
          store.close();
        }
      }
      if (!ended) await new Promise((r) => setTimeout(r, 100));
    }
    expect(ended).toBe(true);
    const r = read(path);
    expect(r.exchanges).toHaveLength(300);
    expect(r.exchanges.every((e) => e.outcome === 'ok')).toBe(true);
    expect(r.anomalies).toEqual([]);
  }, 60_000);
});
