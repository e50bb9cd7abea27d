/**
 * When a replay sends the client's own notifications ({@link PlanNotes}): note `j` once every step
 * recorded before it was sent (or will never be) and those answered before it are done, and a step
 * only once the notes recorded before it were sent, so each keeps its recorded place among the
 * requests. Sending is the caller's; a recorded cancellation is sent again at its place here.
 */
import type { JsonRpcId, JsonRpcNotification } from '../model/jsonrpc.js';
import type { StoredExchange } from '../store/types.js';
import { stepAfter, type PlanNotes } from './replay-plan.js';
import type { ReplayTraffic } from './replay-traffic.js';
import type { AnsweringSession } from './server-requests.js';

export class NoteSchedule {
  /** Steps sent, or done without being sent. */
  private readonly sent: Uint8Array;
  private readonly stepsDone: Uint8Array;
  /** Step -> the released notes that wait for it to be done; note -> how many steps it still waits for. */
  private readonly dependents = new Map<number, number[]>();
  private readonly blockedOn = new Map<number, number>();
  private sentBelow = 0;
  private released = 0;
  private readonly noteDone: Uint8Array;
  private doneBelow = 0;
  private readonly inFlight = new Set<Promise<void>>();
  /** Steps waiting for notes: resolved once `doneBelow` reaches `notes`. */
  private waiters: { notes: number; resolve: () => void }[] = [];

  constructor(
    private readonly notes: PlanNotes | undefined,
    steps: number,
    private readonly send: (j: number) => Promise<void>,
  ) {
    this.sent = new Uint8Array(notes ? steps : 0);
    this.stepsDone = new Uint8Array(notes ? steps : 0);
    this.noteDone = new Uint8Array(notes?.size ?? 0);
  }

  /** Releases the notes recorded before any step. */
  start(): void {
    this.release();
  }

  /** Step `i` was sent (or will never be). */
  stepSent(i: number): void {
    if (!this.notes || this.sent[i]) return;
    this.sent[i] = 1;
    while (this.sentBelow < this.sent.length && this.sent[this.sentBelow]) this.sentBelow++;
    this.release();
  }

  /** Step `i` is done (answered, or never to be): the notes that waited for it may go. */
  stepDone(i: number): void {
    if (!this.notes) return;
    this.stepsDone[i] = 1;
    for (const j of this.dependents.get(i) ?? []) {
      const left = this.blockedOn.get(j)! - 1;
      if (left > 0) this.blockedOn.set(j, left);
      else (this.blockedOn.delete(j), this.go(j));
    }
    this.dependents.delete(i);
    this.stepSent(i);
  }

  /** Resolves once the notes recorded before step `i` were sent (undefined: they were). */
  ready(i: number): Promise<void> | undefined {
    if (!this.notes) return undefined;
    const notes = this.notesBefore(i);
    if (this.doneBelow >= notes) return undefined;
    return new Promise((resolve) => this.waiters.push({ notes, resolve }));
  }

  /** After the last step: the notes left are sent, unless `stopped`. */
  async drain(stopped: boolean): Promise<void> {
    if (this.notes && !stopped) {
      for (let i = 0; i < this.sent.length; i++) if (!this.stepsDone[i]) this.stepDone(i);
      this.release();
    }
    while (this.inFlight.size > 0) await Promise.all(this.inFlight);
  }

  private release(): void {
    const notes = this.notes;
    if (!notes) return;
    while (this.released < notes.size && notes.before[this.released]! <= this.sentBelow) {
      const j = this.released++;
      let waits = 0;
      for (const d of stepAfter(notes, j)) {
        if (this.stepsDone[d]) continue;
        waits++;
        const list = this.dependents.get(d);
        if (list) list.push(j);
        else this.dependents.set(d, [j]);
      }
      if (waits === 0) this.go(j);
      else this.blockedOn.set(j, waits);
    }
  }

  /** Note `j` sent now; a failure to send it is no step's answer, so it is let go. */
  private go(j: number): void {
    const p: Promise<void> = this.send(j)
      .catch(() => undefined)
      .finally(() => {
        this.inFlight.delete(p);
        this.done(j);
      });
    this.inFlight.add(p);
  }

  private done(j: number): void {
    this.noteDone[j] = 1;
    while (this.doneBelow < this.noteDone.length && this.noteDone[this.doneBelow]) this.doneBelow++;
    const still = [];
    for (const w of this.waiters) {
      if (this.doneBelow >= w.notes) w.resolve();
      else still.push(w);
    }
    this.waiters = still;
  }

  /** How many notes were recorded before step `i` (a prefix: `before` does not decrease). */
  private notesBefore(i: number): number {
    const before = this.notes!.before;
    let lo = 0;
    let hi = before.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (before[mid]! <= i) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

const CANCELLED = 'notifications/cancelled';

/**
 * A recorded client cancellation of `step`, replayed at the same point (`scaled` by the pace): the
 * abort signal for its request, and what stops the timer once the request is done first.
 */
export function cancelAsRecorded(
  step: { exchange: StoredExchange; session: string },
  live: AnsweringSession & { plan: { era: 'legacy' | 'modern' } },
  sentId: JsonRpcId,
  traffic: ReplayTraffic,
  scaled: (us: number) => number,
): { signal: AbortSignal; stop(): void } | undefined {
  const c = step.exchange.cancel;
  if (!c || c.by !== 'c2s') return undefined;
  const ac = new AbortController();
  const timer = setTimeout(
    () => {
      // Said as recorded (stdio's client then sends no second one on abort), and seen by --update; a
      // modern HTTP request is cancelled by closing its stream, which the abort does.
      if (live.conn.channel.transport !== 'http' || live.plan.era === 'legacy') {
        const n: JsonRpcNotification = { jsonrpc: '2.0', method: CANCELLED, params: { requestId: sentId, reason: c.reason ?? 'replayed cancellation' } };
        traffic.sent(step.session, n, live.session.headerContext, c.timeUs);
        void live.session.notify(n).catch(() => undefined);
      }
      ac.abort();
    },
    scaled(Math.max(0, c.timeUs - step.exchange.startUs)) / 1000,
  );
  return { signal: ac.signal, stop: () => clearTimeout(timer) };
}
