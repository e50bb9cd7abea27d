/**
 * `mcptap reference (--stdio | --http HOST:PORT) [--stall EVERY_MS:FOR_MS]`: run mcptap's own MCP
 * server, a known target for trying the tap, the recorder and the load engine.
 */
import { Command, Option } from 'commander';
import { runReferenceStdio, startReferenceHttpServer } from '../../reference/reference-server.js';
import { parseStallSpec, type StallOptions } from '../../reference/stall-schedule.js';
import { createLogger, type LogLevel } from '../../util/logger.js';
import { McptapError } from '../../errors.js';
import { listenError } from '../listen-error.js';
import { parseHostPort, untilSignal } from '../serve-flags.js';
import { logLevelOption } from '../log-level-option.js';

interface ReferenceFlags {
  stdio?: boolean;
  http?: string;
  stall?: string;
  ignoreCancel?: boolean;
  logLevel: LogLevel;
}

export function register(program: Command): void {
  program
    .command('reference')
    .summary("run mcptap's reference MCP server (both protocol eras; stdio or HTTP)")
    .description(
      'Serves a small MCP server whose tools misbehave on request, so every outcome mcptap tells apart can be ' +
        'produced at will. Both protocol eras on the same endpoint: legacy (initialize, versions up to 2025-11-25; ' +
        'over HTTP: Mcp-Session-Id sessions, SSE responses, GET stream, DELETE) and 2026-07-28 (stateless: ' +
        'server/discover, per-request _meta, request-scoped SSE, Mcp-Method/Mcp-Name header checks). ' +
        'Logs go to stderr; with --stdio, stdout carries only protocol messages.',
    )
    .addOption(new Option('--stdio', 'serve on stdin/stdout').conflicts('http'))
    .addOption(new Option('--http <host:port>', 'serve Streamable HTTP at http://HOST:PORT/mcp (port 0: any free port)'))
    .option('--stall <every_ms:for_ms>', 'hold ALL responses for FOR_MS at the end of every EVERY_MS period, counted from start')
    .option('--ignore-cancel', 'tools ignore cancellation unless a call passes honorCancel: true')
    .addOption(logLevelOption('info'))
    .addHelpText(
      'after',
      `
Tools (arguments in braces, all optional unless noted):
  echo {text}                                text content equal to text (required)
  delay {ms, honorCancel}                    waits ms (default 0), then answers
  progress {steps, intervalMs, honorCancel}  one notifications/progress every intervalMs (defaults 5, 100)
                                             if the request has a progressToken, then answers;
                                             over HTTP each one arrives as an SSE event
  fail {message}                             a tool error: result with isError: true
  rpc-error {code, message, data}            a JSON-RPC error response (default code -32603)
  payload {kb}                               one text content of exactly kb KiB (default 1)
  clock                                      the current time (differs on every call)
  in-flight {progressToken}                  the work of the call that carried that progress token (running,
                                             lastWorkAtMs, endedAtMs, cancelSeenAtMs, workAfterCancelMs);
                                             without it, every running call. The load engine's cancel probe
  trigger {notification, uri, count, intervalMs}
                                             sends notifications/{tools,prompts,resources}/list_changed or
                                             resources/updated (notification: resource) to every listener:
                                             subscriptions/listen streams, legacy GET streams, the stdio
                                             connection; each stamped _meta["io.mcptap/firedAtUs"]
Resource: mcptap://reference/info (JSON: era, transport, options). Prompt: greet {name}.

Cancellation: delay and progress stop when the request is cancelled (notifications/cancelled, or closing
the 2026-07-28 HTTP stream) and send no response. With honorCancel: false (or --ignore-cancel, which makes
that the default) they run to the end and still answer (over a closed 2026-07-28 stream the answer is lost).
Both modes work in both eras and on both transports; in-flight shows which one a call was in.

The endpoint URL is printed to stderr once listening (a line containing http://HOST:PORT/mcp).
With --stall 2000:500, a response leaving during [k*2000-500, k*2000) ms after start (k = 1, 2, ...) waits
until k*2000 ms: a load test that knows the start can compute the true latency of every request.

Examples:
  mcptap reference --stdio
  mcptap reference --http 127.0.0.1:3333
  mcptap reference --http 127.0.0.1:0 --stall 2000:500
  mcptap reference --http 127.0.0.1:3333 --ignore-cancel   # a server that ignores cancellation
  mcptap stdio --record tap.db -- mcptap reference --stdio`,
    )
    .action(async (flags: ReferenceFlags) => {
      await runReference(flags);
    });
}

async function runReference(flags: ReferenceFlags): Promise<void> {
  if (!flags.stdio && flags.http === undefined) {
    throw new McptapError('MCPTAP_BAD_FLAG', 'reference needs --stdio or --http HOST:PORT');
  }
  const logger = createLogger(flags.logLevel);
  const common = { logger, stall: stallOf(flags.stall), ...(flags.ignoreCancel ? { honorCancel: false } : {}) };
  if (flags.stdio) {
    const handle = await runReferenceStdio(common);
    await handle.closed;
    const failed = handle.ioError();
    if (failed) throw new McptapError('MCPTAP_REFERENCE_IO', `reference stdio: ${failed}`);
    return;
  }
  const { host, port } = parseHostPort(flags.http ?? '');
  let server;
  try {
    server = await startReferenceHttpServer({ ...common, host, port });
  } catch (err) {
    throw listenError(`${host}:${port}`, err) ?? new McptapError('MCPTAP_LISTEN', `cannot listen on ${host}:${port}: ${(err as Error).message}`);
  }
  process.stderr.write(`mcptap reference: listening on ${server.url}\n`);
  await untilSignal();
  await server.close();
}

function stallOf(spec: string | undefined): StallOptions | undefined {
  if (spec === undefined) return undefined;
  const stall = parseStallSpec(spec);
  if (!stall) {
    throw new McptapError('MCPTAP_BAD_FLAG', `--stall must be EVERY_MS:FOR_MS with 0 < FOR_MS < EVERY_MS, got ${JSON.stringify(spec)}`);
  }
  return stall;
}
