/**
 * The tap's side path, on the tap's thread: what the tap saw is batched (bytes copied once, ops
 * encoded by wire-codec.ts) and handed on every few ms, in order, to the recording's spool
 * (recording.ts) and then to the worker, where live telemetry decodes it (live-worker.ts).
 * Invariants: nothing here blocks or throws into the tap. Bytes not yet spooled or acknowledged never
 * pass `maxQueueBytes`: past it chunks and bodies are dropped and counted (never connection and
 * stream events), and a stream's gap is said before it resumes. A worker that dies is said once; the
 * recording goes on (without one, everything is dropped and counted from then on).
 */
import type { LongStreamEdge, StreamEnd, AnomalyKind, ConnectionInfo } from '../model/events.js';
import type { Chunk, FrameOrigin } from '../model/frame.js';
import { systemClock, type Clock } from '../util/clock.js';
import { telemetryEnabled } from '../telemetry/telemetry-config.js';
import { checkedHeaders, type AnomalyExtra, type ConnectionClose, type PipelineInput, type RequestHeaders } from './pipeline-input.js';
import { BatchBuffers } from './batch-buffers.js';
import { WireOpWriter } from './wire-codec.js';
import { SidePathDrops } from './side-path-drops.js';
import { SpooledRecording } from './recording.js';
import { Op, type WireOp } from './worker-wire.js';
import { LiveWorker, type Batch, type SidePathOptions } from './live-worker.js';

/** How long ops wait to be spooled and posted (ms); each op carries the time the tap saw its bytes, so nothing is lost by waiting. */
const FLUSH_DELAY_MS = 5;
/** Queued bytes past this are flushed at once rather than after the flush delay. */
const FLUSH_BYTES = 4 * 1024 * 1024;
/** What an op costs the queue besides its bytes (a rough figure for the bound). */
const OP_OVERHEAD = 64;

export class SidePath implements PipelineInput {
  readonly clock: Clock = systemClock;
  /** The recording's spool and indexer, made at once: a kill from the first moment loses at most a flush delay of traffic. */
  private readonly recording: SpooledRecording | undefined;
  /** Live telemetry's thread, when telemetry runs there. */
  private readonly worker: LiveWorker | undefined;
  /** Resolves once the sinks are open; rejects (MCPTAP_*) when they cannot be. */
  readonly ready: Promise<void>;
  private closing: Promise<string[]> | undefined;
  /** The queued ops, encoded as they come (wire-codec.ts). */
  private readonly ops: WireOpWriter;
  private opCount = 0;
  /** The batch being filled: the queued ops' bytes, in a buffer reused once the spool has it. */
  private readonly batch = new BatchBuffers();
  private scheduled: NodeJS.Timeout | undefined;
  private lastFlushAt = -Infinity;
  private seq = 0;
  /** What each batch not yet spooled or acknowledged costs the bound, by its seq. */
  private readonly inFlight = new Map<number, number>();
  private inFlightBytes = 0;
  private readonly maxQueueBytes: number;
  private readonly loss = new SidePathDrops();
  private fatalSent = false;

  /** Starts and waits until the sinks are open: a recording that cannot be opened fails here. */
  static async start(opts: SidePathOptions): Promise<SidePath> {
    const side = new SidePath(opts);
    await side.ready;
    return side;
  }

  /**
   * Opens the recording (throws when its spool or indexer cannot be made) and returns at once: what
   * the tap hands over meanwhile waits in the bounded queue until the sinks are up. Sinks that fail
   * to open make `ready` reject with the reason.
   */
  constructor(private readonly opts: SidePathOptions) {
    // Without a recording only telemetry reads request headers, and only trace context.
    this.ops = new WireOpWriter(opts.recording ? 'all' : 'trace');
    this.maxQueueBytes = opts.maxQueueBytes ?? 64 * 1024 * 1024;
    this.recording = opts.recording ? SpooledRecording.open({ ...opts, recording: opts.recording }) : undefined;
    const live = opts.sinks.telemetry !== undefined && telemetryEnabled(opts.sinks.telemetry);
    this.worker = live ? new LiveWorker(opts, { settled: (seq) => this.settle(seq), died: () => this.workerDied() }) : undefined;
    this.ready = Promise.all([this.recording?.ready, this.worker?.ready]).then(() => {});
    // Nobody may wait for it (a tap that does not): a failure is said all the same.
    this.ready.catch(() => {});
  }

  /** Resolves once closing has handed everything recorded to the indexer process, or there is nothing to hand over. */
  get handedOver(): Promise<void> {
    return this.recording?.handedOver ?? Promise.resolve();
  }

  /** The Prometheus scrape URL, once the worker serves one (see `ready`). */
  get metricsUrl(): string | undefined {
    return this.worker?.metricsUrl;
  }

  openConnection(info: ConnectionInfo, timeUs = this.clock.nowUs()): void {
    this.queue([Op.Open, info, timeUs], undefined);
  }

  pushChunk(c: Chunk): void {
    const answer = c.direction === 's2c' && c.channel !== 'stderr';
    if (answer) this.worker?.bootSoon();
    if (!this.room(c.bytes.length)) {
      this.loss.droppedChunk(c);
      this.lostWhileRequired();
      return;
    }
    const gap = this.loss.chunkGap(c);
    if (gap) this.queue(gap, undefined);
    this.queue([Op.Chunk, c.connectionId, c.direction, c.channel, c.timeUs, c.bytes.length], c.bytes);
    if (answer) this.flushIfDue();
  }

