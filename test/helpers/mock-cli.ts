/**
 * `mcptap mock FILE --http 127.0.0.1:0` (the built CLI) as a child process: resolves with its URL
 * once it says where it serves; `stop()` sends SIGTERM and resolves with its exit code and stderr.
 */
import { spawn } from 'node:child_process';
import { MCPTAP } from './paths.js';

export interface MockChild {
  url: string;
  stderr(): string;
  stop(): Promise<{ code: number | null; stderr: string }>;
}

export async function startMockHttp(file: string, flags: string[] = []): Promise<MockChild> {
  const child = spawn(process.execPath, [MCPTAP, 'mock', file, '--http', '127.0.0.1:0', ...flags], { stdio: ['ignore', 'ignore', 'pipe'] });
  let text = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`mcptap mock did not start: ${text}`)), 20_000);
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      text += chunk;
      const m = / on (http:\/\/\S+)/.exec(text);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`mcptap mock exited (${code}): ${text}`));
    });
  });
  return {
    url,
    stderr: () => text,
    stop: async () => {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      const code = await exited;
      clearTimeout(timer);
      return { code, stderr: text };
    },
  };
}

/** Runs `mcptap mock ARGS` to its end (bounded: 20 s): for the usage and bad-input cases. */
export function runMock(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [MCPTAP, 'mock', ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin.end();
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}
