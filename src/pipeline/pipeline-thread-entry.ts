/**
 * Entry of the pipeline worker thread (see pipeline-thread.ts). Per batch of the tap's ops:
 * - with a recording, the batch is appended to the spool (spool.ts) and the recording indexer
 *   (recording-indexer.ts, a process at the lowest priority) builds the recording from it when the
 *   CPU allows: recording costs the busy machine one cipher pass and one write per batch. The tap's
 *   thread created both at its start and spooled until this thread took over (indexer-relay.ts);
 *   batches it spooled come marked `spooled`, for live telemetry only;
 * - with telemetry, the batch is applied at once to a Pipeline feeding the OTel sinks (spans and
 *   metrics are live);
 * then the batch is acknowledged.
 *
 * Invariants: the worker answers `ready` or `failed` exactly once, before any batch (a recording
 * that cannot be opened fails here). The spool is a ring of fixed size: a batch that does not fit
 * in front of the indexer waits here, unacknowledged, and so do the ones after it (in order), so
 * the tap's own bounded queue fills and drops with its usual accounting (a `dropped` gap)
 * instead of anything growing without end. A batch is acknowledged once it is in the spool (or,
 * without a recording, applied). On `close` everything is spooled and indexed, the sinks are
 * closed and `closed` answered.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { McptapError, toWireError, type McptapErrorCode } from '../errors.js';
import { SeededSpanIds } from '../telemetry/seeded-span-ids.js';
import { telemetryEnabled } from '../telemetry/telemetry-config.js';
import { clockFromOrigin } from '../util/clock.js';
import { createLogger } from '../util/logger.js';
import { lowerThreadPriority } from '../util/thread-priority.js';
import { applyWireOps, splitWireBatch } from './apply-wire-ops.js';
import { decodeWireOps, encodeWireOps } from './wire-codec.js';
import { Pipeline } from './pipeline.js';
import { RelayedIndexer } from './indexer-relay.js';
import { IndexerStallWatch, processCpuTicks, type IndexerLook } from './indexer-stall.js';
import { RECORDING_DEFAULTS } from './recording-options.js';
import { attachSinks, type AttachedSinks } from './sink-setup.js';
import { SpoolWriter, type SpoolHandover } from './spool.js';
import type { FromWorker, PipelineWorkerData, ToWorker } from './worker-wire.js';

/** Once the indexer has caught up, a spool file using more space (disk or RAM) than this is emptied. */
const TRIM_SPOOL_BYTES = 64 * 2 ** 20;

const port = parentPort;
if (!port) throw new Error('pipeline-thread-entry.ts runs as a worker thread only');
const data = workerData as PipelineWorkerData;
lowerThreadPriority(data.nice);

const send = (m: FromWorker) => port.postMessage(m);
const logger = createLogger(data.logLevel, (line) => send({ type: 'log', line }));
const clock = clockFromOrigin(data.clockOrigin);
const maxLine = data.maxLineBytes !== undefined ? { maxLineBytes: data.maxLineBytes } : {};
/** One seed for the live spans and the recording: `mcptap export` then reproduces the live span ids. */
const spanIdSeed = data.sinks.spanIdSeed ?? SeededSpanIds.randomSeed();
/** What the tap's side dropped so far (reported with each batch), for the drop metrics. */
let droppedByTap = 0;

interface Recording {
  spool: SpoolWriter;
  indexer: RelayedIndexer;
  /**
   * Batches waiting for room in the spool, oldest first; unacknowledged. A batch too large for the
   * spool waits as several parts, acknowledged with its last (`part`).
   */
  waiting: { seq: number; ops: Buffer; bytes: Buffer; buffer?: ArrayBuffer; part?: true }[];
  /** close() waiting for `waiting` to empty. */
  drained: (() => void)[];
  failed: { batches: number; bytes: number; said: boolean; fatalSent: boolean };
}

interface Live {
  pipeline: Pipeline;
  sinks: AttachedSinks;
}

const failedStart = (e: Error, code: McptapErrorCode = 'MCPTAP_PIPELINE_WORKER') => {
  send({ type: 'failed', ...toWireError(e, code) });
};

/** The live telemetry sinks; undefined without telemetry (or when it failed beside a recording); false once `failed` was sent. */
async function openLive(): Promise<Live | undefined | false> {
  if (!data.sinks.telemetry || !telemetryEnabled(data.sinks.telemetry)) return undefined;
  const pipeline = new Pipeline({ clock, logger, ...maxLine });
  try {
    // Console exporters write through the tap's thread too, in order with `closed` (see the 'log' message).
    const writeLine = (line: string) => send({ type: 'log', line: `${line}\n` });
    const sinks = await attachSinks(pipeline, { ...data.sinks, spanIdSeed, logger, writeLine, extraDropCounts: () => [['tap-side-path', droppedByTap]] });
    return { pipeline, sinks };
  } catch (err) {
    await pipeline.close();
    // A recording does not go down with the telemetry (a --metrics port taken since the tap checked it, say).
    if (data.recording) {
      logger.error(`live telemetry cannot start: ${(err as Error).message}; the recording goes on without it`);
      return undefined;
    }
    failedStart(err as Error);
    return false;
  }
}

