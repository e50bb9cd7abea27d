/** What executors hand to the code that runs one iteration. */
export interface IterationSlot {
  phaseIndex: number;
  phase: string;
  /** Index of the iteration within its phase, the same on every shard (drives mix, data and randomness). */
  index: number;
  /** Virtual user (closed model); -1 in the open model, where the driver picks a lane. */
  vu: number;
  /** When the iteration should have started by the schedule (µs since the epoch). */
  intendedUs: number;
  /** When the phase is planned to end (absent: a phase of iterations only); `listen` steps hold until then. */
  phaseEndUs?: number;
}

/** Runs one iteration; never rejects on purpose (failures are samples), and is bounded by the request timeout. */
export type IterationRunner = (slot: IterationSlot) => Promise<void>;

/** This process's share of the run: shard `index` (1-based) of `count`. */
export interface ShardSpec {
  index: number;
  count: number;
}

export const NO_SHARD: ShardSpec = { index: 1, count: 1 };

/** Parse `i/n` (1 <= i <= n). Returns an error message when malformed. */
export function parseShard(text: string): ShardSpec | string {
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(text);
  if (!m) return `--shard wants i/n (e.g. 2/4), got "${text}"`;
  const index = Number(m[1]);
  const count = Number(m[2]);
  if (count < 1 || index < 1 || index > count) return `--shard ${text}: need 1 <= i <= n`;
  return { index, count };
}
