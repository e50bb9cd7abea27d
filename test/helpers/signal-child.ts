/** Signalling a child under test, bounded: the test fails instead of hanging when it does not exit. */
import type { ChildProcess } from 'node:child_process';

export const STILL_RUNNING = 'still running after the bound';

/** The child's exit code, as a promise made before it can exit. */
export function exitOf(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

/** Sends `signal`, then waits at most `boundMs` for `exited`; a child still running is killed and {@link STILL_RUNNING} returned. */
export async function signalAndWait(
  child: ChildProcess,
  exited: Promise<number | null>,
  signal: NodeJS.Signals,
  boundMs = 10_000,
): Promise<number | null | string> {
  child.kill(signal);
  let timer: NodeJS.Timeout | undefined;
  const code = await Promise.race([exited, new Promise<string>((r) => (timer = setTimeout(() => r(STILL_RUNNING), boundMs)))]);
  clearTimeout(timer);
  if (code === STILL_RUNNING) child.kill('SIGKILL');
  return code;
}

/** Whether a process with this pid still runs (signal 0 checks without signalling). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
