/**
 * `mcptap ui` as users run it (the built CLI) on a free loopback port: resolves with the URL it
 * prints (bounded: 15 s), and plain HTTP requests to it with any Host, Origin or cookie.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { MCPTAP } from './paths.js';

export interface UiCli {
  child: ChildProcess;
  /** The printed URL, with its token. */
  url: string;
  origin: string;
  token: string;
  stderr(): string;
  stop(): Promise<void>;
}

export function startUi(files: string[], flags: string[] = [], env: NodeJS.ProcessEnv = process.env): Promise<UiCli> {
  const child = spawn(process.execPath, [MCPTAP, 'ui', ...files, '--listen', '127.0.0.1:0', ...flags], { stdio: ['ignore', 'pipe', 'pipe'], env });
  let err = '';
  child.stdout!.on('data', (b: Buffer) => (err += `[stdout] ${b.toString()}`));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`mcptap ui did not start: ${err}`)), 15_000);
    child.stderr!.on('data', (b: Buffer) => {
      err += b.toString();
      const m = /open (http:\/\/\S+)\?token=(\S+)/.exec(err);
      if (!m) return;
      clearTimeout(timer);
      resolve({
        child,
        url: `${m[1]}?token=${m[2]}`,
        origin: m[1]!,
        token: m[2]!,
        stderr: () => err,
        stop: async () => {
          if (child.exitCode === null) child.kill('SIGTERM');
          await exited;
        },
      });
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`mcptap ui exited ${code}: ${err}`));
    });
  });
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** GET (or `method`) `url` with exactly these headers (Host included when given). */
export function get(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, timeout: 10_000 }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url} timed out`)));
    req.on('error', reject);
    req.end();
  });
}