/**
 * The spool and the indexer, which the tap's thread created at its start (indexer-relay.ts): this
 * thread writes on where that one stopped, and talks to the indexer through it.
 */
function openRecording(given: { handover: SpoolHandover; indexed: number; pid?: number }): Recording {
  const spool = SpoolWriter.takeOver(given.handover);
  // Set at once (below); the indexer reports nothing before batches are spooled, which needs `rec`.
  let rec: Recording | undefined;
  const indexer = new RelayedIndexer(
    (call) => send({ type: 'indexer', call }),
    given.indexed,
    () => rec && spoolWaiting(rec),
    given.pid,
  );
  rec = { spool, indexer, waiting: [], drained: [], failed: { batches: 0, bytes: 0, said: false, fatalSent: false } };
  return rec;
}

/** The recording could not be opened: what came meanwhile is acknowledged, not spooled (the tap is told why at once). */
let startFailed = false;
/** Set once the tap's thread hands the spool over (asked for first thing, below). */
let recording: Recording | undefined;
let spoolGiven = (): void => {};
const spoolTaken = data.recording ? new Promise<void>((resolve) => (spoolGiven = resolve)) : Promise.resolve();
// Messages are only queued in the port's handler and handled on the next turn: a sender posting
// while this thread is inside a message handler can wait for the handler to return
// (docs/performance.md, "Figures moved from source comments"). They wait until the sinks are open.
const inbox: ToWorker[] = [];
let handle: (() => void) | undefined;
port.on('message', (m: ToWorker) => {
  // At once, in order: the batches before it were spooled by the tap's thread, those after it are this thread's to spool.
  if (m.type === 'spool') {
    recording = openRecording(m);
    spoolGiven();
  } else if (inbox.push(m) === 1 && handle) setImmediate(handle);
});
if (data.recording) send({ type: 'take-spool' });
const live = await openLive();
if (live === false) {
  if (recording) {
    recording.indexer.abandon('the telemetry could not start');
    recording.spool.close();
  }
  port.close();
} else {
  handle = () => handleAll(inbox, live, recording);
  if (inbox.length > 0) setImmediate(handle);
  await spoolTaken;
  // Batches are spooled while the indexer opens the recording; the tap hears `ready` once it has.
  const opened = recording
    ? await recording.indexer.ready.then(
        () => undefined,
        (err: Error) => err,
      )
    : undefined;
  if (opened) {
    startFailed = true;
    failedStart(opened);
    recording!.spool.close();
    if (live) await live.sinks.close();
    port.close();
  } else send({ type: 'ready', ...(live?.sinks.telemetry?.metricsUrl ? { metricsUrl: live.sinks.telemetry.metricsUrl } : {}) });
}

function handleAll(inbox: ToWorker[], l: Live | undefined, rec: Recording | undefined): void {
  for (let m = inbox.shift(); m; m = inbox.shift()) {
    if (m.type === 'batch') {
      droppedByTap = m.droppedTotal;
      const bytes = Buffer.from(m.bytes, 0, m.length);
      const ops = Buffer.from(m.bytes, m.length, m.opsLength);
      if (startFailed) {
        send({ type: 'ack', seq: m.seq });
        continue;
      }
      if (l) applyWireOps(l.pipeline, decodeWireOps(ops), bytes);
      // Without live decoding nothing keeps a view of the buffer once it is spooled: it goes back for reuse.
      if (rec && !m.spooled) {
        // Rare (a spool set smaller than a burst's batch): the batch is spooled in parts that fit.
        if (m.length + m.opsLength > rec.spool.maxRecordBytes) {
          const parts = splitWireBatch(decodeWireOps(ops), bytes, Math.max(1, rec.spool.maxRecordBytes >>> 1));
          parts.forEach((p, i) =>
            rec.waiting.push({ seq: m.seq, ops: encodeWireOps(p.ops), bytes: p.bytes, ...(i < parts.length - 1 ? { part: true as const } : {}) }),
          );
        } else rec.waiting.push({ seq: m.seq, ops, bytes, ...(l ? {} : { buffer: m.bytes }) });
        spoolWaiting(rec);
      } else send({ type: 'ack', seq: m.seq });
    } else if (m.type === 'indexer') {
      rec?.indexer.event(m.event);
    } else if (m.type === 'close') {
      void closeAll(l, rec, m.incomplete)
        .then((lines) => send({ type: 'closed', lines, lostBytes: rec?.failed.bytes ?? 0 }))
        .finally(() => port!.close());
    }
  }
}

