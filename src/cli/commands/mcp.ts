/**
 * `mcptap mcp FILE.db [FILE.db ...] (--stdio | --http HOST:PORT)`: an MCP server over recordings,
 * read-only, for a coding agent to query captured traffic (src/explore/).
 */
import { Option, type Command } from 'commander';
import { McptapError } from '../../errors.js';
import { RecordingExplorer } from '../../explore/recording-explorer.js';
import { serveExplorerHttp, serveExplorerStdio } from '../../explore/explore-serve.js';
import { createLogger, type LogLevel } from '../../util/logger.js';
import { listenError } from '../listen-error.js';
import { logLevelOption } from '../log-level-option.js';
import { parseHostPort, untilSignal } from '../serve-flags.js';

interface McpFlags {
  stdio?: boolean;
  http?: string;
  allowedHost?: string[];
  allowedOrigin?: string[];
  logLevel: LogLevel;
}

const collect = (v: string, prev: string[] = []) => [...prev, v];

export function register(program: Command): void {
  program
    .command('mcp')
    .summary('serve recordings to an MCP client (a coding agent): find, inspect and compare recorded exchanges')
    .description(
      'An MCP server over recording files, opened read-only (nothing is ever written to them). Both protocol eras ' +
        '(legacy initialize sessions and 2026-07-28), over stdio or Streamable HTTP. Tools: list_recordings, ' +
        'find_exchanges (filters: method, tool, target, outcome, connection, session, latency range, text in the ' +
        'request or response; paged, or the slowest first), get_exchange (messages, timings, SSE events, frames, anomalies), ' +
        'latency_summary (p50/p90/p99 per method and tool), anomalies, compare_recordings. Each recording is also ' +
        'a resource, mcptap://recording/FILE/N. Results are compact: a page says how many more match. Secrets ' +
        'are as recorded: redacted.',
    )
    .argument('<files...>', 'recording files (written with --record); a tool names one by its base name')
    .addOption(new Option('--stdio', 'serve on stdin/stdout (what an MCP host launches)').conflicts('http'))
    .addOption(new Option('--http <host:port>', 'serve Streamable HTTP at http://HOST:PORT/mcp (port 0: any free port)'))
    .option('--allowed-host <host>', 'with --http: another Host header to accept (repeatable; loopback names always are)', collect)
    .option('--allowed-origin <origin>', 'with --http: another browser Origin to accept (repeatable)', collect)
    .addOption(logLevelOption('warn'))
    .addHelpText(
      'after',
      `
Over HTTP only loopback names are accepted in Host (and Origin, when a browser sends one): a web page
on another domain that resolves to this machine gets 403 (DNS rebinding). Bind a non-loopback address
only on purpose, with --allowed-host naming how clients reach it.

Exit codes: 0 ok (stdin closed, or SIGINT/SIGTERM), 2 bad command line, 4 a file that is not a recording.

Examples:
  mcptap mcp tap.db --stdio
  mcptap mcp before.db after.db --http 127.0.0.1:7081
  claude mcp add recordings -- node /opt/mcptap/bin/mcptap.js mcp /abs/path/tap.db --stdio   # Claude Code
  # VS Code, .vscode/mcp.json:
  #   {"servers": {"recordings": {"type": "stdio", "command": "node", "args": ["/opt/mcptap/bin/mcptap.js", "mcp", "\${workspaceFolder}/tap.db", "--stdio"]}}}
Then ask the agent: "which calls to search were slow in tap.db, and what did they send?"`,
    )
    .action(async (files: string[], flags: McpFlags) => {
      if (!flags.stdio && flags.http === undefined) throw new McptapError('MCPTAP_BAD_FLAG', 'mcp needs --stdio or --http HOST:PORT');
      const logger = createLogger(flags.logLevel);
      const explorer = RecordingExplorer.open(files);
      try {
        if (flags.stdio) {
          const served = serveExplorerStdio(explorer, { stdin: process.stdin, stdout: process.stdout, logger });
          await Promise.race([served.closed, untilSignal()]);
          await served.close();
          return;
        }
        const { host, port } = parseHostPort(flags.http ?? '');
        const served = await serveExplorerHttp(explorer, {
          host,
          port,
          logger,
          ...(flags.allowedHost ? { allowedHosts: flags.allowedHost } : {}),
          ...(flags.allowedOrigin ? { allowedOrigins: flags.allowedOrigin } : {}),
        }).catch((err: unknown) => {
          throw listenError(`${host}:${port}`, err) ?? new McptapError('MCPTAP_LISTEN', `cannot listen on ${host}:${port}: ${(err as Error).message}`);
        });
        process.stderr.write(`mcptap mcp: listening on ${served.url}\n`);
        await untilSignal();
        await served.close();
      } finally {
        explorer.close();
      }
    });
}
