/**
 * The pipeline on its own thread: the tap's thread only forwards bytes and hands what it saw to a
 * worker, where decoding, correlation and every sink (SQLite, OpenTelemetry) run. This is what
 * "taps only move bytes" costs at its least: per chunk one copy of its bytes into the batch buffer
 * (batch-buffers.ts), per flush (every few ms) one postMessage.
 *
 * Invariants:
 * - Nothing here blocks or throws into the tap. Everything the tap hands over is queued in order
 *   and posted within `flushDelayMs` (or at once past {@link FLUSH_BYTES}).
 * - Bounded: bytes posted and not yet acknowledged plus bytes queued never pass `maxQueueBytes`.
 *   Past it, chunks and message bodies are dropped and counted (connection and stream events are
 *   never dropped: they are small and keep the correlator's picture whole); when a stream is
 *   accepted again, the worker is told of the gap first (a `dropped` anomaly, and a stdio
 *   decoder that resumes at the next line boundary).
 * - A worker that dies is said once; from then on everything is dropped and counted, and forwarding
 *   goes on untouched.
 * - Until the worker is up (and, recording, has taken the spool) messages wait in order in the
 *   start-up queue (start-up-queue.ts); the worker is spawned by pipeline-worker-spawn.ts.
 */
import type { Worker } from 'node:worker_threads';
import type { LongStreamEdge, StreamEnd } from '../model/events.js';
import type { AnomalyKind, ConnectionInfo } from '../model/events.js';
import type { Chunk } from '../model/frame.js';
import type { FrameOrigin } from '../model/frame.js';
import { fromWireError, McptapError } from '../errors.js';
import { systemClock, type Clock } from '../util/clock.js';
import { checkedHeaders, type AnomalyExtra, type ConnectionClose, type PipelineInput, type RequestHeaders } from './pipeline-input.js';
import { BatchBuffers } from './batch-buffers.js';
import { WireOpWriter } from './wire-codec.js';
import { SidePathDrops } from './side-path-drops.js';
import type { TapSpool } from './indexer-relay.js';
import { openThreadSpool } from './thread-spool.js';
import { StartUpQueue } from './start-up-queue.js';
import { Op, type FromWorker, type ToWorker, type WireOp } from './worker-wire.js';
import { spawnPipelineWorker, type PipelineThreadOptions } from './pipeline-worker-spawn.js';

export type { PipelineThreadOptions };

/** Queued bytes past this are posted at once rather than after the flush delay. */
const FLUSH_BYTES = 4 * 1024 * 1024;
/** What an op costs the queue besides its bytes (a rough figure for the bound). */
const OP_OVERHEAD = 64;

export class PipelineThread implements PipelineInput {
  readonly clock: Clock = systemClock;
  /** The worker thread, once booted. */
  private worker: Worker | undefined;
  private bootTimer: NodeJS.Timeout | undefined;
  private bootImmediate = false;
  /** The Prometheus scrape URL, once the thread serves one (see `ready`). */
  metricsUrl: string | undefined;
  /** Resolves once the sinks are open; rejects (MCPTAP_*) when they cannot be. */
  readonly ready: Promise<void>;
  /**
   * Resolves once closing has handed everything recorded to the indexer process (which completes the
   * recording if this process exits now), or there is nothing to hand over (no recording, or it died).
   */
  readonly handedOver: Promise<void>;
  private handOver!: () => void;
  private readonly settleReady: { resolve: () => void; reject: (err: McptapError) => void };
  /** The queued ops, encoded as they come (wire-codec.ts). */
  private readonly ops: WireOpWriter;
  private opCount = 0;
  /** The batch being filled: the queued ops' bytes, in a buffer reused once the worker hands it back. */
  private readonly batch = new BatchBuffers();
  private scheduled: NodeJS.Timeout | undefined;
  private readonly flushDelayMs: number;
  private seq = 0;
  private readonly inFlight = new Map<number, number>();
  private inFlightBytes = 0;
  private readonly maxQueueBytes: number;
  private readonly loss = new SidePathDrops();
  /** What the worker could not spool (said at its close). */
  private spoolLostBytes = 0;
  private dead: string | undefined;
  private closing: Promise<string[]> | undefined;
  private closedWith: ((lines: string[]) => void) | undefined;
  private gotClosed = false;
  /** The thread answered `ready` or `failed` (or died first). */
  private started = false;
  private fatalSent = false;
  /**
   * With a recording: its spool and indexer, made at once (indexer-relay.ts). This thread appends
   * to the spool until the worker is up and takes it, so a kill in the first moments loses no more
   * than one flush delay of traffic.
   */
  private readonly tapSpool: TapSpool | undefined;
  /** What waits for the worker (and, with a recording, for it to take the spool). */
  private readonly startUp: StartUpQueue;
  /** The worker decodes live telemetry: it needs the batches this thread spooled too. */
  private readonly liveInWorker: boolean;

