/**
 * The pipeline worker's side of a recording, played by a test: a real spool holding `n` answered
 * `tools/call`s over one stdio connection, and the real indexer process spawned on it.
 */
import { RecordingIndexer, type RecordingIndexerOptions } from '../../src/pipeline/recording-indexer.js';
import { SpoolWriter } from '../../src/pipeline/spool.js';
import { encodeWireOps } from '../../src/pipeline/wire-codec.js';
import { Op, type WireOp } from '../../src/pipeline/worker-wire.js';
import { systemClockOrigin } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/logger.js';

/** A spool (on disk in `dir`) for the recording `db`, holding `n` calls and their answers in one record. */
export function spoolOfCalls(db: string, dir: string, n: number): SpoolWriter {
  const spool = new SpoolWriter(db, 1 << 20, { dir, inMemory: false });
  const ops: WireOp[] = [[Op.Open, { connectionId: 'c1', transport: 'stdio', target: 'test' }, 1]];
  const lines: string[] = [];
  for (let id = 1; id <= n; id++) {
    lines.push(`{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo"}}\n`, `{"jsonrpc":"2.0","id":${id},"result":{"content":[]}}\n`);
    ops.push(
      [Op.Chunk, 'c1', 'c2s', 'stdio', 10 + id, Buffer.byteLength(lines.at(-2)!)],
      [Op.Chunk, 'c1', 's2c', 'stdio', 11 + id, Buffer.byteLength(lines.at(-1)!)],
    );
  }
  if (!spool.append(encodeWireOps(ops), Buffer.from(lines.join('')), 0)) throw new Error('the calls do not fit the spool');
  return spool;
}

/** The indexer process on `spool`, recording to `db`. */
export function indexerOn(spool: SpoolWriter, db: string, more: Partial<RecordingIndexerOptions> = {}): RecordingIndexer {
  return RecordingIndexer.spawn({
    fd: spool.fd,
    key: spool.key,
    capacity: spool.capacity,
    sinks: { record: db, requireRecording: false, transport: 'stdio', target: 'test' },
    logLevel: 'warn',
    clockOrigin: systemClockOrigin,
    logger: silentLogger,
    ...more,
  });
}
