/**
 * Whether a child process has died though this process has not reaped it yet: its 'exit' event
 * waits for the event loop, and a process about to exit (a stop signal) never gets there. Linux:
 * a zombie's /proc/PID/stat says so (state Z) and holds its wait status (field 52, Linux 3.5+).
 */
import { readFileSync } from 'node:fs';
import { constants } from 'node:os';

export interface UnreapedExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** The exit of child `pid` if it died and is not reaped yet; undefined while it runs (or where /proc cannot tell). */
export function unreapedExit(pid: number): UnreapedExit | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined; // reaped already (its exit was heard), or no /proc
  }
  // Fields after the command name (which may hold spaces and parentheses): state is field 3.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  if (fields[0] !== 'Z' && fields[0] !== 'X') return undefined;
  const status = Number(fields[52 - 3] ?? NaN);
  if (!Number.isInteger(status)) return { code: null, signal: null };
  const sig = status & 0x7f;
  if (sig === 0) return { code: (status >> 8) & 0xff, signal: null };
  const name = Object.entries(constants.signals).find(([, n]) => n === sig)?.[0] as NodeJS.Signals | undefined;
  return { code: null, signal: name ?? null };
}
