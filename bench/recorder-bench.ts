/**
 * Recorder write-path benchmark: CPU time per recorded stdio exchange (a `tools/call` request and
 * its result, 200 B and 10 KB messages) pushed through a real Pipeline into a SqliteRecorder (a
 * Redactor as `mcptap stdio --record` has, a fresh temp file), counted with process.cpuUsage() up
 * to and including the recorder's final flush and close, all on one thread, as the recording
 * indexer runs it.
 *
 * Measured in the same run, interleaved, so that other load on the machine touches every figure:
 * - the same Pipeline with no sink: the recorder's share is the difference;
 * - the floor: the same bytes written as the same number of rows (3 per exchange: request bytes,
 *   response bytes, an empty blob for the exchange row) by plain better-sqlite3 INSERTs into an
 *   index-free (raw, time_us, direction) table, same pragmas, same rows per transaction.
 * CPU time, not wall time: it is what the recorder takes from a busy machine. Each figure is the
 * median of a few runs; repeat the bench if the spread looks odd.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Pipeline } from '../src/pipeline/pipeline.js';
import { Redactor } from '../src/redact/redactor.js';
import { SqliteRecorder } from '../src/sinks/sqlite-recorder.js';
import { RecordingStore } from '../src/store/recording-store.js';
import { silentLogger } from '../src/util/logger.js';
import { systemClock } from '../src/util/clock.js';
import { median, table } from './bench-util.js';

/** Exchanges pushed between two turns of the event loop (the recorder's writes run in those turns). */
const ROUND = 250;
/** The recorder's default batch (5 000 events) holds 1 250 of these exchanges: the floor commits as often. */
const FLOOR_TX_EXCHANGES = 1250;
/** Width of the id field in the message templates: ids are written in place, padded with spaces (valid JSON). */
const ID_WIDTH = 9;

interface Messages {
  /** Request and response lines of exchange `id` (fresh Buffers: the pipeline may keep them). */
  request(id: number): Buffer;
  response(id: number): Buffer;
}

