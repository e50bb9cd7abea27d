/**
 * The reference server's record of tool work in flight, read back by its `in-flight` tool: a
 * test (or the load engine's cancel probe) asks whether the work a cancelled call started has
 * really stopped, and when it last did something.
 *
 * Work is keyed by the call's `_meta.progressToken` (the caller's own handle for one request,
 * unique where request ids are not: ids repeat across sessions and processes). Calls without one
 * are counted in flight but cannot be looked up. Ended work is remembered for the last
 * {@link MAX_ENDED} calls only, so a long load run cannot exhaust memory.
 */

export type WorkOutcome = 'running' | 'completed' | 'stopped';

export interface WorkStatus {
  key?: string;
  tool: string;
  startedAtMs: number;
  /** The last unit of work done (a progress step, or the start for a plain wait). */
  lastWorkAtMs: number;
  units: number;
  outcome: WorkOutcome;
  endedAtMs?: number;
  /** When the server saw the call cancelled (whether it honoured that or not). */
  cancelSeenAtMs?: number;
  /** Whether the call honours cancellation. */
  honorsCancel: boolean;
}

export interface WorkHandle {
  unit(): void;
  cancelSeen(): void;
  end(outcome: 'completed' | 'stopped'): void;
}

export const MAX_ENDED = 10_000;

export class WorkTracker {
  private readonly running = new Set<WorkStatus>();
  private readonly byKey = new Map<string, WorkStatus>();
  private readonly ended: string[] = [];

  constructor(private readonly nowMs: () => number = Date.now) {}

  begin(tool: string, key: string | undefined, honorsCancel: boolean): WorkHandle {
    const now = this.nowMs();
    const w: WorkStatus = { tool, startedAtMs: now, lastWorkAtMs: now, units: 0, outcome: 'running', honorsCancel };
    if (key !== undefined) {
      w.key = key;
      this.byKey.set(key, w);
    }
    this.running.add(w);
    return {
      unit: () => {
        w.units++;
        w.lastWorkAtMs = this.nowMs();
      },
      cancelSeen: () => (w.cancelSeenAtMs ??= this.nowMs()),
      end: (outcome) => {
        if (w.outcome !== 'running') return;
        w.outcome = outcome;
        w.endedAtMs = this.nowMs();
        this.running.delete(w);
        if (key !== undefined) this.remember(key);
      },
    };
  }

  status(key: string): WorkStatus | undefined {
    return this.byKey.get(key);
  }

  get inFlight(): number {
    return this.running.size;
  }

  /** Running work, oldest first, at most `limit` entries. */
  list(limit = 100): WorkStatus[] {
    return [...this.running].slice(0, limit);
  }

  private remember(key: string): void {
    this.ended.push(key);
    if (this.ended.length > MAX_ENDED) {
      const old = this.ended.shift()!;
      if (this.byKey.get(old)?.outcome !== 'running') this.byKey.delete(old);
    }
  }
}

/** The JSON a client reads: times as ISO strings and epoch ms, plus the derived work-after-cancel. */
export function describeWork(w: WorkStatus, nowMs: number): Record<string, unknown> {
  const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());
  const out: Record<string, unknown> = {
    found: true,
    key: w.key,
    tool: w.tool,
    running: w.outcome === 'running',
    outcome: w.outcome,
    units: w.units,
    honorsCancel: w.honorsCancel,
    startedAt: iso(w.startedAtMs),
    lastWorkAt: iso(w.lastWorkAtMs),
    lastWorkAtMs: w.lastWorkAtMs,
  };
  if (w.endedAtMs !== undefined) Object.assign(out, { endedAt: iso(w.endedAtMs), endedAtMs: w.endedAtMs });
  if (w.cancelSeenAtMs !== undefined) {
    const until = w.endedAtMs ?? nowMs;
    Object.assign(out, { cancelSeenAt: iso(w.cancelSeenAtMs), cancelSeenAtMs: w.cancelSeenAtMs, workAfterCancelMs: Math.max(0, until - w.cancelSeenAtMs) });
  }
  return out;
}
