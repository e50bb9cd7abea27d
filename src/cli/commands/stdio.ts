/**
 * `mcptap stdio [--record FILE] -- <command> [args...]`: the stdio tap as a drop-in wrapper for a
 * server command in any host's MCP config.
 */
import type { Command } from 'commander';
import { startStdioTap, serverExitCode } from '../../tap/stdio-tap.js';
import { openTapPipeline } from '../../pipeline/tap-pipeline.js';
import {
  closeObeyingSignals,
  pipelineTuning,
  REDACT_OPTION_HELP,
  redactRulesFromFlags,
  RECORDING_HELP,
  recordingFromFlags,
  sayMetricsUrl,
  STOP_SIGNALS,
  PRINT_OPTION_HELP,
  printFromFlags,
} from '../tap-flags.js';
import { createLogger, type LogLevel } from '../../util/logger.js';
import { McptapError } from '../../errors.js';
import { ExitCode } from '../exit-codes.js';
import { CHECK_OPTION_HELP, checkFromFlags } from '../check-flags.js';
import { addTelemetryOptions, telemetryConfigFromOptions } from '../telemetry-options.js';
import { logLevelOption } from '../log-level-option.js';
import { takeEarlyServer } from '../early-server.js';
import { MAX_LINE_BYTES_FLAGS, TAP_FLAGS } from '../stdio-option-flags.js';

interface StdioFlags {
  record?: string;
  requireRecording?: boolean;
  redact?: string;
  check?: string;
  print?: boolean;
  maxLineBytes?: string;
  logLevel: LogLevel;
  [telemetryFlag: string]: unknown;
}

export function register(program: Command): void {
  const cmd = program
    .command('stdio')
    .summary('wrap a stdio MCP server: forward every byte, record and trace every exchange')
    .description(
      'Spawns <command> and sits between the host and it: host stdin -> server stdin, server stdout -> host stdout, ' +
        "byte for byte. The server's stderr passes through to stderr and is recorded as log lines. mcptap writes " +
        'nothing of its own to stdout; its messages go to stderr. Exit code and signals pass through.',
    )
    .argument('<command>', 'the server command to run')
    .argument('[args...]', 'its arguments (put -- before the command so its flags are not read as mcptap flags)')
    .option(
      TAP_FLAGS.record,
      'record every frame and exchange to this SQLite file (created if missing); traffic is spooled first and indexed when the CPU is idle, so under heavy load the recording completes when the tap ends',
    )
    .option(
      TAP_FLAGS.requireRecording,
      "stop the server rather than let traffic pass unrecorded if recording fails; the host's traffic waits until the recording works",
    )
    .option(TAP_FLAGS.redact, REDACT_OPTION_HELP)
    .option(TAP_FLAGS.check, CHECK_OPTION_HELP)
    .option(TAP_FLAGS.print, PRINT_OPTION_HELP)
    .option(MAX_LINE_BYTES_FLAGS, 'longest line decoded (longer lines are still forwarded)', String(64 * 1024 * 1024))
    .addOption(logLevelOption('warn'))
    .passThroughOptions();
  addTelemetryOptions(cmd)
    .addHelpText(
      'after',
      `
Examples:
  mcptap stdio --record tap.db -- npx -y @modelcontextprotocol/server-everything stdio
  mcptap stdio --record tap.db -- node ./my-server.js --verbose

In a host config (Claude Code .mcp.json, VS Code mcp.json, Cursor mcp.json) replace
  "command": "node", "args": ["server.js"]
with
  "command": "node", "args": ["/path/to/mcptap/bin/mcptap.js", "stdio", "--record", "/tmp/tap.db", "--", "node", "server.js"]
(not npx: on SIGTERM from the host, npm's wrapper exits without passing it on and leaves the tap running)
${RECORDING_HELP}`,
    )
    .action(async (command: string, args: string[], flags: StdioFlags) => {
      process.exitCode = await runStdio(command, args, flags);
    });
}

async function runStdio(command: string, args: string[], flags: StdioFlags): Promise<number> {
  const logger = createLogger(flags.logLevel);
  const maxLineBytes = Number(flags.maxLineBytes);
  if (!Number.isInteger(maxLineBytes) || maxLineBytes <= 0) {
    throw new McptapError('MCPTAP_BAD_FLAG', `--max-line-bytes must be a positive integer, got ${JSON.stringify(flags.maxLineBytes)}`);
  }
  const telemetry = telemetryConfigFromOptions(flags);
  let fatal: Error | undefined;
  const sinks = await openTapPipeline({
    logLevel: flags.logLevel,
    maxLineBytes,
    transport: 'stdio',
    target: [command, ...args].join(' '),
    logger,
    telemetry,
    injectsTraceContext: true,
    ...(await redactRulesFromFlags(flags)),
    ...(await checkFromFlags(flags)),
    ...printFromFlags(flags),
    ...pipelineTuning(),
    recording: recordingFromFlags(flags),
    onFatal: (err) => {
      fatal = err;
      logger.error(`recording failed and --require-recording is set; stopping the server: ${err.message}`);
      tap?.signal('SIGTERM');
    },
  });
  let tap: Awaited<ReturnType<typeof startStdioTap>> | undefined;
  sayMetricsUrl('stdio', sinks, flags.logLevel);
  const minter = sinks.minter;
  if (telemetry.injectTraceContext && !minter)
    logger.warn('--inject-trace-context has no effect without span export (--otlp, or OTEL_TRACES_EXPORTER); forwarding bytes unchanged');
  try {
    const server = takeEarlyServer(command, args);
    tap = await startStdioTap({
      command,
      args,
      ...(server ? { server } : {}),
      pipeline: sinks.input,
      logger,
      maxLineBytes,
      ...(minter ? { injectTraceContext: minter } : {}),
    });
  } catch (err) {
    await sinks.close(`the server did not start: ${(err as Error).message}`);
    throw err;
  }
  const onSignal = (sig: NodeJS.Signals) => tap?.signal(sig);
  for (const s of STOP_SIGNALS) process.on(s, onSignal);
  const result = await tap.done;
  for (const s of STOP_SIGNALS) process.off(s, onSignal);
  // The server is gone; a host that asks us to stop while the recording is indexed is obeyed at once.
  const exitCode = fatal ? ExitCode.Failed : serverExitCode(result);
  const closed = await closeObeyingSignals(sinks, { logger, exitCode, ...(flags.record ? { record: flags.record } : {}) });
  for (const line of closed.lines) logger.warn(line);
  // The recording may fail while its backlog is indexed, after the server is gone: still a failure.
  return fatal ? ExitCode.Failed : closed.exitCode;
}
