/**
 * The recording's spool and indexer from the tap's first moment. The tap's thread creates the
 * spool and spawns the indexer process at start-up ({@link TapSpool}), and appends what it forwards
 * to the spool itself until the pipeline worker, which boots only once the server has answered
 * (docs/performance.md, start-up), takes the spool over. A tap killed at any moment from then on
 * leaves its traffic to the indexer, which completes the recording (docs/reliability.md, crashes).
 *
 * The indexer stays the tap's thread's child: the worker talks to it through that thread
 * ({@link RelayedIndexer}, relaying {@link IndexerCall}s one way and {@link IndexerEvent}s the other).
 * Spool notices are spaced by the worker's side (SpooledNotices), so the tap's thread handles one
 * relayed message per {@link SPOOLED_EVERY_MS} at most, plus the indexer's progress.
 *
 * Invariants: the spool is written by one thread at a time, in order: the tap's until
 * {@link TapSpool.handOver}, the worker's after it (from where the tap's stopped), and the descriptor
 * is closed by the worker. Whatever the tap's thread could not spool (the ring full, a failed write)
 * and everything after it is left for the worker, which spools it in order.
 */
import { dirname } from 'node:path';
import { fromWireError, McptapError, toWireError } from '../errors.js';
import type { ClockOrigin } from '../util/clock.js';
import type { Logger, LogLevel } from '../util/logger.js';
import { IndexerState, RecordingIndexer, type IndexerSinkOptions } from './recording-indexer.js';
import type { RecordingOptions } from './recording-options.js';
import { SpoolWriter, spoolPlace, type SpoolHandover } from './spool.js';
import type { IndexerCall, IndexerEvent } from './worker-wire.js';

export interface TapSpoolOptions {
  recording: RecordingOptions;
  /** The recorder's settings (telemetry stays live, in the pipeline worker). */
  sinks: Omit<IndexerSinkOptions, 'record' | 'requireRecording' | 'lockWaitMs'>;
  logLevel: LogLevel;
  clockOrigin: ClockOrigin;
  maxLineBytes?: number;
  logger: Logger;
  /** The recording failed under `required`. */
  onFatal: (err: Error) => void;
}

/** The tap's thread's side: the spool until the worker takes it, and the indexer process throughout. */
export class TapSpool {
  private spool: SpoolWriter | undefined;
  /** False once a batch could not be spooled here: the worker spools it and all after it. */
  private spooling = true;
  private toWorker: ((e: IndexerEvent) => void) | undefined;
  private readonly indexer: RecordingIndexer;

  /** Creates the spool and spawns the indexer; throws MCPTAP_RECORD_OPEN or MCPTAP_INDEXER when it cannot. */
  static open(o: TapSpoolOptions): TapSpool {
    const { path, spoolBytes, spoolDir } = o.recording;
    const place = spoolPlace(path, spoolBytes, spoolDir);
    let spool: SpoolWriter;
    try {
      spool = new SpoolWriter(path, spoolBytes, place);
    } catch (err) {
      const where = place.dir !== dirname(path) ? ` (its spool goes to ${place.dir}; MCPTAP_SPOOL_DIR picks another place)` : '';
      throw new McptapError('MCPTAP_RECORD_OPEN', `cannot record to ${path}${where}: ${(err as Error).message}`);
    }
    o.logger.debug(`recording spool: ${spoolBytes} bytes at most, ${place.inMemory ? 'in RAM' : 'on disk'} (${place.dir}), encrypted`);
    try {
      return new TapSpool(spool, o);
    } catch (err) {
      spool.close();
      throw new McptapError('MCPTAP_INDEXER', `cannot start the recording indexer: ${(err as Error).message}`);
    }
  }

  private constructor(spool: SpoolWriter, o: TapSpoolOptions) {
    this.spool = spool;
    const rec = o.recording;
    this.indexer = RecordingIndexer.spawn({
      fd: spool.fd,
      key: spool.key,
      capacity: spool.capacity,
      sinks: { ...o.sinks, record: rec.path, requireRecording: rec.required, lockWaitMs: rec.lockWaitMs },
      logLevel: o.logLevel,
      clockOrigin: o.clockOrigin,
      ...(o.maxLineBytes !== undefined ? { maxLineBytes: o.maxLineBytes } : {}),
      // --require-recording must learn at once that recording fails, not after the traffic: no lag.
      maxLagMs: rec.required ? 0 : rec.indexLagMs,
      nice: rec.indexerNice,
      logger: o.logger,
      onIndexed: (position) => this.toWorker?.({ kind: 'indexed', position }),
      onGone: (why) => this.toWorker?.({ kind: 'gone', why }),
      onFatal: o.onFatal,
    });
    // Neither keeps the tap running: whoever waits for the recording keeps the worker referenced.
    this.indexer.unref();
  }

