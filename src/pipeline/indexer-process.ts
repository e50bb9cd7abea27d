/**
 * The recording indexer process (recording-indexer.ts): applies the spool's batches in order to a Pipeline feeding the
 * SQLite recorder, in slices that yield to the tap's messages. Each slice is committed before its position is reported.
 */
import { deserialize } from 'node:v8';
import { toWireError } from '../errors.js';
import { clockFromOrigin, type Clock } from '../util/clock.js';
import { createLogger } from '../util/logger.js';
import { lowerProcessPriority, restorePriority } from '../util/thread-priority.js';
import { applyWireOps } from './apply-wire-ops.js';
import { decodeWireOps } from './wire-codec.js';
import { IndexSchedule } from './index-schedule.js';
import { Pipeline } from './pipeline.js';
import { SPOOLED_EVERY_MS, type FromIndexer, type IndexerStart, type ToIndexer } from './recording-indexer.js';
import { attachSinks } from './sink-setup.js';
import { SpoolReader } from './spool.js';
import { JournalSlot, selfFields } from '../store/tap-journal.js';

/** Longest run of indexing between two looks at the message queue (ms). */
const SLICE_MS = 20;
/** Traffic counts as flowing while batches are spooled this often (the tap says so every SPOOLED_EVERY_MS at most); see IndexSchedule. */
const QUIET_MS = 3 * SPOOLED_EVERY_MS;

/** The spool's descriptor here: stdio slot 4 (slot 3 is the IPC channel). */
const SPOOL_FD = 4;

if (!process.send) throw new Error('indexer-process.ts runs as a child process with an IPC channel only');
// The tap ends the recording (it closes, or it dies and the channel closes): never a signal meant for it.
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(sig, () => {});
// A tap gone before `start` leaves nothing to keep; after, the spool is indexed (tapGone). Gone: stdin (a pipe only the tap
// holds) ends, or the IPC channel closes; until `start` is read only stdin counts (a tap killed at once leaves `start` in it).
let onDisconnect: () => void = () => process.exit(1);
let startRead = false;
process.on('disconnect', () => startRead && onDisconnect());
let finished = false;
/** Messages that come while the recording is being opened: handled once it is. */
const early: ToIndexer[] = [];
let onMessage: (m: ToIndexer) => void = (m) => early.push(m);
let tapLeftEarly = false;
/** The tap is closing ('stop-yielding'): no more yielding, even if this process only now gets to read `start`. */
let stoppedYielding = false;
const data = await readStart();
if (!stoppedYielding) lowerProcessPriority(data.nice);
const maxLagMs = data.maxLagMs ?? 10_000;
/** This process's slot of the tap's journal: how far the recording holds the spool (tap-journal.ts). */
const journal = data.journal ? JournalSlot.open(data.journal, 'indexer', false) : undefined;

/**
 * The tap's time as far as the spool is read (a correlator grace period never expires because indexing ran late), the wall
 * clock once caught up, and the tap's close time once closing.
 */
class SpoolClock implements Clock {
  latest = 0;
  caughtUp = true;
  frozenAt: number | undefined;
  constructor(private readonly wall: Clock) {}
  nowUs(): number {
    if (this.frozenAt !== undefined) return this.frozenAt;
    return this.caughtUp ? Math.max(this.wall.nowUs(), this.latest) : this.latest;
  }
}

const send = (m: FromIndexer) => {
  // The callback takes a failure (the tap went away meanwhile: EPIPE) instead of an 'error' event that would crash this process.
  if (process.connected) process.send!(m, undefined, {}, () => {});
};
const logger = createLogger(data.logLevel);
const wall = clockFromOrigin(data.clockOrigin);
const clock = new SpoolClock(wall);
const pipeline = new Pipeline({ clock, logger, maxLineBytes: data.maxLineBytes });
const reader = new SpoolReader(SPOOL_FD, Buffer.from(data.key, 'hex'), data.capacity);
let end = 0;
let draining = false;
/** When to index (performance.now() time). */
const schedule = new IndexSchedule({ quietMs: QUIET_MS, maxLagMs, sliceMs: SLICE_MS });
/** The tap closed the recording (at `endedUs`), or went away without (the end is then the last traffic indexed). */
let closing: { endedUs?: number } | undefined;
/** The spool could not be read back: nothing after `reader.position` can be indexed. */
let broken = false;
/** The tap went away without closing: the spool is read as far as whole records go, past what it said (SpoolReader.recover). */
let recovering = false;

