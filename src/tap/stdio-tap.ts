/**
 * The stdio tap: a transparent shim between a host and an MCP server process.
 *
 * Invariants:
 * - Every byte is forwarded unchanged and in order: host stdin -> child stdin, child stdout -> our
 *   stdout, child stderr -> our stderr. Forwarding happens before the pipeline sees the bytes.
 *   The one opt-in exception is `injectTraceContext`: host->server request lines are then rewritten
 *   to carry the tap's span context in `params._meta.traceparent` (see RequestLineRewriter); the
 *   pipeline sees exactly the bytes the server got. Without it the chunks pass untouched.
 * - Nothing but forwarded child stdout is ever written to our stdout.
 * - Backpressure is honoured both ways (a slow reader pauses the writer), so memory stays bounded.
 * - The child's exit code is ours; signals sent to us are passed on to the child.
 * - A host that closes our stdout has left, as when our stdin ends: the child's stdin is ended.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { spawnServer, type SpawnedServer } from './spawn-server.js';
import type { Readable, Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { constants as osConstants } from 'node:os';
import type { PipelineInput } from '../pipeline/pipeline-input.js';
import type { Direction, Channel } from '../model/frame.js';
import type { Logger } from '../util/logger.js';
import type { TraceContextMinter } from '../telemetry/trace-context-minter.js';
import { RequestLineRewriter } from './request-line-rewriter.js';

export interface StdioTapOptions {
  command: string;
  args: string[];
  pipeline: PipelineInput;
  logger: Logger;
  stdin?: Readable;
  stdout?: Writable;
  stderr?: Writable;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  connectionId?: string;
  /** How long to wait after passing on a signal before killing the child. Default 5 s. */
  killAfterMs?: number;
  /** Kill the server if the tap itself is killed (see startReaper). Default on (POSIX only). */
  reaper?: boolean;
  /** `--inject-trace-context`: write this minter's contexts into host->server requests. */
  injectTraceContext?: TraceContextMinter;
  /** Longest host line held back for rewriting in `injectTraceContext` mode. Default 64 MiB. */
  maxLineBytes?: number;
  /** The server, already spawned (`command` and `args` are then what it was spawned with); spawned here when absent. */
  server?: SpawnedServer;
}

export interface StdioTapResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
}

export interface StdioTap {
  readonly child: ChildProcess;
  readonly done: Promise<StdioTapResult>;
  /** Pass a signal on to the child (and kill it if it does not exit in time). */
  signal(sig: NodeJS.Signals): void;
}

/** Spawn the server (or take `server`) and start forwarding. Rejects with a McptapError when the command cannot start. */
export async function startStdioTap(opts: StdioTapOptions): Promise<StdioTap> {
  const { pipeline, logger } = opts;
  const stdin = opts.stdin ?? process.stdin;
  const stdout = opts.stdout ?? process.stdout;
  const stderr = opts.stderr ?? process.stderr;
  const connectionId = opts.connectionId ?? 'stdio';
  const server = opts.server ?? spawnServer(opts.command, opts.args, { ...(opts.env ? { env: opts.env } : {}), ...(opts.cwd ? { cwd: opts.cwd } : {}) });
  const child = server.child;
  await server.started;
  child.on('error', (err) => logger.warn(`server process error: ${err.message}`));

  const target = [server.command, ...server.args].join(' ');
  pipeline.openConnection({ connectionId, transport: 'stdio', target, ...(child.pid ? { pid: child.pid } : {}) });

  const tap = (direction: Direction, channel: Channel) => (bytes: Buffer) =>
    pipeline.pushChunk({ connectionId, direction, channel, bytes, timeUs: pipeline.clock.nowUs() });

  const minter = opts.injectTraceContext;
  let toServer: Forwarding;
  if (minter) {
    const rewriter = new RequestLineRewriter((req) => minter.inject(connectionId, 'c2s', req), opts.maxLineBytes ? { maxLineBytes: opts.maxLineBytes } : {});
    toServer = forwardRewritten(stdin, child.stdin!, rewriter, tap('c2s', 'stdio'));
  } else {
    toServer = forward(stdin, child.stdin!, tap('c2s', 'stdio'), true);
  }
  const output = server.takeOutput();
  // The host closed its end of our stdout (it crashed, or exited mid-call): it has left, as if its
  // stdin had ended. The server's stdin is ended so that it exits; its output is still recorded.
  const hostGone = (why: string) => {
    if (!toServer.stop()) return;
    logger.info(`the host closed its end of stdout (${why}): ending the server's stdin, as when the host's stdin ends`);
  };
  forward(
    output.stdout,
    stdout,
    tap('s2c', 'stdio'),
    false,
    (err) => logger.warn(`writing the server's output to stdout failed (${err.code ?? err.message}): what it writes from now on is lost`),
    hostGone,
  );
  forward(output.stderr, stderr, tap('s2c', 'stderr'), false);
  // On the next turn: spawning the reaper takes milliseconds the host's first request would wait for.
  let reaper: ReturnType<typeof startReaper> | undefined;
  let exited = false;
  if (opts.reaper !== false) setImmediate(() => !exited && child.exitCode === null && child.signalCode === null && (reaper = startReaper(child, logger)));

  // Exit is final only once stdout/stderr have drained: the child's 'close' (which may have come
  // before the tap attached) and the end of what the tap reads, which is not the child's pipes then.
  const drained = (s: Readable) => finished(s).catch(() => {});
  const done = new Promise<StdioTapResult>((resolve) => {
    void Promise.all([server.closed, drained(output.stdout), drained(output.stderr)]).then(([{ exitCode, signal }]) => {
      exited = true;
      reaper?.release();
      stdin.unpipe?.();
      if (stdin === process.stdin) process.stdin.pause();
      pipeline.closeConnection(connectionId, {
        reason: signal ? `killed by ${signal}` : `exited with code ${exitCode}`,
        exitCode,
        signal,
        errorClass: 'child_exit',
      });
      resolve({ exitCode, signal });
    });
  });

  let killTimer: NodeJS.Timeout | undefined;
  const signal = (sig: NodeJS.Signals) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill(sig);
    killTimer ??= setTimeout(() => child.kill('SIGKILL'), opts.killAfterMs ?? 5000);
    killTimer.unref();
  };
  void done.then(() => killTimer && clearTimeout(killTimer));
  return { child, done, signal };
}