  /** Starts the thread and waits until its sinks are open: a recording that cannot be opened fails here. */
  static async start(opts: PipelineThreadOptions): Promise<PipelineThread> {
    const thread = PipelineThread.open(opts);
    await thread.ready;
    return thread;
  }

  /**
   * Starts the thread and returns at once: what the tap hands over meanwhile waits in the bounded
   * queue (and in the thread's port) until the sinks are up. Sinks that fail to open are said once,
   * as the thread's death; `ready` rejects with the reason.
   */
  static open(opts: PipelineThreadOptions): PipelineThread {
    const thread = new PipelineThread(opts);
    if (opts.bootDeadlineMs === undefined) thread.boot();
    else {
      thread.bootTimer = setTimeout(() => thread.boot(), opts.bootDeadlineMs);
      thread.bootTimer.unref();
    }
    return thread;
  }

  private constructor(private opts: PipelineThreadOptions) {
    let settle: { resolve: () => void; reject: (err: McptapError) => void } | undefined;
    this.ready = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
    // Nobody may wait for it (a tap that does not): a failure is said through die() all the same.
    this.ready.catch(() => {});
    this.settleReady = settle!;
    // The process may exit once this resolves: an indexer that died unheard is replaced first.
    this.handedOver = new Promise<void>((resolve) => (this.handOver = () => (this.checkIndexer(), resolve())));
    // Without a recording only telemetry reads request headers, and only trace context.
    this.ops = new WireOpWriter(opts.recording ? 'all' : 'trace');
    this.maxQueueBytes = opts.maxQueueBytes ?? 64 * 1024 * 1024;
    this.flushDelayMs = opts.flushDelayMs ?? 5;
    this.liveInWorker = opts.sinks.telemetry !== undefined;
    ({ opts: this.opts, tapSpool: this.tapSpool } = openThreadSpool(opts));
    this.startUp = new StartUpQueue(this.tapSpool);
  }

  /** The server answered: boot once the answer is on its way (not inside the tap's forwarding turn). */
  private bootSoon(): void {
    if (this.bootImmediate) return;
    this.bootImmediate = true;
    setImmediate(() => this.boot());
  }

  /** Starts the thread (once): at once, at the server's first answer, or at the boot deadline. */
  private boot(): void {
    if (this.worker || this.dead) return;
    clearTimeout(this.bootTimer);
    const worker = spawnPipelineWorker(this.opts);
    this.worker = worker;
    worker.on('message', (m: FromWorker) => this.onMessage(m));
    worker.on('error', (err) => {
      if (!this.started) this.failStart(new McptapError('MCPTAP_PIPELINE_WORKER', `cannot start the pipeline thread: ${err.message}`));
      else this.die(`pipeline thread failed: ${err.message}`);
    });
    worker.on('exit', (code) => {
      if (!this.started) this.failStart(new McptapError('MCPTAP_PIPELINE_WORKER', `the pipeline thread exited (code ${code}) before its sinks were open`));
      else if (!this.gotClosed) this.die(`pipeline thread exited (code ${code})`);
    });
    this.drainStartUp();
    // Referenced until the sinks are up (a caller may be waiting for `ready`); then only while batches are in flight.
    this.flush();
  }

  // ---- PipelineInput -------------------------------------------------------------------------

  openConnection(info: ConnectionInfo, timeUs = this.clock.nowUs()): void {
    this.queue([Op.Open, info, timeUs], undefined);
  }

  pushChunk(c: Chunk): void {
    if (!this.worker && c.direction === 's2c' && c.channel !== 'stderr') this.bootSoon();
    if (!this.room(c.bytes.length)) {
      this.loss.droppedChunk(c);
      this.lostWhileRequired();
      return;
    }
    const gap = this.loss.chunkGap(c);
    if (gap) this.queue(gap, undefined);
    this.queue([Op.Chunk, c.connectionId, c.direction, c.channel, c.timeUs, c.bytes.length], c.bytes);
    if (this.startUp.spooling && c.direction === 's2c') this.flush();
  }

  pushMessage(origin: FrameOrigin, raw: Buffer): void {
    if (!this.worker && origin.direction === 's2c') this.bootSoon();
    if (this.admitMessage(origin, raw)) this.queue([Op.Message, origin, raw.length], raw);
    // Until the worker has the spool, an answer is spooled in the turn it was forwarded in: on a starved
    // machine a flush timer can fire hundreds of ms late, and a kill meanwhile would lose it.
    if (this.startUp.spooling && origin.direction === 's2c') this.flush();
  }