  /** Appends a batch here (before the worker takes over); false when it was not (the worker must spool it, and all after it). */
  append(ops: Buffer, bytes: Buffer): boolean {
    const spool = this.spool;
    if (!this.spooling || !spool) return false;
    try {
      this.spooling = this.indexer.alive && spool.append(ops, bytes, this.indexer.indexed);
    } catch {
      this.spooling = false; // the worker tries again, and counts and says a failure
    }
    if (this.spooling) this.indexer.spooled(spool.end);
    return this.spooling;
  }

  /** The worker takes the spool over: what it needs to write on; the indexer's news go to `post` from now on. */
  handOver(post: (e: IndexerEvent) => void): { handover: SpoolHandover; indexed: number; pid?: number } {
    const handover = this.spool!.handOver();
    this.spool = undefined;
    this.toWorker = post;
    this.indexer.ready.then(
      () => post({ kind: 'ready' }),
      (err: Error) => post({ kind: 'failed', ...toWireError(err, 'MCPTAP_INDEXER') }),
    );
    if (!this.indexer.alive) post({ kind: 'gone', why: 'the recording indexer has stopped' });
    return { handover, indexed: this.indexer.indexed, ...(this.indexer.pid !== undefined ? { pid: this.indexer.pid } : {}) };
  }

  /** What the worker asks of the indexer. */
  call(c: IndexerCall): void {
    if (c.kind === 'spooled') this.indexer.spooledNow(c.end, c.waitingForRoom);
    else if (c.kind === 'abandon') this.indexer.abandon(c.why);
    else void this.indexer.close(c.end, c.endedUs, c.incomplete).then((lines) => this.toWorker?.({ kind: 'closed', lines }));
  }

  /**
   * The tap is closing: the indexer, niced while traffic flowed, may start up at full priority now,
   * before the worker (still starting, perhaps) relays the close.
   */
  stopYielding(): void {
    this.indexer.stopYielding();
  }

  /** Before an exit: an indexer that died unheard (a group signal while it loaded) is replaced now, on the same spool. */
  checkIndexer(): void {
    this.indexer.noticeExit();
  }

  /** Bytes of spooled traffic the recording lacks (the indexer died before it had indexed them), and events its recorder dropped (a full disk). */
  lost(): { bytes: number; events: number } {
    return { bytes: this.indexer.lostBytes(), events: this.indexer.recorderDropped };
  }

  /** The worker is gone without closing: the indexer completes the recording from the spool, as when the tap is killed. */
  release(): void {
    this.spool?.close();
    this.spool = undefined;
    this.indexer.release();
  }
}

/** The worker's side: the indexer as {@link IndexerHandle}, through the tap's thread. */
export class RelayedIndexer extends IndexerState {
  constructor(
    private readonly call: (c: IndexerCall) => void,
    position: number,
    private readonly heard: (position: number) => void,
    /** The indexer's process id (the tap's thread's child). */
    readonly pid: number | undefined,
  ) {
    super(position);
  }

  spooledNow(end: number, waitingForRoom = false): void {
    this.call({ kind: 'spooled', end, waitingForRoom });
  }

  abandon(why: string): void {
    if (this.dead) return;
    this.call({ kind: 'abandon', why });
    this.goneAs(why);
  }

  /** What the indexer said (relayed by the tap's thread). */
  event(e: IndexerEvent): void {
    if (e.kind === 'ready') this.openedAs();
    else if (e.kind === 'failed') this.openedAs(fromWireError(e, 'MCPTAP_INDEXER'));
    else if (e.kind === 'indexed') this.indexedTo(e.position);
    else if (e.kind === 'gone') this.goneAs(e.why);
    else this.closedAs(e.lines);
  }

  protected askClose(end: number, endedUs: number, incomplete: string | undefined): void {
    this.call({ kind: 'close', end, endedUs, ...(incomplete ? { incomplete } : {}) });
  }

  protected onIndexed(position: number): void {
    this.heard(position);
  }
}
