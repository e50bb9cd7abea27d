/**
 * The reference server over stdio: newline-delimited JSON-RPC on stdin/stdout, logs on stderr.
 *
 * Era handling is the SDK's `serveStdio`: the opening message picks the era for the whole
 * connection (`initialize` -> a legacy instance pinned for the connection; a request carrying the
 * 2026-07-28 `_meta` envelope such as `server/discover` -> a modern instance).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Readable, Writable } from 'node:stream';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { createReferenceServerFactory } from './reference-mcp-server.js';
import { resolveReference, type ReferenceServerOptions } from './reference-options.js';
import type { StallSchedule } from './stall-schedule.js';

export interface ReferenceStdioOptions extends ReferenceServerOptions {
  /** Default: process.stdin. */
  stdin?: Readable;
  /** Default: process.stdout. Nothing but protocol messages is ever written here. */
  stdout?: Writable;
}

export interface ReferenceStdioHandle {
  /** Resolves when the connection ends (stdin closed, or `close()`). */
  readonly closed: Promise<void>;
  close(): Promise<void>;
  /** Epoch ms the stall schedule is anchored at (the server start). */
  readonly startedAtEpochMs: number;
  /** The first I/O failure (a write to stdout that failed, other than the reader going away), if any. */
  ioError(): string | undefined;
}

/**
 * The SDK's stdio transport with two additions: outgoing messages wait out stall windows (in
 * order: a queue keeps the wire order intact), and `closed` tells when the connection ended.
 */
class ReferenceStdioTransport extends StdioServerTransport {
  private queue: Promise<void> = Promise.resolve();
  private markClosed!: () => void;
  readonly closed = new Promise<void>((resolve) => (this.markClosed = resolve));

  constructor(
    stdin: Readable,
    stdout: Writable,
    private readonly schedule: StallSchedule | undefined,
  ) {
    super(stdin, stdout);
  }

  override send(message: JSONRPCMessage): Promise<void> {
    const schedule = this.schedule;
    if (!schedule) return super.send(message);
    const sent = this.queue.then(async () => {
      const wait = schedule.delayMs();
      if (wait > 0) await sleep(wait);
      await super.send(message);
    });
    this.queue = sent.catch(() => undefined);
    return sent;
  }

  override async close(): Promise<void> {
    await super.close();
    this.markClosed();
  }
}

/** Serve the reference server on stdin/stdout until stdin closes or `close()` is called. */
export async function runReferenceStdio(opts: ReferenceStdioOptions = {}): Promise<ReferenceStdioHandle> {
  const { behaviour, schedule } = resolveReference(opts, 'stdio');
  const transport = new ReferenceStdioTransport(opts.stdin ?? process.stdin, opts.stdout ?? process.stdout, schedule);
  let ioError: string | undefined;
  const handle = serveStdio(createReferenceServerFactory(behaviour), {
    transport,
    onerror: (err) => {
      // A system error (ENOBUFS on a huge burst of output, say) ends the connection with answers
      // unsent: the command says so on the way out (exit 1). Protocol-level complaints about bad
      // input lines, and EPIPE (the host went away), are the client's business.
      const code = (err as NodeJS.ErrnoException).code;
      if (code && code !== 'EPIPE' && !code.startsWith('ERR_')) ioError ??= `${err.message}; answers still being written were lost`;
      behaviour.logger.debug(`reference stdio: ${err.message}`);
    },
  });
  behaviour.logger.debug('reference: serving MCP on stdio (both eras)');
  return {
    closed: transport.closed,
    startedAtEpochMs: behaviour.startedAtEpochMs,
    ioError: () => ioError,
    close: async () => {
      await handle.close();
      await transport.close();
    },
  };
}
