/**
 * One time limit for closing the telemetry, counted from the first close of any of its parts: the
 * pipeline closes the sinks (each waits for a final flush), then shutdown() stops the providers.
 * An OTLP endpoint that is down makes each export retry for seconds, so a limit per step let a
 * stopped tap linger (docs/performance.md, "Figures moved from source comments"); a tap asked to stop must stop. Exports still pending at the deadline are abandoned.
 *
 * It ends early when waiting cannot help: every OTLP endpoint refused its connections and none was
 * ever reached (see endpoint-reachability.ts), so nothing pending can be delivered. An endpoint
 * that was reached once (a hung or restarting collector) keeps the whole deadline.
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

  /** Why the close gave up before the deadline, once it has. */
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