/** Spools waiting batches, oldest first, while they fit; each is acknowledged once spooled (or dropped). */
function spoolWaiting(rec: Recording): void {
  const end = rec.spool.end;
  while (rec.waiting.length > 0) {
    const b = rec.waiting[0]!;
    try {
      // An indexer that has gone reads no further: what comes now is dropped (counted), not spooled.
      if (!rec.indexer.alive) throw new McptapError('MCPTAP_INDEXER', 'the recording indexer has stopped');
      if (!rec.spool.append(b.ops, b.bytes, rec.indexer.indexed)) break;
    } catch (err) {
      dropSpooled(rec, b.bytes.length, err as Error);
    }
    rec.waiting.shift();
    if (b.part) continue;
    if (b.buffer) port!.postMessage({ type: 'ack', seq: b.seq, buffer: b.buffer } satisfies FromWorker, [b.buffer]);
    else send({ type: 'ack', seq: b.seq });
  }
  // Batches still waiting: the spool is full, and the indexer must not wait for a lull.
  const waitingForRoom = rec.waiting.length > 0;
  if (rec.spool.end > end || waitingForRoom) rec.indexer.spooled(rec.spool.end, waitingForRoom);
  else rec.spool.trim(rec.indexer.indexed, TRIM_SPOOL_BYTES);
  if (rec.waiting.length === 0) for (const resolve of rec.drained.splice(0)) resolve();
}

function dropSpooled(rec: Recording, bytes: number, err: Error): void {
  rec.failed.batches++;
  rec.failed.bytes += bytes;
  const why = `cannot spool traffic for the recording: ${err.message}`;
  if (!rec.failed.said) {
    rec.failed.said = true;
    logger.error(`${why} (further failures counted, not logged)`);
  }
  if (data.recording?.required && !rec.failed.fatalSent) {
    rec.failed.fatalSent = true;
    send({ type: 'fatal', message: why });
  }
}

async function closeAll(l: Live | undefined, rec: Recording | undefined, incomplete: string | undefined): Promise<string[]> {
  const lines: string[] = [];
  if (!rec) send({ type: 'handed-over' }); // nothing to keep: telemetry not yet exported may be lost
  const liveDone = l ? l.sinks.close().catch((err: Error) => [`closing the telemetry failed: ${err.message}`]) : Promise.resolve([]);
  if (rec) {
    const look = (): IndexerLook => ({
      now: performance.now(),
      opened: rec.indexer.opened,
      indexed: rec.indexer.indexed,
      cpu: rec.indexer.pid !== undefined ? processCpuTicks(rec.indexer.pid) : undefined,
    });
    const watch = new IndexerStallWatch(data.recording?.stallMs ?? RECORDING_DEFAULTS.stallMs, look());
    const progress = setInterval(
      () => {
        // Dead: said once already, nothing more will be indexed.
        if (!rec.indexer.alive) return;
        const total = rec.spool.end;
        const giveUp = watch.look(look(), rec.indexer.indexed < total || rec.waiting.length > 0);
        if (giveUp) return rec.indexer.abandon(giveUp);
        // Still opening the recording: nothing to say yet.
        if (!rec.indexer.opened) return;
        const pct = total > 0 ? Math.floor((100 * rec.indexer.indexed) / total) : 100;
        logger.warn(
          `still indexing the recording ${data.recording?.path}: ${pct}% of ${total < 2 ** 20 ? `${Math.ceil(total / 1024)} KB` : `${(total / 2 ** 20).toFixed(1)} MB`} spooled (the tap ends when it is complete)`,
        );
      },
      Math.min(1000, watch.stallMs / 4),
    );
    try {
      const endedUs = clock.nowUs();
      spoolWaiting(rec);
      if (rec.waiting.length > 0) await new Promise<void>((resolve) => rec.drained.push(resolve));
      const indexed = rec.indexer.close(rec.spool.end, endedUs, incomplete);
      send({ type: 'handed-over' });
      lines.push(...(await indexed));
    } finally {
      clearInterval(progress);
      rec.spool.close();
    }
    if (rec.failed.batches > 0)
      lines.push(`recording ${data.recording?.path}: ${rec.failed.batches} batches (${rec.failed.bytes} bytes) of traffic dropped: they could not be spooled`);
  }
  lines.push(...(await liveDone));
  return lines;
}
