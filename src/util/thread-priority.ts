/**
 * Background threads and processes (the pipeline thread, the recording indexer) lower their scheduling
 * priority: under CPU contention the forwarding thread, the host and the server win, and the
 * background work catches up later (or, past its queue, drops and counts) instead of slowing
 * traffic. Linux schedules threads individually; elsewhere this is a no-op.
 */
import { readdirSync, readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

/** Call from inside the thread to lower. `nice` <= 0 leaves the priority as it is. */
export function lowerThreadPriority(nice: number): void {
  if (nice <= 0) return;
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, Math.min(19, nice));
  } catch {
    /* no /proc/thread-self (not Linux): keep the default priority */
  }
}

/**
 * Lowers every thread of this process (V8's helper threads included; threads started later
 * inherit it from their creator). For a background child process, from its start.
 */
export function lowerProcessPriority(nice: number): void {
  if (nice <= 0) return;
  try {
    for (const tid of readdirSync('/proc/self/task')) setPriority(Number(tid), Math.min(19, nice));
  } catch {
    /* not Linux: keep the default priority */
  }
}

/**
 * Back to the default priority for the last of the work, once traffic has ended (the recording
 * closes): a niced process on a busy machine can otherwise take seconds to finish while its tap
 * and host wait. Needs the right to raise priority (root, CAP_SYS_NICE or RLIMIT_NICE); without it
 * the priority stays low, as before. Every thread of this process.
 */
export function restorePriority(): void {
  raiseTasks('/proc/self/task');
}

/** The same for a child process, from outside: every thread it has now (a child still loading has its helper threads niced with it). */
export function restoreChildPriority(pid: number): void {
  if (!raiseTasks(`/proc/${pid}/task`)) {
    try {
      setPriority(pid, 0); // no /proc (not Linux): its main thread at least
    } catch {
      /* not permitted or gone */
    }
  }
}

/** Every thread listed in a /proc task directory to niceness 0; false when the directory cannot be read. */
function raiseTasks(dir: string): boolean {
  let tids: string[];
  try {
    tids = readdirSync(dir);
  } catch {
    return false;
  }
  for (const tid of tids) {
    try {
      setPriority(Number(tid), 0);
    } catch {
      /* not permitted, or the thread is gone: it finishes at the lower priority */
    }
  }
  return true;
}

/** Lowers a child process just spawned (its main thread; the threads it starts inherit it). */
export function lowerChildPriority(pid: number, nice: number): void {
  if (nice <= 0) return;
  try {
    setPriority(pid, Math.min(19, nice));
  } catch {
    /* gone already, or not permitted: it lowers itself when it starts */
  }
}
