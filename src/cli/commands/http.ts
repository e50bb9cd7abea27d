/**
 * `mcptap http --upstream URL [--listen HOST:PORT] [--record FILE]`: the HTTP tap, a transparent
 * reverse proxy in front of a Streamable HTTP (or legacy HTTP+SSE) MCP server. Thin: flags ->
 * HttpTapOptions -> startHttpTap; SIGINT/SIGTERM stop accepting, let the requests in flight finish
 * (up to --drain-timeout; the same signal again cuts them), flush the sinks and exit 0.
 */
import type { Command } from 'commander';
import {
  startHttpTap,
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_HTTP_TAP_HOST,
  DEFAULT_HTTP_TAP_PORT,
  DEFAULT_MAX_HEADER_BYTES,
  DEFAULT_REQUEST_TIMEOUT_MS,
  type HttpTap,
} from '../../tap/http-tap.js';
import { openTapPipeline } from '../../pipeline/tap-pipeline.js';
import {
  closeObeyingSignals,
  pipelineTuning,
  REDACT_OPTION_HELP,
  redactRulesFromFlags,
  RECORDING_HELP,
  recordingFromFlags,
  sayMetricsUrl,
} from '../tap-pipeline.js';
import { createLogger, type LogLevel } from '../../util/logger.js';
import { McptapError } from '../../errors.js';
import { ExitCode } from '../exit-codes.js';
import { addTelemetryOptions, telemetryConfigFromOptions } from '../telemetry-options.js';
import { logLevelOption } from '../log-level-option.js';
import { parseListen, parseUpstream, positiveInt } from '../upstream.js';