  pushRequest(origin: FrameOrigin, raw: Buffer, headers: RequestHeaders): void {
    if (this.admitMessage(origin, raw)) this.queue([Op.Request, origin, raw.length, checkedHeaders(headers)], raw);
  }

  endStream(connectionId: string, streamId: string, end: StreamEnd): void {
    this.queue([Op.EndStream, connectionId, streamId, end], undefined);
  }

  longStream(connectionId: string, streamId: string, edge: LongStreamEdge): void {
    this.queue([Op.LongStream, connectionId, streamId, edge], undefined);
  }

  anomaly(kind: AnomalyKind, connectionId: string, detail: string, extra: AnomalyExtra = {}): void {
    this.queue([Op.Anomaly, kind, connectionId, detail, { ...extra, timeUs: extra.timeUs ?? this.clock.nowUs() }], undefined);
  }

  closeConnection(connectionId: string, close: ConnectionClose): void {
    this.queue([Op.Close, connectionId, { ...close, timeUs: close.timeUs ?? this.clock.nowUs() }], undefined);
  }

  /** Forwarded traffic the recording lacks: bytes dropped on the side path, not spooled, or never indexed; events the recorder dropped. */
  get recordingLoss(): { bytes: number; events: number } {
    const { bytes, events } = this.tapSpool?.lost() ?? { bytes: 0, events: 0 };
    return this.tapSpool ? { bytes: this.loss.dropped.bytes + this.spoolLostBytes + bytes, events } : { bytes: 0, events: 0 };
  }

  /** Before an exit that does not wait for the recording: an indexer that died unheard is replaced now (indexer-relay.ts). */
  readonly checkIndexer = (): void => this.tapSpool?.checkIndexer();

  /** What was dropped so far (side path full, or the worker gone). */
  get droppedCounts(): { chunks: number; messages: number; bytes: number } {
    return { ...this.loss.dropped };
  }

  /**
   * Posts what is queued, lets the worker finish every batch, close its sinks and exit. Resolves
   * with the lines worth telling the user (the sinks' drops, this side's drops). Idempotent.
   */
  close(incomplete?: string): Promise<string[]> {
    this.closing ??= new Promise<string[]>((resolve) => {
      this.tapSpool?.stopYielding();
      this.boot();
      this.flush();
      this.closedWith = resolve;
      if (this.dead) return resolve(this.loss.lines(this.dead));
      this.worker!.ref();
      // Behind whatever waits for the worker to take the spool (it closes the recording).
      this.startUp.send({ type: 'close', ...(incomplete ? { incomplete } : {}) }, true, this.postRef);
    });
    return this.closing;
  }

  // ---- internals -----------------------------------------------------------------------------

  private room(bytes: number): boolean {
    if (this.dead || this.closedWith) return false;
    return this.inFlightBytes + this.batch.length + bytes + OP_OVERHEAD <= this.maxQueueBytes;
  }

  /** --require-recording: the first input the recording will miss stops the tap. */
  private lostWhileRequired(): void {
    if (!this.opts.recording?.required || this.fatalSent) return;
    this.fatalSent = true;
    this.opts.onFatal?.(new Error(this.dead ? `the recording stopped: ${this.dead}` : "the tap's side path is full: traffic would pass unrecorded"));
  }

  /** Message bodies are dropped whole; the next one accepted on the connection first reports the loss. */
  private admitMessage(origin: FrameOrigin, raw: Buffer): boolean {
    if (!this.room(raw.length)) {
      this.loss.droppedMessage(origin, raw);
      this.lostWhileRequired();
      return false;
    }
    const gap = this.loss.messageGap(origin);
    if (gap) this.queue(gap, undefined);
    return true;
  }

  private queue(op: WireOp, bytes: Buffer | undefined): void {
    if (this.dead || this.closedWith) {
      if (bytes) this.loss.droppedBytes(bytes.length);
      return;
    }
    this.ops.write(op);
    this.opCount++;
    if (bytes && bytes.length > 0) {
      this.batch.append(bytes);
    }
    if (this.batch.length >= FLUSH_BYTES) this.flush();
    // Not booted yet and nothing to spool here: boot() flushes what waits; no timer until then.
    else if (!this.scheduled && (this.worker || this.startUp.spooling)) {
      this.scheduled = setTimeout(this.flushTick, this.flushDelayMs);
      // Posting is owed only to a caller that will close() (which flushes): never keep the process up for it.
      this.scheduled.unref();
    }
  }

  private readonly flushTick = (): void => {
    this.scheduled = undefined;
    this.flush();
  };

