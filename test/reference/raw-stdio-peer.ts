/**
 * A raw newline-delimited JSON-RPC peer around a spawned `mcptap reference --stdio`: the tests
 * write exact messages and read every line the server writes, with bounded waits. Used where an
 * SDK client would hide the wire (e.g. a response arriving after notifications/cancelled).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { MCPTAP } from '../helpers/paths.js';

export type Message = Record<string, unknown> & { id?: unknown; method?: string };

export class RawStdioPeer {
  readonly lines: Message[] = [];
  readonly stderr: string[] = [];
  private buffered = '';
  private waiters: Array<() => void> = [];
  private readonly child: ChildProcessWithoutNullStreams;
  readonly exited: Promise<number | null>;

  /** `command`: the mcptap command line before `args` (another stdio server, e.g. `mock FILE --stdio`). */
  constructor(args: string[] = [], command: string[] = ['reference', '--stdio']) {
    this.child = spawn(process.execPath, [MCPTAP, ...command, ...args], { stdio: 'pipe' });
    this.child.stdout.setEncoding('utf8').on('data', (chunk: string) => this.onData(chunk));
    this.child.stderr.setEncoding('utf8').on('data', (chunk: string) => this.stderr.push(chunk));
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)));
  }

  send(msg: Message): void {
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...msg })}\n`);
  }

  /** Resolves with the first line (already seen or future) matching `pred`; rejects after `timeoutMs`. */
  async waitFor(pred: (m: Message) => boolean, timeoutMs = 5_000): Promise<Message> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const hit = this.lines.find(pred);
      if (hit) return hit;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no matching line within ${timeoutMs} ms; saw ${JSON.stringify(this.lines)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  response(id: unknown, timeoutMs?: number): Promise<Message> {
    return this.waitFor((m) => m.id === id && m.method === undefined, timeoutMs);
  }

  /** Close stdin (the server exits on EOF) and wait for the exit, bounded. */
  async close(): Promise<number | null> {
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5_000);
    const code = await this.exited;
    clearTimeout(timer);
    return code;
  }

  private onData(chunk: string): void {
    this.buffered += chunk;
    let nl: number;
    while ((nl = this.buffered.indexOf('\n')) >= 0) {
      const line = this.buffered.slice(0, nl).trim();
      this.buffered = this.buffered.slice(nl + 1);
      if (line) this.lines.push(JSON.parse(line) as Message);
    }
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}

/** The 2026-07-28 per-request envelope. */
export function modernMeta(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': {},
    'io.modelcontextprotocol/clientInfo': { name: 'raw-test', version: '0' },
    ...extra,
  };
}
