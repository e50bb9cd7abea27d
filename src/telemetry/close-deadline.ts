/**
 * One time limit for closing the telemetry (the sinks' final flushes, then the providers), counted from the first close of any part: with an OTLP
 * endpoint down each export retries for seconds, and a tap asked to stop must stop (docs/performance.md, "Figures moved from source comments").
 * Pending exports are abandoned then. It ends early when no OTLP endpoint was ever reached (endpoint-reachability.ts); one reached once keeps it all.
 */

/** How a wait under the deadline ended: the work finished, the deadline came, or it gave up early. */
export type CloseOutcome = 'done' | 'expired' | 'unreachable';

/** Says when waiting is pointless (a reason), and when to ask again. */
export interface GiveUpSignal {
  reason(): string | undefined;
  onChange(listener: () => void): () => void;
}

/** Calls `fire` after `ms`; the default timer does not keep the process alive. */
export type StartTimer = (ms: number, fire: () => void) => void;

const unrefTimer: StartTimer = (ms, fire) => void setTimeout(fire, ms).unref();

export class CloseDeadline {
  private ended: Promise<'expired' | 'unreachable'> | undefined;
  private why: string | undefined;

  constructor(
    readonly ms: number,
    private readonly giveUp?: GiveUpSignal,
    private readonly startTimer: StartTimer = unrefTimer,
  ) {}

  get gaveUpBecause(): string | undefined {
    return this.why;
  }

  /** Waits for `work` until the deadline (whose clock starts at the first call) or until waiting is pointless. */
  within(work: Promise<unknown>): Promise<CloseOutcome> {
    this.ended ??= new Promise((resolve) => {
      let off = () => {};
      const check = () => {
        const why = this.giveUp?.reason();
        if (why === undefined) return;
        this.why ??= why;
        off();
        resolve('unreachable');
      };
      this.startTimer(this.ms, () => {
        off();
        resolve('expired');
      });
      if (this.giveUp) off = this.giveUp.onChange(check);
      check();
    });
    return Promise.race([
      work.then(
        () => 'done' as const,
        () => 'done' as const,
      ),
      this.ended,
    ]);
  }
}
