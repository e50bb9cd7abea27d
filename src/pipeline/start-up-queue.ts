/**
 * What the tap's thread posts to the pipeline worker, in order, while the worker starts. Before the
 * worker exists every message waits here. With a recording, this thread also appends each batch to
 * the spool ({@link TapSpool}) until the worker asks for it: batches spooled here may be posted at
 * once (for live telemetry), and the first one that could not be spooled waits, with everything
 * after it, until the worker has the spool and spools them itself.
 */
import type { TapSpool } from './indexer-relay.js';
import type { IndexerEvent, ToWorker } from './worker-wire.js';

export type Post = (msg: ToWorker, transfer?: ArrayBuffer[]) => void;

export class StartUpQueue {
  private readonly held: ToWorker[] = [];
  /** This thread writes the spool (until the worker takes it, or the pipeline dies). */
  private spoolHere: boolean;

  constructor(private readonly tapSpool: TapSpool | undefined) {
    this.spoolHere = tapSpool !== undefined;
  }

  /** This thread still spools: answers are flushed in the turn they pass, not on a timer. */
  get spooling(): boolean {
    return this.spoolHere;
  }

  /** Appends a batch to the spool when this thread holds it; true when it is in the spool. */
  spool(ops: Buffer, bytes: Buffer): boolean {
    return this.spoolHere && this.tapSpool!.append(ops, bytes);
  }

  /** Posts `msg` now, or keeps it (in order) when the worker is not up or cannot take it yet. */
  send(msg: ToWorker, workerUp: boolean, post: Post): void {
    if (!workerUp || this.held.length > 0 || !this.mayGo(msg)) this.held.push(msg);
    else post(msg, msg.type === 'batch' ? [msg.bytes] : []);
  }

  /** Posts the kept messages that may go now (all once the worker has the spool); true if any went. */
  drain(post: Post): boolean {
    let posted = false;
    while (this.held.length > 0) {
      const m = this.held[0]!;
      if (!this.mayGo(m)) break;
      this.held.shift();
      posted = true;
      post(m, m.type === 'batch' ? [m.bytes] : []);
    }
    return posted;
  }

  /** While this thread spools, only batches already in the spool may reach the worker. */
  private mayGo(m: ToWorker): boolean {
    return !this.spoolHere || (m.type === 'batch' && m.spooled === true);
  }

  /** The worker asks for the spool: it spools from here on. The message that gives it, once. */
  handOver(relay: (event: IndexerEvent) => void): ToWorker | undefined {
    if (!this.spoolHere) return undefined;
    this.spoolHere = false;
    return { type: 'spool', ...this.tapSpool!.handOver(relay) };
  }

  /** The pipeline died: nothing more is posted, and the indexer completes the recording from the spool. */
  abandon(): void {
    this.held.length = 0;
    this.spoolHere = false;
    this.tapSpool?.release();
  }
}
