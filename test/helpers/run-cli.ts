import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { MCPTAP } from './paths.js';

export interface CliRun {
  /** The exit code; -1 when the run was killed (its timeout). */
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI to its end without blocking (independent runs may go side by side), NO_COLOR set. */
export async function runCli(args: string[], timeoutMs = 60_000): Promise<CliRun> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [MCPTAP, ...args], { timeout: timeoutMs, env: { ...process.env, NO_COLOR: '1' } });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}
