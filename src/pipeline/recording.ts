/**
 * A tap's recording: its spool and indexer process, owned by the tap's thread for the whole run:
 * made before any traffic, written by this thread alone, closed by it. A tap killed at any moment
 * leaves its spool to the indexer, which completes the recording (docs/reliability.md, crashes).
 * Invariants: a batch that does not fit in the ring in front of the indexer waits, with every batch
 * after it, and is retried as the indexer reports progress; each batch's `done` is called once, in
 * order, when it is in the spool or dropped (the indexer gone, a failed write: counted, said once).
 */
import { dirname } from 'node:path';
import { McptapError } from '../errors.js';
import { systemClock, systemClockOrigin } from '../util/clock.js';
import { splitWireBatch } from './apply-wire-ops.js';
import { IndexerStallWatch, processCpuTicks, type IndexerLook } from './indexer-stall.js';
import type { SidePathOptions } from './live-worker.js';
import { RecordingIndexer } from './recording-indexer.js';
import type { RecordingOptions } from './recording-options.js';
import { SpoolWriter, spoolPlace } from './spool.js';
import { decodeWireOps, encodeWireOps } from './wire-codec.js';

/** Once the indexer has caught up, a spool file using more space (disk or RAM) than this is emptied. */
const TRIM_SPOOL_BYTES = 64 * 2 ** 20;

interface Waiting {
  ops: Buffer;
  bytes: Buffer;
  /** Absent on all but the last part of a batch too large for one spool record. */
  done?: () => void;
}

export class SpooledRecording {
  private readonly indexer: RecordingIndexer;
  private readonly waiting: Waiting[] = [];
  private readonly drainedWaiters: (() => void)[] = [];
  private readonly failed = { batches: 0, bytes: 0 };
  private closing: Promise<string[]> | undefined;
  /** Resolves once closing has handed everything to the indexer (which completes the recording if this process exits now, after checkIndexer). */
  readonly handedOver: Promise<void>;
  private handOver!: () => void;