  private flush(): void {
    if (this.scheduled) {
      clearTimeout(this.scheduled);
      this.scheduled = undefined;
    }
    const worker = this.worker;
    // Not booted yet, nothing spooled here: the batch grows (within the queue's bound) until it is.
    if (this.opCount === 0 || this.dead || (!worker && !this.startUp.spooling)) return;
    // One buffer: the ops' bytes, then the ops themselves (binary, wire-codec.ts; not a structured
    // clone of op objects, which walks and rebuilds a graph of small objects, nor JSON).
    const at = this.batch.length;
    const buf = this.batch.finish(this.ops.length);
    const opsLength = this.ops.take(buf, at);
    const seq = ++this.seq;
    const cost = at + this.opCount * OP_OVERHEAD;
    const msg: ToWorker = {
      type: 'batch',
      seq,
      bytes: buf.buffer as ArrayBuffer,
      length: at,
      opsLength,
      droppedTotal: this.loss.dropped.chunks + this.loss.dropped.messages,
    };
    this.opCount = 0;
    if (this.startUp.spool(buf.subarray(at, at + opsLength), buf.subarray(0, at))) {
      msg.spooled = true;
      // In the recording's hands already; without live telemetry the worker has nothing to do with it.
      if (!this.liveInWorker) return this.batch.handedBack(msg.bytes);
    }
    this.inFlight.set(seq, cost);
    this.inFlightBytes += cost;
    this.startUp.send(msg, worker !== undefined, this.postRef);
  }

  /** Posts what waited for the worker and may go now. */
  private drainStartUp(): void {
    if (this.worker && !this.dead && this.startUp.drain((m, t) => this.post(m, t))) this.worker.ref();
  }

  /** Posts, keeping the worker referenced while anything is in its hands (unref'd on the last ack). */
  private readonly postRef = (msg: ToWorker, transfer: ArrayBuffer[] = []): void => {
    this.worker!.ref();
    this.post(msg, transfer);
  };

  private post(msg: ToWorker, transfer: ArrayBuffer[] = []): void {
    try {
      this.worker!.postMessage(msg, transfer);
    } catch (err) {
      this.die(`cannot reach the pipeline thread: ${(err as Error).message}`);
    }
  }

  private onMessage(m: FromWorker): void {
    if (m.type === 'ready') {
      this.started = true;
      this.metricsUrl = m.metricsUrl;
      if (this.inFlight.size === 0 && !this.closedWith) this.worker!.unref();
      this.settleReady.resolve();
    } else if (m.type === 'failed') {
      this.failStart(fromWireError(m, 'MCPTAP_PIPELINE_WORKER'));
    } else if (m.type === 'log') {
      process.stderr.write(m.line);
    } else if (m.type === 'ack') {
      if (m.buffer) this.batch.handedBack(m.buffer);
      this.inFlightBytes -= this.inFlight.get(m.seq) ?? 0;
      this.inFlight.delete(m.seq);
      if (this.inFlight.size === 0 && !this.closedWith && this.started) this.worker!.unref();
    } else if (m.type === 'fatal') {
      this.opts.onFatal?.(new Error(m.message));
    } else if (m.type === 'take-spool') {
      const spool = this.dead ? undefined : this.startUp.handOver((event) => this.post({ type: 'indexer', event }));
      if (spool) this.post(spool);
      this.drainStartUp();
    } else if (m.type === 'indexer') {
      this.tapSpool?.call(m.call);
    } else if (m.type === 'handed-over') {
      this.handOver();
    } else if (m.type === 'closed') {
      this.handOver();
      this.gotClosed = true;
      this.spoolLostBytes = m.lostBytes;
      this.closedWith?.([...m.lines, ...this.loss.lines(this.dead)]);
      // All that matters is done: the recording is complete, and telemetry was flushed or its close
      // deadline passed. Exports the deadline abandoned (an OTLP endpoint that is down retries for
      // seconds) must not keep the process alive.
      void this.worker?.terminate();
    }
  }

  /** The sinks could not be opened: `ready` rejects, and whoever waits for it says why (this thread says nothing). */
  private failStart(err: McptapError): void {
    if (this.dead) return;
    this.started = true;
    this.die(err.message, false);
    this.settleReady.reject(err);
    void this.worker?.terminate();
  }

  private die(why: string, say = true): void {
    if (this.dead) return;
    this.dead = why;
    this.handOver();
    if (say) this.opts.logger.error(`${why}; traffic is still forwarded, but no longer observed (drops counted)`);
    this.ops.reset();
    this.opCount = 0;
    this.batch.drop();
    // The indexer completes the recording from the spool, as when the tap is killed.
    this.startUp.abandon();
    if (this.closedWith) this.closedWith(this.loss.lines(this.dead));
  }
}