  pushMessage(origin: FrameOrigin, raw: Buffer): void {
    if (origin.direction === 's2c') this.worker?.bootSoon();
    if (this.admitMessage(origin, raw)) this.queue([Op.Message, origin, raw.length], raw);
    if (origin.direction === 's2c') this.flushIfDue();
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
    if (!this.recording) return { bytes: 0, events: 0 };
    const { bytes, events } = this.recording.lost();
    return { bytes: this.loss.dropped.bytes + bytes, events };
  }

  /** Right before an exit on a signal: a recording indexer that died unheard or still loads is replaced now. */
  readonly checkIndexer = (): void => this.recording?.checkIndexer();

  /** What was dropped so far (side path full, or nothing left to take it). */
  get droppedCounts(): { chunks: number; messages: number; bytes: number } {
    return { ...this.loss.dropped };
  }

  /**
   * Spools what is queued and has the recording completed; lets the worker finish every batch,
   * close its sinks and exit. Resolves with the lines worth telling the user. Idempotent.
   */
  close(incomplete?: string): Promise<string[]> {
    this.closing ??= this.closeNow(incomplete);
    return this.closing;
  }

  private async closeNow(incomplete: string | undefined): Promise<string[]> {
    this.flush();
    const recorded = this.recording?.close(incomplete) ?? Promise.resolve([]);
    // Behind the last batch, which reaches the worker once it is in the spool.
    const worker = this.worker;
    const live = worker ? (this.recording?.drained() ?? Promise.resolve()).then(() => worker.close()) : Promise.resolve([]);
    const [a, b] = await Promise.all([recorded, live]);
    return [...a, ...b, ...this.loss.lines(this.recording ? undefined : this.worker?.dead)];
  }

  /** Nothing left to take more (closing, or the worker gone without a recording): drop. */
  private get shut(): boolean {
    return this.closing !== undefined || (!this.recording && this.worker?.dead !== undefined);
  }

  private room(bytes: number): boolean {
    if (this.shut) return false;
    return this.inFlightBytes + this.batch.length + bytes + OP_OVERHEAD <= this.maxQueueBytes;
  }

  /** --require-recording: the first input the recording will miss stops the tap. */
  private lostWhileRequired(): void {
    if (!this.opts.recording?.required || this.fatalSent) return;
    this.fatalSent = true;
    this.opts.onFatal?.(new Error("the tap's side path is full: traffic would pass unrecorded"));
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
    if (this.shut) {
      if (bytes) this.loss.droppedBytes(bytes.length);
      return;
    }
    this.ops.write(op);
    this.opCount++;
    if (bytes && bytes.length > 0) this.batch.append(bytes);
    if (this.batch.length >= FLUSH_BYTES) this.flush();
    else if (!this.scheduled) {
      this.scheduled = setTimeout(this.flushTick, FLUSH_DELAY_MS);
      // Owed only to a caller that will close() (which flushes): never keep the process up for it.
      this.scheduled.unref();
    }
  }

  private readonly flushTick = (): void => {
    this.scheduled = undefined;
    this.flush();
  };

  /**
   * An answer is spooled in the turn it was forwarded in when the flush delay has passed since the
   * last flush: on a starved machine a timer can fire hundreds of ms late, and a kill meanwhile
   * would lose the answer.
   */
  private flushIfDue(): void {
    if (this.recording && performance.now() - this.lastFlushAt >= FLUSH_DELAY_MS) this.flush();
  }

  private flush(): void {
    if (this.scheduled) {
      clearTimeout(this.scheduled);
      this.scheduled = undefined;
    }
    if (this.opCount === 0 || (!this.recording && this.worker?.dead)) return;
    this.lastFlushAt = performance.now();
    // One buffer: the ops' bytes, then the ops themselves (binary, wire-codec.ts; not a structured
    // clone of op objects, which walks and rebuilds a graph of small objects, nor JSON).
    const at = this.batch.length;
    const buf = this.batch.finish(this.ops.length);
    const opsLength = this.ops.take(buf, at);
    const seq = ++this.seq;
    const cost = at + this.opCount * OP_OVERHEAD;
    const droppedTotal = this.loss.dropped.chunks + this.loss.dropped.messages;
    const msg: Batch = { type: 'batch', seq, bytes: buf.buffer as ArrayBuffer, length: at, opsLength, droppedTotal };
    this.opCount = 0;
    this.inFlight.set(seq, cost);
    this.inFlightBytes += cost;
    if (this.recording) this.recording.add(buf.subarray(at, at + opsLength), buf.subarray(0, at), () => this.spooled(msg));
    else this.worker!.send(msg);
  }

  /** A batch is in the spool: on to live telemetry, or its buffer back for reuse. */
  private spooled(msg: Batch): void {
    if (this.worker && !this.worker.dead) return this.worker.send(msg);
    this.batch.handedBack(msg.bytes);
    this.settle(msg.seq);
  }

  /** A batch is out of this side's hands: its cost leaves the bound. */
  private settle(seq: number): void {
    this.inFlightBytes -= this.inFlight.get(seq) ?? 0;
    this.inFlight.delete(seq);
  }

  /** Without a recording nothing takes the side path's traffic any more: what is queued goes. */
  private workerDied(): void {
    if (this.recording) return;
    this.ops.reset();
    this.opCount = 0;
    this.batch.drop();
  }
}
