/**
 * `mcptap http` as users run it (the built CLI), started on a free loopback port: resolves once it
 * says where it listens (bounded: 15 s). Whatever it writes to stdout (it never should) shows in
 * `stderr()` after a `[stdout]` mark, so a test can assert there is none.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { startEverything } from './http-peers.js';
import { MCPTAP } from './paths.js';

export interface HttpTapCli {
  child: ChildProcess;
  url: string;
  stderr(): string;
  exited: Promise<number | null>;
}

export function startHttpTapCli(upstream: string, flags: string[] = [], env: NodeJS.ProcessEnv = process.env): Promise<HttpTapCli> {
  const child = spawn(process.execPath, [MCPTAP, 'http', '--upstream', upstream, '--listen', '127.0.0.1:0', ...flags], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
  });
  let err = '';
  let out = '';
  child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const stderr = () => err + (out ? `\n[stdout] ${out}` : '');
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`tap did not start: ${err}`)), 15_000);
    child.stderr!.on('data', (b: Buffer) => {
      err += b.toString();
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1]!, stderr, exited });
      }
    });
    void exited.then((code) => reject(new Error(`tap exited ${code}: ${err}`)));
  });
}

/**
 * Records `drive`'s traffic to server-everything (Streamable HTTP) through `mcptap http --record db`;
 * the tap and the server stopped after, whatever `drive` did.
 */
export async function recordEverythingThroughTap(db: string, drive: (tapUrl: string) => Promise<void>): Promise<void> {
  const server = await startEverything('streamableHttp');
  try {
    const tap = await startHttpTapCli(server.url, ['--record', db]);
    try {
      await drive(tap.url);
    } finally {
      tap.child.kill('SIGTERM');
      await tap.exited;
    }
  } finally {
    await server.stop();
  }
}
