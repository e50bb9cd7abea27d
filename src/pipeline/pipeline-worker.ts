/**
 * Entry of the pipeline worker thread (see worker-pipeline.ts): builds a {@link Pipeline} with the
 * sinks asked for, then applies each batch of the tap's ops to it, in order, and acknowledges it.
 *
 * Invariants: a batch's bytes are viewed, never copied (frames keep views of the transferred
 * buffer); the worker answers `ready` or `failed` exactly once, before any batch; on `close` it
 * ends its sinks (flushing the recording and the exporters) and answers `closed`, then exits.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { McptapError } from '../cli/exit-codes.js';
import { clockFromOrigin } from '../util/clock.js';
import { createLogger } from '../util/logger.js';
import { lowerThreadPriority } from '../util/thread-priority.js';
import { Pipeline } from './pipeline.js';
import { attachSinks, type AttachedSinks } from './sink-setup.js';
import { Op, type FromWorker, type PipelineWorkerData, type ToWorker, type WireOp } from './worker-wire.js';

const port = parentPort;
if (!port) throw new Error('pipeline-worker.ts runs as a worker thread only');
const data = workerData as PipelineWorkerData;
lowerThreadPriority(data.nice);

const send = (m: FromWorker) => port.postMessage(m);
const logger = createLogger(data.logLevel);
const pipeline = new Pipeline({ clock: clockFromOrigin(data.clockOrigin), logger, ...(data.maxLineBytes !== undefined ? { maxLineBytes: data.maxLineBytes } : {}) });
/** What the tap's side dropped so far (reported with each batch), for the drop metrics. */
let droppedByTap = 0;

/** The sinks, or undefined once `failed` was sent (the thread then just ends: no throw, whose error event could overtake the message). */
async function openSinks(): Promise<AttachedSinks | undefined> {
  try {
    return await attachSinks(pipeline, {
      ...data.sinks,
      logger,
      onFatal: (err) => send({ type: 'fatal', message: err.message }),
      extraDropCounts: () => [['tap-side-path', droppedByTap]],
    });
  } catch (err) {
    const e = err as Error;
    send({ type: 'failed', code: e instanceof McptapError ? e.code : 'MCPTAP_PIPELINE_WORKER', message: e.message, exitCode: e instanceof McptapError ? e.exitCode : 1 });
    return undefined;
  }
}

const sinks = await openSinks();
if (!sinks) {
  await pipeline.close();
  port.close();
} else {
  send({ type: 'ready', ...(sinks.telemetry?.metricsUrl ? { metricsUrl: sinks.telemetry.metricsUrl } : {}) });
  port.on('message', (m: ToWorker) => {
    if (m.type === 'batch') {
      droppedByTap = m.droppedTotal;
      apply(JSON.parse(m.ops) as WireOp[], Buffer.from(m.bytes));
      send({ type: 'ack', seq: m.seq });
    } else if (m.type === 'close') {
      void sinks.close().then(
        (lines) => send({ type: 'closed', lines }),
        (err: Error) => send({ type: 'closed', lines: [`closing the sinks failed: ${err.message}`] }),
      ).finally(() => port.close());
    }
  });
}

function apply(ops: WireOp[], bytes: Buffer): void {
  let at = 0;
  const take = (len: number): Buffer => bytes.subarray(at, (at += len));
  for (const op of ops) {
    switch (op[0]) {
      case Op.Open:
        pipeline.openConnection(op[1], op[2]);
        break;
      case Op.Chunk:
        pipeline.pushChunk({ connectionId: op[1], direction: op[2], channel: op[3], timeUs: op[4], bytes: take(op[5]) });
        break;
      case Op.Message:
        pipeline.pushMessage(op[1], take(op[2]));
        break;
      case Op.Request:
        pipeline.pushRequest(op[1], take(op[2]), op[3]);
        break;
      case Op.EndStream:
        pipeline.endStream(op[1], op[2], op[3]);
        break;
      case Op.Anomaly:
        pipeline.anomaly(op[1], op[2], op[3], op[4]);
        break;
      case Op.Close:
        pipeline.closeConnection(op[1], op[2]);
        break;
      case Op.Gap:
        pipeline.gap(op[1], op[2], op[3], op[4]);
        break;
    }
  }
}
