/** The indexer's wake-ups, spaced: how often it hears that more was spooled (recording-indexer.ts). */
/**
 * How often the indexer hears that more was spooled, at most (ms). Below the indexer's quiet time
 * (QUIET_MS in indexer-process.ts), which must stay well above it: traffic that flows has to look
 * like it.
 */
export const SPOOLED_EVERY_MS = 40;

/**
 * "Spooled up to `end`", said at most once per {@link SPOOLED_EVERY_MS} (the first time at once,
 * then what came since in one message); batches starting to wait for room are said at once.
 */
export class SpooledNotices {
  private end = 0;
  private waitingForRoom = false;
  private at = -Infinity;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly say: (end: number, waitingForRoom: boolean) => void) {}

  /** The last end noted (said or not yet). */
  get last(): number {
    return this.end;
  }

  note(end: number, waitingForRoom: boolean): void {
    const nowWaiting = waitingForRoom && !this.waitingForRoom;
    this.end = end;
    this.waitingForRoom = waitingForRoom;
    if (this.timer && !nowWaiting) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    const wait = nowWaiting ? 0 : this.at + SPOOLED_EVERY_MS - performance.now();
    if (wait <= 0) this.sayNow();
    else {
      this.timer = setTimeout(this.sayNow, wait);
      this.timer.unref();
    }
  }

  cancel(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private readonly sayNow = (): void => {
    this.timer = undefined;
    this.at = performance.now();
    this.say(this.end, this.waitingForRoom);
  };
}
