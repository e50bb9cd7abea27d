/**
 * The recorder's writer thread: owns the only write connection to the recording file and writes
 * each batch it is sent in one transaction, answering every message with exactly one reply (in
 * order), so the recorder can count what was stored and resolve `flush()`.
 *
 * Started by WorkerBatchWriter with {@link WriterThreadData}; the recording row already exists
 * (the recorder created it on its own thread, so that a bad path fails before any traffic).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { RecordingStore } from '../store/recording-store.js';
import { lowerThreadPriority } from '../util/thread-priority.js';
import { STOPPED, toErrorInfo, type ErrorInfo, type FromWriter, type ToWriter, type WriterThreadData } from './batch-writer.js';

const port = parentPort;
if (!port) throw new Error('recorder-worker.ts runs as a worker thread only');
const data = workerData as WriterThreadData;

// Recording is background work: it yields the CPU to forwarding, the host and the server.
lowerThreadPriority(data.nice);

let store: RecordingStore | undefined;
let unavailable: ErrorInfo | undefined;
try {
  store = RecordingStore.open(data.path, { create: false, busyTimeoutMs: data.busyTimeoutMs, cacheKiB: 16 * 1024 });
} catch (err) {
  unavailable = toErrorInfo(err);
}

const stopped = new Int32Array(data.stop);

function handle(m: ToWriter): FromWriter {
  if (m.type === 'batch') {
    if (!store) return { type: 'ack', id: m.id, written: 0, rejected: 0, failed: unavailable! };
    if (Atomics.load(stopped, 0) === 1) return { type: 'ack', id: m.id, written: 0, rejected: 0, failed: { message: STOPPED } };
    try {
      const r = store.writeBatch(m.batch);
      return { type: 'ack', id: m.id, written: r.written, rejected: r.rejected, ...(r.firstError ? { firstError: toErrorInfo(r.firstError) } : {}) };
    } catch (err) {
      return { type: 'ack', id: m.id, written: 0, rejected: 0, failed: toErrorInfo(err) };
    }
  }
  if (!store) return { type: 'ended', id: m.id, error: unavailable! };
  try {
    store.endRecording(m.recordingId, m.end);
    store.close();
    return { type: 'ended', id: m.id };
  } catch (err) {
    return { type: 'ended', id: m.id, error: toErrorInfo(err) };
  }
}

port.on('message', (m: ToWriter) => {
  const reply = handle(m);
  // The batch is committed (SQLite copied what it needed): hand its buffer back for reuse.
  const bytes = m.type === 'batch' && reply.type === 'ack' ? m.batch.bytes?.buffer : undefined;
  if (bytes instanceof ArrayBuffer && bytes.byteLength > 0) port.postMessage({ ...reply, bytes }, [bytes]);
  else port.postMessage(reply);
});
