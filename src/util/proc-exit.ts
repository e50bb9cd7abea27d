/**
 * What Linux's /proc says of a process: whether a child died though this process has not reaped
 * it yet (its 'exit' event waits for the event loop, and a process about to exit on a signal never
 * gets there), and when a process started (a pid reused by another process is not the same one).
 */
import { readFileSync } from 'node:fs';
import { constants } from 'node:os';

export interface UnreapedExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** The fields of /proc/PID/stat after the command name (which may hold spaces): [0] is field 3, the state. */
function statFields(pid: number): string[] | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

const isZombie = (fields: string[]) => fields[0] === 'Z' || fields[0] === 'X';

/** The exit of child `pid` if it died and is not reaped yet (its wait status: field 52, Linux 3.5+); undefined while it runs, once reaped, or without /proc. */
export function unreapedExit(pid: number): UnreapedExit | undefined {
  const fields = statFields(pid);
  if (!fields || !isZombie(fields)) return undefined;
  const status = Number(fields[52 - 3] ?? NaN);
  if (!Number.isInteger(status)) return { code: null, signal: null };
  const sig = status & 0x7f;
  if (sig === 0) return { code: (status >> 8) & 0xff, signal: null };
  const name = Object.entries(constants.signals).find(([, n]) => n === sig)?.[0] as NodeJS.Signals | undefined;
  return { code: null, signal: name ?? null };
}

/** When process `pid` started (clock ticks since boot, field 22); -1 for a zombie (dead); undefined without /proc or such a process. */
export function processStartTicks(pid: number): number | undefined {
  const fields = statFields(pid);
  if (!fields) return undefined;
  return isZombie(fields) ? -1 : Number(fields[22 - 3]);
}

/** Whether process `pid` has a handler for `signal` (/proc/PID/status, SigCgt); undefined without /proc or such a process. */
export function catchesSignal(pid: number, signal: NodeJS.Signals): boolean | undefined {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const mask = /^SigCgt:\s*([0-9a-f]+)$/m.exec(status)?.[1];
  return mask === undefined ? undefined : ((BigInt(`0x${mask}`) >> BigInt(constants.signals[signal] - 1)) & 1n) === 1n;
}
