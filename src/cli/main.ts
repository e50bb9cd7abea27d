/**
 * The commander program. Thin by rule: each command file maps flags to typed options and calls
 * the library; nothing here is needed to use mcptap as a library (see src/index.ts). The taps start
 * before commander is loaded: `mcptap stdio` spawns its server first, `mcptap http` runs without it.
 */
import { dropEarlyServer, spawnStdioServerEarly } from './early-server.js';
import { McptapError } from '../errors.js';
import { ExitCode, exitCodeFor } from './exit-codes.js';

/** The program's own help, after the list of commands. */
const PROGRAM_HELP = `
Examples:
  mcptap stdio --record tap.db -- npx -y @modelcontextprotocol/server-everything stdio
  mcptap http --upstream http://127.0.0.1:3001/mcp --record tap.db
  mcptap ls tap.db
  mcptap show tap.db --exchange 3
  mcptap show tap.db --follow
  mcptap mcp tap.db --stdio
  mcptap load scenarios/demo.yaml --json result.json
  mcptap export tap.db --otlp http://localhost:4318
  mcptap mock tap.db --http 127.0.0.1:7070
  mcptap reference --http 127.0.0.1:7070

Exit codes: 0 ok, 1 failed (differences found), 2 usage, 3 threshold failed, 4 invalid input,
5 target unavailable, 70 internal error.`;

const argv = process.argv.slice(2);
// `mcptap stdio`: the server starts now, while the rest of mcptap loads (see early-server.ts).
spawnStdioServerEarly(argv);

// `mcptap … | head`: a reader that goes away is not an error of ours. (The stdio tap handles its own
// stdout errors: a host that closes our stdout has left, and the tap stops the server and closes
// its recording first; exiting here would leave the recording unclosed.)
const tapOwnsStdout = argv[0] === 'stdio';
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE' && !tapOwnsStdout) process.exit(process.exitCode ?? 0);
});

try {
  // `mcptap http`: a line the fast reader is sure of runs without commander (see http-argv.ts).
  // (Both modules load at once; commander's http command runs http-run.js too.)
  const [http, run] = argv[0] === 'http' ? await Promise.all([import('./http-argv.js'), import('./commands/http-run.js')]) : [];
  const flags = http?.readHttpArgv(argv);
  if (run && flags) process.exitCode = await run.runHttp(flags);
  else await runProgram(argv);
} catch (caught) {
  // Loaded only on this path: a tap's start-up pays for every module.
  const damaged = caught instanceof McptapError ? undefined : await import('../util/damaged-database.js');
  const err = damaged?.isDamagedDatabase(caught) ? damaged.damagedDatabaseError(caught) : caught;
  if (err instanceof McptapError) {
    process.stderr.write(`mcptap: ${err.message}\n`);
    process.exitCode = exitCodeFor(err);
  } else {
    process.stderr.write(`mcptap: internal error: ${(err as Error)?.stack ?? String(err)}\n`);
    process.exitCode = ExitCode.Internal;
  }
} finally {
  dropEarlyServer();
}

exitOnceWritten();

/**
 * The command is done, and has closed what it opened within its own time limits (the telemetry's
 * close deadline among them). Work it abandoned on purpose, such as an OTLP export still retrying
 * against an endpoint that hangs (for up to its export timeout, 10 s by default), must not keep the
 * process alive. Output still being written gets out first. Unref'd: a process with nothing left
 * pending ends on its own before this fires.
 */
function exitOnceWritten(): void {
  const tryExit = (): void => {
    if (process.stdout.writableLength === 0 && process.stderr.writableLength === 0) process.exit();
    setTimeout(tryExit, 50).unref();
  };
  setTimeout(tryExit, 250).unref();
}

/** The commander program with the commands `argv` needs, run; its usage errors become exit codes. */
async function runProgram(argv: readonly string[]): Promise<void> {
  const [{ Command, CommanderError }, registers, { VERSION }] = await Promise.all([
    import('commander'),
    import('./commands/index.js').then((c) => c.commandsFor(argv)),
    import('../version.js'),
  ]);
  const program = new Command('mcptap')
    .description('Tap, record, replay and load-test MCP servers (stdio and Streamable HTTP, both protocol eras).')
    .version(VERSION)
    .showHelpAfterError('(run with --help for usage)')
    .enablePositionalOptions()
    .exitOverride();
  for (const register of registers) register(program);
  program.addHelpText('after', PROGRAM_HELP);
  try {
    await program.parseAsync([...process.argv.slice(0, 2), ...argv]);
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    process.exitCode = err.exitCode === 0 ? 0 : ExitCode.Usage;
  }
}
