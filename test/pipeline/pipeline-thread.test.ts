/**
 * The pipeline on its own thread: what the tap hands over arrives whole and in order, a full side
 * path drops (and says so in the recording) without ever touching forwarding, and a recording that
 * cannot be opened fails before any traffic.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { PipelineThread } from '../../src/pipeline/pipeline-thread.js';
import { recordingOptions } from '../../src/pipeline/recording-options.js';
import { RecordingStore } from '../../src/store/recording-store.js';
import { silentLogger } from '../../src/util/logger.js';

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
  return PipelineThread.start({
    sinks: { transport: 'stdio', target: 'test-server' },
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

describe('PipelineThread', () => {
  it('records what the tap saw, split anywhere, in order, once the worker is closed', async () => {
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
    // Room for about two 400-byte lines: within one tick nothing is acknowledged, so the rest drops.
    const wp = await start(path, 850);
    const c = (bytes: Buffer) => wp.pushChunk({ connectionId: 'stdio', direction: 'c2s', channel: 'stdio', bytes, timeUs: wp.clock.nowUs() });
    wp.openConnection({ connectionId: 'stdio', transport: 'stdio', target: 'test-server' });
    c(line(1, 300));
    c(line(2, 300));
    const third = line(3, 300);
    c(third.subarray(0, 100)); // dropped: the line is cut, so decoding must skip its rest
    c(third.subarray(100, 200));
    expect(wp.droppedCounts).toEqual({ chunks: 2, messages: 0, bytes: 200 });
    await new Promise((r) => setTimeout(r, 200)); // the worker acknowledges; room again
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

  it("with requireRecording, a write the worker cannot make reaches onFatal on the tap's thread", async () => {
    const path = tempDb();
    let fatal: Error | undefined;
    let closed: Promise<unknown> = Promise.resolve();
    const gotFatal = new Promise<void>((resolve) => {
      void PipelineThread.start({
        sinks: { transport: 'stdio', target: 'test-server' },
        // A short wait for the lock: the failure, not the patience, is under test.
        recording: recordingOptions(path, { required: true, lockWaitMs: 200 }),
        logger: silentLogger,
        logLevel: 'silent',
        onFatal: (err) => {
          fatal = err;
          resolve();
        },
      }).then((wp) => {
        // Another process holds the write lock: every write of the worker's recorder fails (busy).
        const other = new BetterSqlite3(path);
        other.exec('BEGIN EXCLUSIVE');
        wp.openConnection({ connectionId: 'stdio', transport: 'stdio', target: 'test-server' });
        wp.pushChunk({ connectionId: 'stdio', direction: 'c2s', channel: 'stdio', bytes: line(1), timeUs: wp.clock.nowUs() });
        closed = gotFatal.then(async () => {
          other.exec('ROLLBACK');
          other.close();
          return wp.close();
        });
      });
    });
    await Promise.race([gotFatal, new Promise((_, reject) => setTimeout(() => reject(new Error('no onFatal within 10 s')), 10_000))]);
    await closed;
    expect(fatal?.message).toMatch(/record|write|busy|locked/i);
  });

  it('fails before any traffic when the recording cannot be opened', async () => {
    const bad = join(tempDb(), 'no-such-dir', 'rec.db');
    await expect(start(bad)).rejects.toMatchObject({ code: 'MCPTAP_RECORD_OPEN' });
  });
});