interface HttpFlags {
  upstream: string;
  listen: string;
  record?: string;
  requireRecording?: boolean;
  redact?: string;
  connectTimeout: string;
  responseTimeout: string;
  idleTimeout: string;
  maxBody: string;
  maxHeader: string;
  headerTimeout: string;
  requestTimeout: string;
  drainTimeout: string;
  allowedHost: string[];
  allowedOrigin: string[];
  redactHeader: string[];
  logLevel: LogLevel;
  [telemetryFlag: string]: unknown;
}

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
      `${DEFAULT_HTTP_TAP_HOST}:${DEFAULT_HTTP_TAP_PORT}`,
    )
    .option(
      '--record <file>',
      'record every frame and exchange to this SQLite file (created if missing); traffic is spooled first and indexed when the CPU is idle, so under heavy load the recording completes when the tap ends',
    )
    .option('--require-recording', 'stop the tap rather than let traffic pass unrecorded if recording fails; the listener opens once the recording works')
    .option('--connect-timeout <ms>', 'upstream TCP connect timeout (then 504)', '10000')
    .option('--response-timeout <ms>', "time allowed until the upstream's response headers, 0 = none (then 504)", '300000')
    .option('--idle-timeout <ms>', 'longest silence inside a response body, 0 = none (long-lived SSE streams)', '300000')
    .option('--max-body <bytes>', 'largest request body forwarded (larger: 413)', String(4 * 1024 * 1024))
    .option('--max-header <bytes>', 'largest request line and headers a client may send (larger: 431)', String(DEFAULT_MAX_HEADER_BYTES))
    .option('--header-timeout <ms>', "time a client has to send a request's headers (then 408 and closed: slowloris)", String(DEFAULT_HEADERS_TIMEOUT_MS))
    .option('--request-timeout <ms>', 'time a client has to send a whole request, headers and body (then 408), 0 = none', String(DEFAULT_REQUEST_TIMEOUT_MS))
    .option(
      '--drain-timeout <ms>',
      'on SIGINT/SIGTERM, how long requests in flight may take to finish before they are cut (new ones get 503; GET streams are cut at once); 0 = cut at once',
      '10000',
    )
    .option('--allowed-host <host>', 'also accept this Host header (name, or name:port); repeatable', collect, [])
    .option('--allowed-origin <origin>', 'also accept this Origin (name, or scheme://host:port); repeatable', collect, [])
    .option('--redact-header <name>', 'also store this header only as a keyed-hash token; repeatable', collect, [])
    .option('--redact <file>', REDACT_OPTION_HELP)
    .addOption(logLevelOption('warn'));
  addTelemetryOptions(cmd)
    .addHelpText(
      'after',
      `
Examples:
  mcptap http --upstream http://127.0.0.1:3001/mcp --record tap.db
      then point the client at http://127.0.0.1:${DEFAULT_HTTP_TAP_PORT}/mcp
  mcptap http --upstream http://127.0.0.1:3001/sse --listen 127.0.0.1:8080     (deprecated HTTP+SSE)
  mcptap http --upstream https://mcp.example.com/mcp --listen 0.0.0.0:${DEFAULT_HTTP_TAP_PORT} --allowed-host tap.lan

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

async function runHttp(flags: HttpFlags): Promise<number> {
  const logger = createLogger(flags.logLevel);
  const upstream = parseUpstream(flags.upstream);
  const { host, port } = parseListen(flags.listen);
  const drainMs = positiveInt('--drain-timeout', flags.drainTimeout, true);
  const telemetry = telemetryConfigFromOptions(flags);
  if (telemetry.injectTraceContext) logger.warn('--inject-trace-context is not supported by the HTTP tap; bytes are forwarded unchanged');
  let tap: HttpTap | undefined;
  let fatal = false;
  let stop: () => void = () => {};
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  const sinks = await openTapPipeline({
    logLevel: flags.logLevel,
    transport: 'http',
    target: upstream.href,
    logger,
    telemetry,
    redactHeaders: flags.redactHeader,
    ...(await redactRulesFromFlags(flags)),
    ...pipelineTuning(),
    recording: recordingFromFlags(flags),
    onFatal: (err) => {
      fatal = true;
      logger.error(`recording failed and --require-recording is set; stopping the tap: ${err.message}`);
      stop();
    },
  });
  sayMetricsUrl('http', sinks, flags.logLevel);
  try {
    tap = await startHttpTap({
      upstream,
      host,
      port,
      pipeline: sinks.input,
      redactor: sinks.redactor,
      logger,
      connectTimeoutMs: positiveInt('--connect-timeout', flags.connectTimeout, false),
      responseTimeoutMs: positiveInt('--response-timeout', flags.responseTimeout, true),
      idleTimeoutMs: positiveInt('--idle-timeout', flags.idleTimeout, true),
      maxBodyBytes: positiveInt('--max-body', flags.maxBody, false),
      maxHeaderBytes: positiveInt('--max-header', flags.maxHeader, false),
      headersTimeoutMs: positiveInt('--header-timeout', flags.headerTimeout, false),
      requestTimeoutMs: positiveInt('--request-timeout', flags.requestTimeout, true),
      allowedHosts: flags.allowedHost,
      allowedOrigins: flags.allowedOrigin,
    });
  } catch (err) {
    await sinks.close();
    const code = (err as { code?: string }).code;
    // ENOTFOUND / EAI_AGAIN: a --listen host name that does not resolve.
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN')
      throw new McptapError('MCPTAP_LISTEN', `cannot listen on ${flags.listen}: ${(err as Error).message}`);
    throw err;
  }
  // The upstream URL may carry a password or a token (userinfo, query): never in clear on stderr.
  const open = tap;
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    if (signals++ === 0) {
      if (drainMs > 0 && open.stats().inFlight > 0)
        process.stderr.write(`mcptap http: ${signal}: letting the requests in flight finish (up to ${drainMs} ms; ${signal} again cuts them)\n`);
      stop();
    } else void open.close({ drainMs: 0 });
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // Said once the signals are handled: whoever reads this line may stop the tap at once.
  const shown = (url: string) => sinks.redactor.redactText(url);
  process.stderr.write(`mcptap http: listening on ${shown(tap.url)} -> ${shown(upstream.href)}${flags.record ? ` (recording to ${flags.record})` : ''}\n`);
  await stopped;
  // A recording that failed under --require-recording stops the traffic at once.
  await tap.close({ drainMs: fatal ? 0 : drainMs });
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  const exitCode = fatal ? ExitCode.Failed : ExitCode.Ok;
  for (const line of await closeObeyingSignals(sinks, { logger, exitCode, ...(flags.record ? { record: flags.record } : {}) })) logger.warn(line);
  // `fatal` again: the recording may fail while its backlog is indexed, after the traffic.
  return fatal ? ExitCode.Failed : ExitCode.Ok;
}
