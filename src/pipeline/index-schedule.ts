/**
 * When the recording indexer works; pure, time passed in (ms, any monotonic origin), so tested on virtual time.
 * It waits while traffic flows (niceness alone does not keep it out of the way: docs/performance.md): until nothing was
 * spooled for `quietMs`, what waits is `maxLagMs` old, the spool is full (`waitingForRoom`: else batches are dropped),
 * or the recording closes. Then it works in slices of `sliceMs`, reading its messages in between.
 */
export interface IndexScheduleOptions {
  quietMs: number;
  maxLagMs: number;
  sliceMs: number;
}

export class IndexSchedule {
  private lastSpooledAt = 0;
  private waitingForRoom = false;
  private behindSince: number | undefined;
  private closing = false;

  constructor(private readonly opts: IndexScheduleOptions) {}

  /** The tap spooled more (`behind`: some of it is not indexed yet); `waitingForRoom`: batches wait for room. */
  spooled(nowMs: number, behind: boolean, waitingForRoom = false): void {
    this.waitingForRoom = waitingForRoom;
    this.lastSpooledAt = nowMs;
    if (this.behindSince === undefined && behind) this.behindSince = nowMs;
  }

  /** The recording is closing (or the tap went away): index everything at once. */
  close(): void {
    this.closing = true;
  }

  /** Everything spooled is indexed: the lag starts again from the next batch. */
  caughtUp(): void {
    this.behindSince = undefined;
  }

  /** How long indexing should still wait (ms); 0: now. */
  holdOff(nowMs: number): number {
    if (this.closing || this.waitingForRoom) return 0;
    const quietFor = nowMs - this.lastSpooledAt;
    if (quietFor >= this.opts.quietMs) return 0;
    if (this.behindSince !== undefined && nowMs - this.behindSince >= this.opts.maxLagMs) return 0;
    return this.opts.quietMs - quietFor;
  }

  /** When a slice of indexing that starts at `nowMs` yields. */
  sliceEnd(nowMs: number): number {
    return nowMs + this.opts.sliceMs;
  }
}