  /** Creates the spool and spawns the indexer; throws MCPTAP_RECORD_OPEN or MCPTAP_INDEXER when it cannot. */
  static open(o: SidePathOptions & { recording: RecordingOptions }): SpooledRecording {
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
      return new SpooledRecording(spool, o);
    } catch (err) {
      spool.close();
      throw new McptapError('MCPTAP_INDEXER', `cannot start the recording indexer: ${(err as Error).message}`);
    }
  }

  private constructor(
    private readonly spool: SpoolWriter,
    private readonly o: SidePathOptions & { recording: RecordingOptions },
  ) {
    const rec = o.recording;
    // The recorder's pipeline says the findings; telemetry stays live, in the worker.
    const { telemetry: _telemetry, check, ...recordOnly } = o.sinks;
    this.indexer = RecordingIndexer.spawn({
      fd: spool.fd,
      key: spool.key,
      capacity: spool.capacity,
      sinks: {
        ...recordOnly,
        ...(check && { check: { ...check, speak: true } }),
        record: rec.path,
        requireRecording: rec.required,
        lockWaitMs: rec.lockWaitMs,
      },
      logLevel: o.logLevel,
      clockOrigin: systemClockOrigin,
      maxLineBytes: o.maxLineBytes,
      // --require-recording must learn at once that recording fails, not after the traffic: no lag.
      maxLagMs: rec.required ? 0 : rec.indexLagMs,
      nice: rec.indexerNice,
      logger: o.logger,
      onIndexed: () => this.spoolWaiting(),
      onFatal: o.onFatal,
    });
    // Referenced until the recording is open (a `required` tap waits for that before anything else
    // holds its event loop); then it does not keep the tap running: close() waits for it.
    const unref = () => this.indexer.unref();
    this.indexer.ready.then(unref, unref);
    this.handedOver = new Promise<void>((resolve) => (this.handOver = resolve));
  }

  /** Resolves once the recording is open; rejects (MCPTAP_*) when it cannot be. */
  get ready(): Promise<void> {
    return this.indexer.ready;
  }

  /** Spools a batch (its encoded ops and their bytes), now or once there is room; `done` when it is in the spool or dropped. */
  add(ops: Buffer, bytes: Buffer, done: () => void): void {
    if (ops.length + bytes.length <= this.spool.maxRecordBytes) this.waiting.push({ ops, bytes, done });
    else {
      // Rare (a spool set smaller than a burst's batch): spooled in parts that fit.
      const parts = splitWireBatch(decodeWireOps(ops), bytes, Math.max(1, this.spool.maxRecordBytes >>> 1));
      parts.forEach((p, i) => this.waiting.push({ ops: encodeWireOps(p.ops), bytes: p.bytes, ...(i === parts.length - 1 ? { done } : {}) }));
    }
    this.spoolWaiting();
  }

  /** Resolves once no batch waits for room in the spool. */
  drained(): Promise<void> {
    return this.waiting.length === 0 ? Promise.resolve() : new Promise<void>((resolve) => this.drainedWaiters.push(resolve));
  }

  /** Spools every batch that waits, oldest first, while they fit. */
  private spoolWaiting(): void {
    const end = this.spool.end;
    while (this.waiting.length > 0) {
      const b = this.waiting[0]!;
      try {
        // An indexer that has gone reads no further: what comes now is dropped (counted), not spooled.
        if (!this.indexer.alive) throw new McptapError('MCPTAP_INDEXER', 'the recording indexer has stopped');
        if (!this.spool.append(b.ops, b.bytes, this.indexer.indexed)) break;
      } catch (err) {
        this.dropped(b.bytes.length, err as Error);
      }
      this.waiting.shift();
      b.done?.();
    }
    // Batches still waiting: the spool is full, and the indexer must not wait for a lull.
    const waitingForRoom = this.waiting.length > 0;
    if (this.spool.end > end || waitingForRoom) this.indexer.spooled(this.spool.end, waitingForRoom);
    else this.spool.trim(this.indexer.indexed, TRIM_SPOOL_BYTES);
    if (!waitingForRoom) for (const resolve of this.drainedWaiters.splice(0)) resolve();
  }

  private dropped(bytes: number, err: Error): void {
    this.failed.batches++;
    this.failed.bytes += bytes;
    if (this.failed.batches > 1) return;
    const why = `cannot spool traffic for the recording: ${err.message}`;
    this.o.logger.error(`${why} (further failures counted, not logged)`);
    // An indexer that has gone told `required` so itself.
    if (this.o.recording.required && this.indexer.alive) this.o.onFatal?.(new Error(why));
  }

  /** Spools what waits, has the indexer index it all and end the recording; the lines worth telling the user. Idempotent. */
  close(incomplete?: string): Promise<string[]> {
    this.closing ??= this.closeNow(incomplete);
    return this.closing;
  }

  private async closeNow(incomplete: string | undefined): Promise<string[]> {
    const indexer = this.indexer;
    // Traffic is over: the indexer, niced while it flowed, may work at full priority now.
    indexer.stopYielding();
    const endedUs = systemClock.nowUs();
    const look = (): IndexerLook => ({
      now: performance.now(),
      opened: indexer.opened,
      indexed: indexer.indexed,
      cpu: indexer.pid !== undefined ? processCpuTicks(indexer.pid) : undefined,
    });
    const watch = new IndexerStallWatch(this.o.recording.stallMs, look());
    const progress = setInterval(() => this.sayProgress(watch, look), Math.min(1000, watch.stallMs / 4));
    const lines: string[] = [];
    try {
      await this.drained();
      const indexed = indexer.close(this.spool.end, endedUs, incomplete);
      this.handOver();
      lines.push(...(await indexed));
    } finally {
      clearInterval(progress);
      this.handOver();
      this.spool.close();
    }
    const { batches, bytes } = this.failed;
    if (batches > 0) lines.push(`recording ${this.o.recording.path}: ${batches} batches (${bytes} bytes) of traffic dropped: they could not be spooled`);
    return lines;
  }

  /** While closing: gives up on an indexer that makes no progress, else says how far it got. */
  private sayProgress(watch: IndexerStallWatch, look: () => IndexerLook): void {
    const indexer = this.indexer;
    // Dead: said once already, nothing more will be indexed.
    if (!indexer.alive) return;
    const total = this.spool.end;
    const giveUp = watch.look(look(), indexer.indexed < total || this.waiting.length > 0);
    if (giveUp) return indexer.abandon(giveUp);
    // Still opening the recording: nothing to say yet.
    if (!indexer.opened) return;
    const pct = total > 0 ? Math.floor((100 * indexer.indexed) / total) : 100;
    const size = total < 2 ** 20 ? `${Math.ceil(total / 1024)} KB` : `${(total / 2 ** 20).toFixed(1)} MB`;
    this.o.logger.warn(`still indexing the recording ${this.o.recording.path}: ${pct}% of ${size} spooled (the tap ends when it is complete)`);
  }

  /** Bytes of traffic the recording lacks (not spooled, or spooled and never indexed), and events its recorder dropped (a full disk). */
  lost(): { bytes: number; events: number } {
    return { bytes: this.failed.bytes + this.indexer.lostBytes(), events: this.indexer.recorderDropped };
  }

  /** Right before an exit on a signal: an indexer that died unheard or still loads is replaced now, on the same spool. */
  checkIndexer(): void {
    this.indexer.beforeExit();
  }
}
