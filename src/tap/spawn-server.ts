/**
 * Spawning the server a stdio tap wraps, apart from the tap itself, so that the CLI can spawn it
 * before it has loaded the rest of mcptap and hand it to the tap later (see cli/early-server.ts).
 * The child's pipes stay unread until the tap attaches: nothing it writes is lost or reordered.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { PassThrough, type Readable } from 'node:stream';
import { McptapError } from '../errors.js';

export interface SpawnedServer {
  readonly command: string;
  readonly args: readonly string[];
  /** Spawned with stdin, stdout and stderr piped. */
  readonly child: ChildProcess;
  /** Resolves once the process runs; rejects with MCPTAP_SPAWN_FAILED when it could not start. */
  readonly started: Promise<void>;
  /** Resolves with how the process ended once it exited and its pipes closed, even before anyone listens. */
  readonly closed: Promise<{ exitCode: number | null; signal: NodeJS.Signals | null }>;
  /** The server's stdout and stderr for the tap to read (call once, when it attaches). */
  takeOutput(): { stdout: Readable; stderr: Readable };
}

/** Spawn `command`; throws MCPTAP_SPAWN_FAILED when spawn refuses it outright (an empty command, a NUL byte). */
export function spawnServer(command: string, args: readonly string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): SpawnedServer {
  const cannotStart = (why: string) => new McptapError('MCPTAP_SPAWN_FAILED', `cannot start server ${JSON.stringify(command)}: ${why}`);
  if (command.trim() === '') throw cannotStart('the command is empty');
  let child: ChildProcess;
  try {
    child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], ...(opts.env ? { env: opts.env } : {}), cwd: opts.cwd });
  } catch (err) {
    throw cannotStart((err as Error).message);
  }
  const started = new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    // `on`, not `once`: a later error (a failed kill) before the tap attaches its own listener must not throw.
    child.on('error', (err: NodeJS.ErrnoException) => {
      reject(cannotStart(err.code === 'ENOENT' ? 'command not found' : err.code === 'EACCES' ? 'permission denied' : err.message));
    });
  });
  // Nobody may be waiting yet (the tap attaches later): the rejection is seen when it does.
  started.catch(() => {});
  const closed = new Promise<{ exitCode: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (exitCode: number | null, signal: NodeJS.Signals | null) => resolve({ exitCode, signal })),
  );
  // Node drains an exited child's unread pipes on the next tick: a server that exits before the tap
  // attaches would lose its last words. Keep them (the child is gone: what is left is bounded).
  let output: { stdout: Readable; stderr: Readable } | undefined;
  let taken = false;
  child.once('exit', () => {
    if (!taken) output = { stdout: child.stdout!.pipe(new PassThrough()), stderr: child.stderr!.pipe(new PassThrough()) };
  });
  const takeOutput = () => {
    taken = true;
    return output ?? { stdout: child.stdout!, stderr: child.stderr! };
  };
  return { command, args, child, started, closed, takeOutput };
}