/**
 * A process that SIGKILLs the server if the tap dies first (SIGKILL, a crash), so wrapping a server
 * never leaves it running where the host would have killed it: a host's own SIGKILL after its
 * grace period hits the tap, not the server. A POSIX shell blocked reading a pipe from the tap:
 * end of file (the tap is gone) means kill; a line from the tap (the server exited) means leave.
 * It ignores the signals a terminal sends the whole process group; `reaper: false` turns it off.
 */
function startReaper(child: ChildProcess, logger: Logger): { release(): void } | undefined {
  if (process.platform === 'win32' || child.pid === undefined) return undefined;
  const script = `trap '' INT TERM HUP QUIT; if read _; then exit 0; fi; kill -KILL "$1" 2>/dev/null; exit 0`;
  let reaper: ChildProcess;
  try {
    reaper = spawn('/bin/sh', ['-c', script, 'mcptap-reaper', String(child.pid)], { stdio: ['pipe', 'ignore', 'ignore'] });
  } catch (err) {
    logger.debug(`no reaper for the server (${(err as Error).message}); it may outlive a killed tap`);
    return undefined;
  }
  reaper.on('error', (err) => logger.debug(`no reaper for the server (${err.message}); it may outlive a killed tap`));
  reaper.stdin!.on('error', () => {});
  // Neither the reaper nor its pipe keeps the tap running.
  reaper.unref();
  (reaper.stdin as unknown as { unref?: () => void }).unref?.();
  return { release: () => reaper.stdin!.end('\n') };
}

/** A forwarding of the host's stdin to the server. */
interface Forwarding {
  /** Forwards no more and ends the target, as the source's end does; false when it had stopped already. */
  stop(): boolean;
}

/**
 * Copy `from` to `to` chunk by chunk, tapping each chunk after it is written. Pauses `from` while
 * `to` is full. `endTarget`: end `to` when `from` ends (host EOF closes the child's stdin).
 * `onError`: told once when writing fails for another reason than the reader going away.
 * `onGone`: told when `to` is gone (its reader went away: EPIPE, or it closed without an error).
 */
function forward(
  from: Readable,
  to: Writable,
  tapChunk: (b: Buffer) => void,
  endTarget: boolean,
  onError?: (err: NodeJS.ErrnoException) => void,
  onGone?: (why: string) => void,
): Forwarding {
  let broken = false;
  to.on('error', (err: NodeJS.ErrnoException) => {
    // Either way keep draining `from`, so the other side never blocks on us.
    if (!broken && err.code !== 'EPIPE') onError?.(err);
    // A reader that went away has left; another failure (a full disk) is only said.
    if (!broken && err.code === 'EPIPE') onGone?.('EPIPE');
    broken = true;
  });
  to.once('close', () => !broken && onGone?.('closed'));
  const fwd = stoppable(
    from,
    (chunk) => {
      if (!broken && !to.write(chunk)) {
        from.pause();
        to.once('drain', () => !fwd.stopped() && from.resume());
      }
      tapChunk(chunk);
    },
    () => endTarget && !broken && to.end(),
  );
  if (endTarget) from.once('end', fwd.stop);
  return fwd;
}

/**
 * Like {@link forward} for host stdin in `injectTraceContext` mode: whole lines go through the
 * rewriter, and what it returns is both written and tapped (so the recording holds what the server
 * got). Host EOF (or `stop`) forwards the unterminated last line unchanged, then ends the child's stdin.
 */
function forwardRewritten(from: Readable, to: Writable, rewriter: RequestLineRewriter, tapChunk: (b: Buffer) => void): Forwarding {
  let broken = false;
  to.on('error', () => {
    broken = true;
  });
  const send = (parts: Buffer[]): boolean => {
    let full = false;
    for (const part of parts) {
      if (!broken && !to.write(part)) full = true;
      tapChunk(part);
    }
    return full;
  };
  const fwd = stoppable(
    from,
    (chunk) => {
      if (send(rewriter.push(chunk))) {
        from.pause();
        to.once('drain', () => !fwd.stopped() && from.resume());
      }
    },
    () => {
      send(rewriter.end());
      if (!broken) to.end();
    },
  );
  from.once('end', fwd.stop);
  return fwd;
}

/** Reads `from` with `onData` until stopped; `last` runs once, at the stop (what `from`'s end does). */
function stoppable(from: Readable, onData: (chunk: Buffer) => void, last: () => void): Forwarding & { stopped(): boolean } {
  let stopped = false;
  from.on('data', onData);
  return {
    stopped: () => stopped,
    stop: () => {
      if (stopped) return false;
      stopped = true;
      from.off('data', onData);
      from.pause();
      last();
      return true;
    },
  };
}

/** The exit code a shell would report for a process killed by `signal`. */
export function serverExitCode(result: StdioTapResult): number {
  if (result.exitCode !== null) return result.exitCode;
  const num = result.signal ? (osConstants.signals as Record<string, number>)[result.signal] : undefined;
  return 128 + (num ?? 1);
}
