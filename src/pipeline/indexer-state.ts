/**
 * The recording indexer as the pipeline worker sees it, whichever side hears it: its handle, and
 * the state its news (ready, indexed, gone, closed) move through (recording-indexer.ts owns the
 * process; indexer-relay.ts relays it to the worker).
 */
import { McptapError } from '../errors.js';
import { SpooledNotices } from './spooled-notices.js';

/** What the pipeline worker needs of the indexer, whether it talks to it itself or through the tap's thread (indexer-relay.ts). */
export interface IndexerHandle {
  /** Resolves once the recording is open; rejects (MCPTAP_*) when it cannot be. */
  readonly ready: Promise<void>;
  /** The child has opened the recording (or failed to). */
  readonly opened: boolean;
  /** False once the child has gone: nothing more will be indexed. */
  readonly alive: boolean;
  /** How far the spool is in the recording (bytes of spool). */
  readonly indexed: number;
  spooled(end: number, waitingForRoom?: boolean): void;
  close(end: number, endedUs: number, incomplete?: string): Promise<string[]>;
  abandon(why: string): void;
}

/**
 * What both sides know of the indexer and how its news change it: {@link RecordingIndexer} owns the
 * process and hears it directly, RelayedIndexer (indexer-relay.ts) hears it through the tap's
 * thread. `ready` settles once; the position only grows; `close` resolves once, with the lines said.
 */
export abstract class IndexerState implements IndexerHandle {
  readonly ready: Promise<void>;
  private settleReady!: { resolve: () => void; reject: (err: McptapError) => void };
  private isOpen = false;
  protected dead: string | undefined;
  protected closing: Promise<string[]> | undefined;
  private closedWith: ((lines: string[]) => void) | undefined;
  protected readonly notices = new SpooledNotices((end, waitingForRoom) => this.spooledNow(end, waitingForRoom));

  constructor(protected position = 0) {
    this.ready = new Promise<void>((resolve, reject) => (this.settleReady = { resolve, reject }));
    this.ready.catch(() => {});
  }

  /** The child has opened the recording (or failed to). */
  get opened(): boolean {
    return this.isOpen;
  }

  /** False once the child has gone (closed, or died): nothing more will be indexed. */
  get alive(): boolean {
    return this.dead === undefined;
  }

  /** How far the spool is in the recording (bytes of spool). */
  get indexed(): number {
    return this.position;
  }

  /** The indexer's process id, where this side knows it. */
  abstract readonly pid: number | undefined;

  /**
   * The spool is readable up to `end`; `waitingForRoom`: batches wait for room in it. Said at most once per
   * SPOOLED_EVERY_MS ({@link SpooledNotices}): each message wakes the indexer process, which
   * only notes it while traffic flows, and a tap posts a batch every few milliseconds.
   */
  spooled(end: number, waitingForRoom = false): void {
    if (!this.dead && !this.closing) this.notices.note(end, waitingForRoom);
  }

  /** The same, said at once. */
  abstract spooledNow(end: number, waitingForRoom?: boolean): void;

  /** Indexes the rest of the spool (up to `end`), ends the recording at `endedUs` (marked `incomplete` if given), stops the child. */
  close(end: number, endedUs: number, incomplete?: string): Promise<string[]> {
    this.closing ??= new Promise<string[]>((resolve) => {
      this.closedWith = resolve;
      this.notices.cancel();
      this.askClose(end, endedUs, incomplete);
    });
    return this.closing;
  }

  abstract abandon(why: string): void;

  /** Tells the indexer to close (from {@link close}, once). */
  protected abstract askClose(end: number, endedUs: number, incomplete: string | undefined): void;

  /** News: the recording is open (no `err`), or cannot be. Once; false if said before. */
  protected openedAs(err?: McptapError): boolean {
    if (this.isOpen) return false;
    this.isOpen = true;
    if (err) this.settleReady.reject(err);
    else this.settleReady.resolve();
    return true;
  }

  /** News: the recording holds the spool up to `position`. */
  protected indexedTo(position: number): void {
    this.position = position;
    this.onIndexed(position);
  }

  /** News: the recording is closed (or given up on, `why`), with what the close said. */
  protected closedAs(lines: string[], why = 'closed'): void {
    this.dead ??= why;
    const done = this.closedWith;
    this.closedWith = undefined;
    done?.(lines);
  }

  /** The indexer has gone: false if it had before. Whoever waits for room in the spool hears that no more will come. */
  protected goneAs(why: string, beforeWaiters: () => void = () => {}): boolean {
    if (this.dead) return false;
    this.dead = why;
    this.notices.cancel();
    beforeWaiters();
    this.onIndexed(this.position);
    return true;
  }

  protected abstract onIndexed(position: number): void;
}