function messages(size: number): Messages {
  const template = (head: string, tail: (body: string) => string) => {
    const fixed = Buffer.byteLength(head + ' '.repeat(ID_WIDTH) + tail(''));
    return Buffer.from(`${head}${' '.repeat(ID_WIDTH)}${tail('y'.repeat(Math.max(0, size - fixed)))}\n`);
  };
  const req = template('{"jsonrpc":"2.0","id":', (b) => `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"${b}"}}}`);
  const res = template('{"jsonrpc":"2.0","id":', (b) => `,"result":{"content":[{"type":"text","text":"${b}"}]}}`);
  const at = Buffer.byteLength('{"jsonrpc":"2.0","id":');
  const fill = (t: Buffer, id: number) => {
    const b = Buffer.allocUnsafe(t.length);
    t.copy(b);
    b.write(String(id).padStart(ID_WIDTH, ' '), at, 'latin1');
    return b;
  };
  return { request: (id) => fill(req, id), response: (id) => fill(res, id) };
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

function cpuUs(since: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(since);
  return d.user + d.system;
}

/** CPU us per exchange of the pipeline alone (`path` undefined) or with a recorder writing to `path`. */
async function runPipeline(size: number, count: number, path: string | undefined): Promise<{ us: number; recorded: number }> {
  const m = messages(size);
  const pipeline = new Pipeline({ tickMs: 0, logger: silentLogger });
  const recorder =
    path === undefined
      ? undefined
      : new SqliteRecorder({
          path,
          recording: { transport: 'stdio', target: 'node echo-server.mjs', startedUs: systemClock.nowUs(), mcptapVersion: 'bench' },
          logger: silentLogger,
          clock: systemClock,
          redactor: new Redactor({ key: 'bench' }),
        });
  if (recorder) pipeline.addSink(recorder);
  const push = (direction: 'c2s' | 's2c', bytes: Buffer) =>
    pipeline.pushChunk({ connectionId: 'c1', direction, channel: 'stdio', bytes, timeUs: systemClock.nowUs() });
  const start = process.cpuUsage();
  pipeline.openConnection({ connectionId: 'c1', transport: 'stdio', target: 'node echo-server.mjs', pid: 1 });
  for (let id = 1; id <= count;) {
    for (const end = Math.min(count, id + ROUND - 1); id <= end; id++) {
      push('c2s', m.request(id));
      push('s2c', m.response(id));
    }
    await turn();
  }
  pipeline.closeConnection('c1', { reason: 'exit', exitCode: 0, signal: null });
  await pipeline.close();
  const us = cpuUs(start) / count;
  const s = recorder?.stats();
  if (s && s.dropped > 0) throw new Error(`the recorder dropped ${s.dropped} events: the figures would flatter it`);
  return { us, recorded: path === undefined ? 0 : recordedExchanges(path) };
}

function recordedExchanges(path: string): number {
  const store = RecordingStore.open(path);
  try {
    return store.listRecordings()[0]?.exchanges ?? 0;
  } finally {
    store.close();
  }
}

/** CPU us per exchange of writing its bytes as 3 plain rows into an index-free table. */
function runFloor(size: number, count: number, path: string): number {
  const m = messages(size);
  const db = new BetterSqlite3(path);
  db.pragma('page_size = 32768');
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec('CREATE TABLE floor (raw BLOB NOT NULL, time_us INTEGER NOT NULL, direction TEXT NOT NULL)');
  const insert = db.prepare('INSERT INTO floor (raw, time_us, direction) VALUES (?, ?, ?)');
  const empty = Buffer.alloc(0);
  const start = process.cpuUsage();
  const tx = db.transaction((from: number, to: number) => {
    for (let id = from; id <= to; id++) {
      const now = systemClock.nowUs();
      insert.run(m.request(id), now, 'c2s');
      insert.run(m.response(id), now, 's2c');
      insert.run(empty, now, 'x');
    }
  });
  for (let id = 1; id <= count; id += FLOOR_TX_EXCHANGES) tx(id, Math.min(count, id + FLOOR_TX_EXCHANGES - 1));
  db.close();
  return cpuUs(start) / count;
}

export async function runRecorderBench(opts: { runs?: number; scale?: number } = {}): Promise<string> {
  const runs = opts.runs ?? 5;
  const scale = opts.scale ?? 1;
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-recorder-bench-'));
  const rows: string[][] = [];
  let file = 0;
  // One file per run, removed with its WAL once measured: /tmp stays small.
  let last: string | undefined;
  const fresh = () => {
    if (last) for (const ext of ['', '-wal', '-shm']) rmSync(last + ext, { force: true });
    return (last = join(dir, `r${++file}.db`));
  };
  try {
    await runPipeline(200, 2000, fresh()); // warm-up: JIT, statement caches, page cache
    runFloor(200, 2000, fresh());
    for (const [size, count] of [
      [200, 20_000 * scale],
      [10 * 1024, 5_000 * scale],
    ] as const) {
      const m = { bare: [] as number[], recorder: [] as number[], floor: [] as number[] };
      for (let i = 0; i < runs; i++) {
        m.bare.push((await runPipeline(size, count, undefined)).us);
        const r = await runPipeline(size, count, fresh());
        if (r.recorded !== count) throw new Error(`recorded ${r.recorded} of ${count} exchanges`);
        m.recorder.push(r.us);
        m.floor.push(runFloor(size, count, fresh()));
      }
      const b = median(m.bare);
      const f = median(m.floor);
      const r = median(m.recorder);
      const range = `${Math.min(...m.recorder).toFixed(0)}..${Math.max(...m.recorder).toFixed(0)}`;
      rows.push([
        size === 200 ? '200 B' : '10 KB',
        String(count),
        b.toFixed(1),
        r.toFixed(1),
        (r - b).toFixed(1),
        f.toFixed(1),
        `${((r - b) / f).toFixed(2)}x`,
        range,
      ]);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return [
    `recorder: CPU us per stdio exchange (tools/call + result), median of ${runs} runs, redactor on, whole process (all threads)`,
    table(['msg', 'exchanges', 'pipeline', '+recorder', 'recorder', 'floor', 'vs floor', '+recorder range'], rows),
    'recorder = (+recorder) - pipeline: what recording adds (encode, redact, SQL, commit).',
    '  floor = the same bytes as 3 plain rows per exchange into an',
    "  index-free 3-column table, same pragmas, one transaction per 1 250 exchanges (the recorder's 5 000-event batch).",
  ].join('\n');
}
