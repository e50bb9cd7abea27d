/**
 * `mcptap http --upstream URL [--listen HOST:PORT] [--record FILE]`: the HTTP tap, a transparent
 * reverse proxy in front of a Streamable HTTP (or legacy HTTP+SSE) MCP server. The options and
 * help; the run is in http-run.ts, the options' table and defaults in ../http-argv.ts.
 */
import type { Command } from 'commander';
import { DEFAULT_HTTP_TAP_HOST, DEFAULT_HTTP_TAP_PORT } from '../../tap/http-tap.js';
import { PRINT_OPTION_HELP, REDACT_OPTION_HELP, RECORDING_HELP } from '../tap-flags.js';
import { CHECK_OPTION_HELP } from '../check-flags.js';
import { addTelemetryOptions } from '../telemetry-options.js';
import { logLevelOption } from '../log-level-option.js';
import { HTTP_DEFAULTS, type HttpFlags } from '../http-argv.js';
import { runHttp } from './http-run.js';

const collect = (v: string, acc: string[]) => [...acc, v];

export function register(program: Command): void {
  const cmd = program
    .command('http')
    .summary('reverse-proxy a Streamable HTTP MCP server: forward every byte, record and trace every exchange')
    .description(
      'Listens on --listen and forwards every request to --upstream unchanged (POST, GET streams, DELETE, OPTIONS; ' +
        "both protocol eras and the deprecated HTTP+SSE transport), streaming bodies both ways. Clients use the tap's " +
        "address with the upstream's path. On a side path each exchange is recorded with its HTTP status, JSON-RPC " +
        'error, isError and transport errors kept apart.',
    )
    .requiredOption('--upstream <url>', 'the MCP server, e.g. http://127.0.0.1:3001/mcp')
    .option(
      '--listen <host:port>',
      `where to listen: HOST:PORT, HOST (port ${DEFAULT_HTTP_TAP_PORT}), PORT (host ${DEFAULT_HTTP_TAP_HOST}) or [IPv6]:PORT; binding beyond loopback needs an explicit address`,
      HTTP_DEFAULTS['--listen'],
    )
    .option(
      '--record <file>',
      'record every frame and exchange to this SQLite file (created if missing); traffic is spooled first and indexed when the CPU is idle, so under heavy load the recording completes when the tap ends',
    )
    .option('--require-recording', 'stop the tap rather than let traffic pass unrecorded if recording fails; the listener opens once the recording works')
    .option('--connect-timeout <ms>', 'upstream TCP connect timeout (then 504)', HTTP_DEFAULTS['--connect-timeout'])
    .option('--response-timeout <ms>', "time allowed until the upstream's response headers, 0 = none (then 504)", HTTP_DEFAULTS['--response-timeout'])
    .option('--idle-timeout <ms>', 'longest silence inside a response body, 0 = none (long-lived SSE streams)', HTTP_DEFAULTS['--idle-timeout'])
    .option('--max-body <bytes>', 'largest request body forwarded (larger: 413)', HTTP_DEFAULTS['--max-body'])
    .option('--max-header <bytes>', 'largest request line and headers a client may send (larger: 431)', HTTP_DEFAULTS['--max-header'])
    .option('--header-timeout <ms>', "time a client has to send a request's headers (then 408 and closed: slowloris)", HTTP_DEFAULTS['--header-timeout'])
    .option('--request-timeout <ms>', 'time a client has to send a whole request, headers and body (then 408), 0 = none', HTTP_DEFAULTS['--request-timeout'])
    .option(
      '--drain-timeout <ms>',
      'on SIGINT/SIGTERM, how long requests in flight may take to finish before they are cut (new ones get 503; GET streams are cut at once); 0 = cut at once',
      HTTP_DEFAULTS['--drain-timeout'],
    )
    .option('--allowed-host <host>', 'also accept this Host header (name, or name:port); repeatable', collect, [])
    .option('--allowed-origin <origin>', 'also accept this Origin (name, or scheme://host:port); repeatable', collect, [])
    .option('--redact-header <name>', 'also store this header only as a keyed-hash token; repeatable', collect, [])
    .option('--redact <file>', REDACT_OPTION_HELP)
    .option('--check <file>', CHECK_OPTION_HELP)
    .option('--print', PRINT_OPTION_HELP)
    .addOption(logLevelOption(HTTP_DEFAULTS['--log-level']));
  addTelemetryOptions(cmd)
    .addHelpText(
      'after',
      `
Examples:
  mcptap http --upstream http://127.0.0.1:3001/mcp --record tap.db
      then point the client at http://127.0.0.1:${DEFAULT_HTTP_TAP_PORT}/mcp
  mcptap http --upstream http://127.0.0.1:3001/sse --listen 127.0.0.1:8080     (deprecated HTTP+SSE)
  mcptap http --upstream https://mcp.example.com/mcp --listen 0.0.0.0:${DEFAULT_HTTP_TAP_PORT} --allowed-host tap.lan

Timeouts take ms, or a duration with its unit (--connect-timeout 5s, --idle-timeout 10m).

Authorization, Cookie, Set-Cookie (and --redact-header names) pass through untouched but are recorded
only as keyed-hash tokens (set MCPTAP_REDACT_KEY to make tokens comparable across runs). Proxy-Authorization
is for the tap as a proxy (hop-by-hop): it is not forwarded, nor recorded.
${RECORDING_HELP}

Stopping (SIGINT/SIGTERM): the tap stops accepting, lets the tool calls in flight finish for up to
--drain-timeout (a rolling restart does not fail them), then flushes the recording and telemetry and exits 0.
The same signal again cuts the calls still in flight (recorded as tap_closed).`,
    )
    .action(async (flags: HttpFlags) => {
      process.exitCode = await runHttp(flags);
    });
}
