/**
 * When a closing tap gives up on its indexer: not while it moves (using CPU until the recording is open, which may take
 * minutes at low priority; indexing after; opening restarts the clock). Bounded by {@link IndexerStallWatch.stallMs}
 * without moving, and {@link OPEN_LIMIT_MS} for the opening.
 */

import { readFileSync } from 'node:fs';

/** Longest wait for the indexer to open the recording, counted from the close, however it moves (ms). */
export const OPEN_LIMIT_MS = 5 * 60_000;

/** What the closing tap sees of its indexer at one look. */
export interface IndexerLook {
  /** Milliseconds, any monotonic origin. */
  now: number;
  opened: boolean;
  /** Bytes of spool in the recording. */
  indexed: number;
  /** The indexer process's CPU time so far, in any unit; undefined where it cannot be read (not Linux). */
  cpu: number | undefined;
}

export class IndexerStallWatch {
  private last: IndexerLook;
  private lastMovedAt: number;
  private readonly since: number;

  /** `stallMs`: how long the indexer may not move before it is given up on. */
  constructor(
    readonly stallMs: number,
    first: IndexerLook,
  ) {
    this.last = first;
    this.lastMovedAt = first.now;
    this.since = first.now;
  }

  /** Why to give up on the indexer now, or undefined to wait on. `workLeft`: the spool holds what it has not indexed. */
  look(l: IndexerLook, workLeft: boolean): string | undefined {
    const moved = l.opened
      ? !this.last.opened || l.indexed > this.last.indexed
      : // Where CPU time cannot be read, the opening is bounded by OPEN_LIMIT_MS alone.
        l.cpu === undefined || this.last.cpu === undefined || l.cpu > this.last.cpu;
    this.last = l;
    if (moved || !workLeft) this.lastMovedAt = l.now;
    if (!l.opened && l.now - this.since > OPEN_LIMIT_MS)
      return `the recording indexer had not opened the recording ${OPEN_LIMIT_MS / 60_000} min after the close`;
    if (l.now - this.lastMovedAt > this.stallMs) return `the recording indexer made no progress for ${this.stallMs / 1000} s`;
    return undefined;
  }
}

/** CPU time a process has used (user + system, clock ticks), from /proc (Linux); undefined elsewhere or once it is gone. */
export function processCpuTicks(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    // Fields after the command name (which may hold spaces, in parentheses): state is field 3, utime 14, stime 15.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]);
  } catch {
    return undefined;
  }
}
