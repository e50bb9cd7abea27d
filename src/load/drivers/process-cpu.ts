/**
 * A stdio server process's CPU time, read from outside (Linux /proc): cancel steps weigh the CPU
 * a process used after a cancel against its idle rate. Undefined elsewhere, or once it is gone.
 */
import { readFileSync } from 'node:fs';
import type { Clock } from '../../util/clock.js';

/** /proc/PID/stat counts in clock ticks of USER_HZ, which Linux fixes at 100 for user space. */
const TICK_US = 10_000;

/** utime + stime of the process (all its threads, not its children), µs. */
export function processCpuUs(pid: number): number | undefined {
  if (process.platform !== 'linux') return undefined;
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The fields after the command name (which may hold spaces and parentheses) start at field 3.
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const utime = Number(f[14 - 3]);
  const stime = Number(f[15 - 3]);
  return Number.isInteger(utime) && Number.isInteger(stime) ? (utime + stime) * TICK_US : undefined;
}

/** What a watch needs of the process's client: its pid and what it has asked of it. */
export interface CpuTarget {
  readonly pid: number | undefined;
  readonly inFlight: number;
  readonly requestsSent: number;
}

export interface CpuMark {
  us: number;
  cpuUs: number;
  sent: number;
  inFlight: number;
}

export function cpuMark(t: CpuTarget, clock: Clock): CpuMark | undefined {
  const cpuUs = t.pid !== undefined ? processCpuUs(t.pid) : undefined;
  return cpuUs === undefined ? undefined : { us: clock.nowUs(), cpuUs, sent: t.requestsSent, inFlight: t.inFlight };
}

/** The process's CPU per wall time over `ms` with nothing asked of it; undefined when it was not idle. */
export async function idleRate(t: CpuTarget, clock: Clock, ms: number): Promise<number | undefined> {
  if (t.inFlight !== 0) return undefined;
  const a = cpuMark(t, clock);
  if (!a) return undefined;
  await new Promise((resolve) => setTimeout(resolve, ms));
  const b = cpuMark(t, clock);
  if (!b || b.sent !== a.sent || b.inFlight !== 0 || b.us <= a.us) return undefined;
  return (b.cpuUs - a.cpuUs) / (b.us - a.us);
}
