/**
 * `mcptap stdio`: the server is spawned first thing, before commander, the pipeline and the sinks
 * are loaded, so that its start-up runs beside ours instead of after it (docs/performance.md,
 * "Start-up"). Only the server command is read here; the flags are parsed afterwards as always.
 * The stdio command takes the server when it is the one it would spawn; one nobody takes (bad
 * flags, a failure before the tap starts) is killed, having been sent no byte. Until taken, its
 * output waits unread in its pipes, and a stop signal to mcptap is passed on to it.
 * Deliberately small: this module loads before everything else on that path.
 */
import { spawnServer, type SpawnedServer } from '../tap/spawn-server.js';

/** The stdio command's options that take a value, and those that take none (a test keeps both in step with stdio.ts). */
export const STDIO_VALUE_OPTIONS: ReadonlySet<string> = new Set([
  '--record',
  '--redact',
  '--max-line-bytes',
  '--log-level',
  '--otlp',
  '--metrics',
  '--service-name',
  '--check',
]);
export const STDIO_FLAG_OPTIONS: ReadonlySet<string> = new Set(['--require-recording', '--capture-content', '--inject-trace-context', '--print']);

/** The signals a tap passes on to its server (defined here, the first module `mcptap stdio` loads). */
export const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * The server command of `mcptap stdio [options] [--] <command> [args...]` (argv without node and
 * the script), read as commander reads it; undefined for anything else, and whenever in doubt
 * (help, an unknown option, a missing command): then nothing is spawned early.
 */
export function stdioServerCommand(argv: readonly string[]): { command: string; args: string[] } | undefined {
  if (argv[0] !== 'stdio') return undefined;
  for (let i = 1; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') return commandAt(argv, i + 1);
    if (arg.length < 2 || !arg.startsWith('-')) return commandAt(argv, i);
    const name = arg.startsWith('--') && arg.includes('=') ? arg.slice(0, arg.indexOf('=')) : arg;
    if (STDIO_VALUE_OPTIONS.has(name)) {
      if (name === arg) i++; // the value is the next argument, whatever it looks like (as commander takes it)
    } else if (!STDIO_FLAG_OPTIONS.has(arg)) {
      return undefined;
    }
  }
  return undefined;
}

function commandAt(argv: readonly string[], i: number): { command: string; args: string[] } | undefined {
  const command = argv[i];
  return command === undefined || command.trim() === '' ? undefined : { command, args: argv.slice(i + 1) };
}

let early: { server: SpawnedServer; onSignal: (sig: NodeJS.Signals) => void } | undefined;

/** Spawns the server now if `argv` is a `mcptap stdio` command line, and returns it; otherwise does nothing. */
export function spawnStdioServerEarly(argv: readonly string[]): SpawnedServer | undefined {
  const wanted = stdioServerCommand(argv);
  if (!wanted || early) return undefined;
  let server: SpawnedServer;
  try {
    server = spawnServer(wanted.command, wanted.args);
  } catch {
    return undefined; // refused outright: the stdio command tries again and says why, as it always has
  }
  // A stop signal before the tap is up: the server gets it, then mcptap obeys it as it would have.
  const onSignal = (sig: NodeJS.Signals) => {
    server.child.kill(sig);
    untrap();
    process.kill(process.pid, sig);
  };
  for (const s of STOP_SIGNALS) process.on(s, onSignal);
  early = { server, onSignal };
  return server;
}

function untrap(): void {
  if (early) for (const s of STOP_SIGNALS) process.off(s, early.onSignal);
}

/** The server spawned early, if it runs `command args` (the caller owns it from now on); another one is killed. */
export function takeEarlyServer(command: string, args: readonly string[]): SpawnedServer | undefined {
  if (!early) return undefined;
  const { server } = early;
  if (server.command !== command || server.args.length !== args.length || server.args.some((a, i) => a !== args[i])) {
    dropEarlyServer();
    return undefined;
  }
  untrap();
  early = undefined;
  return server;
}

/** Kills the server spawned early if nobody took it: the command failed before starting the tap. */
export function dropEarlyServer(): void {
  if (!early) return;
  const { child } = early.server;
  untrap();
  early = undefined;
  child.kill('SIGKILL');
  for (const stream of [child.stdin, child.stdout, child.stderr]) stream?.destroy();
  child.unref();
}