// The recording starts with the tap (its clock's origin), not when this process opened it: earlier traffic is spooled.
clock.frozenAt = data.clockOrigin.epochUs;
const sinks = await attachSinks(pipeline, { ...data.sinks, logger, onFatal: (err) => send({ type: 'fatal', message: err.message }) }).catch((err: unknown) => {
  send({ type: 'failed', ...toWireError(err, 'MCPTAP_INDEXER') });
  return undefined;
});
clock.frozenAt = undefined;
if (!sinks) {
  journal?.close(false);
  await pipeline.close();
  finished = true;
  process.stdin.destroy();
  if (process.connected) process.disconnect();
  else process.exit(1);
} else {
  onDisconnect = tapGone;
  send({ type: 'ready' });
  onMessage = (m: ToIndexer) => {
    if (m.type === 'start' || m.type === 'stop-yielding') return;
    if (!broken) end = Math.max(end, m.end);
    schedule.spooled(performance.now(), end > reader.position, m.type === 'spooled' && m.waitingForRoom === true);
    if (m.type === 'close') {
      restorePriority();
      closing = { endedUs: m.endedUs };
      schedule.close();
      if (m.incomplete) sinks.markIncomplete(m.incomplete);
    }
    drain();
  };
  for (const m of early.splice(0)) onMessage(m);
  if (tapLeftEarly) tapGone();
}

/**
 * The tap's messages on stdin, [u32 length][v8-serialized], `start` first: a pipe keeps what a killed tap wrote, where
 * unread IPC is lost. Resolves with `start`; the others go to `onMessage`. The pipe's end: the tap is gone.
 */
function readStart(): Promise<IndexerStart> {
  return new Promise((resolve) => {
    let got: Buffer = Buffer.alloc(0);
    let started = false;
    process.stdin.on('data', (chunk: Buffer) => {
      got = got.length ? Buffer.concat([got, chunk]) : chunk;
      while (got.length >= 4 && got.length >= 4 + got.readUInt32LE(0)) {
        const m = deserialize(got.subarray(4, 4 + got.readUInt32LE(0))) as ToIndexer;
        got = got.subarray(4 + got.readUInt32LE(0));
        if (m.type === 'stop-yielding') {
          stoppedYielding = true;
          restorePriority();
        } else if (m.type !== 'start') onMessage(m);
        else if (!started) {
          started = true;
          startRead = true;
          // Set here, not after the await: the pipe's end may be said before the awaiting code runs.
          onDisconnect = () => {
            tapLeftEarly = true;
            restorePriority();
          };
          // The pipe is only watched: it keeps nothing alive (the IPC channel does, while the tap is there).
          (process.stdin as unknown as { unref?: () => void }).unref?.();
          resolve(m);
        }
      }
    });
    process.stdin.on('end', () => onDisconnect());
    process.stdin.on('error', () => onDisconnect());
  });
}

/**
 * The tap is gone: the spool outlives it here (this process holds the descriptor), so index it and end the recording,
 * marked incomplete unless the tap had closed it first.
 */
function tapGone(): void {
  if (finished) return;
  restorePriority();
  if (!closing) {
    sinks!.markIncomplete('the tap ended without closing the recording (killed or crashed): traffic after the last that reached its indexer is missing');
    closing = {};
    recovering = true;
  }
  schedule.close();
  drain();
}

function drain(): void {
  if (draining) return;
  draining = true;
  clock.caughtUp = false;
  setImmediate(() => void slice());
}

async function slice(): Promise<void> {
  const wait = schedule.holdOff(performance.now());
  if (wait > 0) {
    setTimeout(() => void slice(), wait);
    return;
  }
  const until = schedule.sliceEnd(performance.now());
  /** Everything readable was read (not stopped by the slice's end). */
  let exhausted = false;
  try {
    for (;;) {
      const rec = broken ? undefined : reader.position < end ? reader.next(end) : recovering ? reader.recover() : undefined;
      if (!rec) {
        exhausted = true;
        break;
      }
      const t = applyWireOps(pipeline, decodeWireOps(rec.ops), rec.bytes);
      if (t > clock.latest) clock.latest = t;
      if (performance.now() >= until) break;
    }
    await Promise.all(pipeline.sinks().map((s) => s.flush()));
  } catch (err) {
    // The spool could not be read back (an I/O error): nothing after this point can be indexed.
    logger.error(`recording indexer cannot read the spool: ${(err as Error).message}; the recording ends here`);
    broken = true;
    end = reader.position;
  }
  send({ type: 'indexed', position: reader.position });
  journal?.write(`${selfFields('indexer')} indexed ${reader.position}`);
  if (!exhausted || (!broken && reader.position < end)) {
    setImmediate(() => void slice());
    return;
  }
  draining = false;
  schedule.caughtUp();
  clock.caughtUp = true;
  if (closing) await finish(closing.endedUs ?? (clock.latest > 0 ? clock.latest : wall.nowUs()));
}

async function finish(endedUs: number): Promise<void> {
  clock.frozenAt = endedUs;
  const lines = await sinks!.close().catch((err: Error) => [`closing the recording failed: ${err.message}`]);
  send({ type: 'closed', lines, dropped: sinks!.recorderDropped() });
  journal?.close(true); // the recording is ended: nothing for a later command to say
  finished = true;
  process.stdin.destroy();
  if (process.connected) process.disconnect();
  else process.exit(0);
}
