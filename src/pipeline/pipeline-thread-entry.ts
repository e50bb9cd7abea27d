/**
 * Entry of the pipeline worker thread (see side-path.ts): live telemetry. Each batch of the
 * tap's ops is applied to a Pipeline feeding the OpenTelemetry sinks, then acknowledged.
 *
 * Invariants: the worker answers `ready` or `failed` exactly once, before any batch is applied; on
 * `close` the sinks are flushed and closed and `closed` answered.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { toWireError } from '../errors.js';
import { clockFromOrigin } from '../util/clock.js';
import { createLogger } from '../util/logger.js';
import { lowerThreadPriority } from '../util/thread-priority.js';
import { applyWireOps } from './apply-wire-ops.js';
import { decodeWireOps } from './wire-codec.js';
import { Pipeline } from './pipeline.js';
import { attachSinks, type AttachedSinks } from './sink-setup.js';
import type { FromWorker, PipelineWorkerData, ToWorker } from './worker-wire.js';

const port = parentPort;
if (!port) throw new Error('pipeline-thread-entry.ts runs as a worker thread only');
const data = workerData as PipelineWorkerData;
lowerThreadPriority(data.nice);

const send = (m: FromWorker) => port.postMessage(m);
const logger = createLogger(data.logLevel, (line) => send({ type: 'log', line }));
const pipeline = new Pipeline({ clock: clockFromOrigin(data.clockOrigin), logger, maxLineBytes: data.maxLineBytes });
/** What the tap's side dropped so far (reported with each batch), for the drop metrics. */
let droppedByTap = 0;

// Messages are only queued in the port's handler and handled on the next turn: a sender posting
// while this thread is inside a message handler can wait for the handler to return
// (docs/performance.md, "Figures moved from source comments"). They wait until the sinks are open.
const inbox: ToWorker[] = [];
let handle: (() => void) | undefined;
port.on('message', (m: ToWorker) => {
  if (inbox.push(m) === 1 && handle) setImmediate(handle);
});
try {
  // Console exporters write through the tap's thread too, in order with `closed` (see the 'log' message).
  const writeLine = (line: string) => send({ type: 'log', line: `${line}\n` });
  const sinks = await attachSinks(pipeline, { ...data.sinks, logger, writeLine, extraDropCounts: () => [['tap-side-path', droppedByTap]] });
  handle = () => handleAll(sinks);
  if (inbox.length > 0) setImmediate(handle);
  const metricsUrl = sinks.telemetry?.metricsUrl;
  send({ type: 'ready', ...(metricsUrl ? { metricsUrl } : {}) });
} catch (err) {
  await pipeline.close();
  // A recording does not go down with the telemetry (a --metrics port taken since the tap checked it, say).
  if (data.besideRecording) logger.error(`live telemetry cannot start: ${(err as Error).message}; the recording goes on without it`);
  send({ type: 'failed', ...toWireError(err as Error, 'MCPTAP_PIPELINE_WORKER') });
  port.close();
}

function handleAll(sinks: AttachedSinks): void {
  for (let m = inbox.shift(); m; m = inbox.shift()) {
    if (m.type === 'batch') {
      droppedByTap = m.droppedTotal;
      applyWireOps(pipeline, decodeWireOps(Buffer.from(m.bytes, m.length, m.opsLength)), Buffer.from(m.bytes, 0, m.length));
      send({ type: 'ack', seq: m.seq });
    } else {
      void sinks
        .close()
        .catch((err: Error) => [`closing the telemetry failed: ${err.message}`])
        .then((lines) => send({ type: 'closed', lines }))
        .finally(() => port!.close());
    }
  }
}
