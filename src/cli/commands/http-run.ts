/**
 * `mcptap http`'s run, without commander: flags -> HttpTapOptions -> startHttpTap; SIGINT/SIGTERM
 * stop accepting, let the requests in flight finish (up to --drain-timeout; the same signal again
 * cuts them), flush the sinks and exit 0. Reached through commander (http.ts) or, at start-up,
 * through the fast argv reader (cli/http-argv.ts).
 */
import { startHttpTap, type HttpTap } from '../../tap/http-tap.js';
import { openTapPipeline } from '../../pipeline/tap-pipeline.js';
import { closeObeyingSignals, pipelineTuning, printFromFlags, redactRulesFromFlags, recordingFromFlags, sayMetricsUrl, STOP_SIGNALS } from '../tap-flags.js';
import { checkFromFlags } from '../check-flags.js';
import { createLogger } from '../../util/logger.js';
import { ExitCode } from '../exit-codes.js';
import { listenError } from '../listen-error.js';
import { telemetryConfigFromOptions } from '../telemetry-options.js';
import { parseListen, parseUpstream, positiveInt, timeoutFlagMs } from '../upstream.js';
import type { HttpFlags } from '../http-argv.js';

export async function runHttp(flags: HttpFlags): Promise<number> {
  const logger = createLogger(flags.logLevel);
  const upstream = parseUpstream(flags.upstream);
  const { host, port } = parseListen(flags.listen);
  const drainMs = timeoutFlagMs('--drain-timeout', flags.drainTimeout, true);
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
    ...(await checkFromFlags(flags)),
    ...printFromFlags(flags),
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
      connectTimeoutMs: timeoutFlagMs('--connect-timeout', flags.connectTimeout, false),
      responseTimeoutMs: timeoutFlagMs('--response-timeout', flags.responseTimeout, true),
      idleTimeoutMs: timeoutFlagMs('--idle-timeout', flags.idleTimeout, true),
      maxBodyBytes: positiveInt('--max-body', flags.maxBody, false),
      maxHeaderBytes: positiveInt('--max-header', flags.maxHeader, false),
      headersTimeoutMs: timeoutFlagMs('--header-timeout', flags.headerTimeout, false),
      requestTimeoutMs: timeoutFlagMs('--request-timeout', flags.requestTimeout, true),
      allowedHosts: flags.allowedHost,
      allowedOrigins: flags.allowedOrigin,
    });
  } catch (err) {
    await sinks.close();
    throw listenError(flags.listen, err) ?? err;
  }
  // The upstream URL may carry a password or a token (userinfo, query): never in clear on stderr.
  const open = tap;
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    if (signals++ === 0) {
      if (drainMs > 0 && open.stats().inFlight > 0)
        process.stderr.write(`mcptap http: ${signal}: letting the requests in flight finish (up to ${drainMs} ms; ${signal} again cuts them)\n`);
      stop();
    } else {
      const cut = open.stats().inFlight;
      if (signals === 2 && cut > 0) process.stderr.write(`mcptap http: ${signal} again: cutting the ${cut} request${cut === 1 ? '' : 's'} in flight\n`);
      void open.close({ drainMs: 0 });
    }
  };
  // SIGHUP too (a closed terminal, systemd's reload-less stop): left to its default, it kills the tap mid-recording.
  for (const s of STOP_SIGNALS) process.on(s, onSignal);
  // Said once the signals are handled: whoever reads this line may stop the tap at once.
  const shown = (url: string) => sinks.redactor.redactText(url);
  // Shown without the upstream's query, so that it can be copied: the tap forwards each request's own path and query.
  const listening = tap.url.replace(/\?.*$/, '');
  // One write: whoever waits for the first line has the second too.
  const queryNote =
    upstream.search !== '' ? `mcptap http: clients send the query themselves (${listening}?...): the tap forwards each request's path and query as sent\n` : '';
  process.stderr.write(
    `mcptap http: listening on ${listening} -> ${shown(upstream.href)}${flags.record ? ` (recording to ${flags.record})` : ''}\n${queryNote}`,
  );
  await stopped;
  // A recording that failed under --require-recording stops the traffic at once.
  await tap.close({ drainMs: fatal ? 0 : drainMs });
  for (const s of STOP_SIGNALS) process.off(s, onSignal);
  const exitCode = fatal ? ExitCode.Failed : ExitCode.Ok;
  const closed = await closeObeyingSignals(sinks, { logger, exitCode, ...(flags.record ? { record: flags.record } : {}) });
  for (const line of closed.lines) logger.warn(line);
  // `fatal` again: the recording may fail while its backlog is indexed, after the traffic.
  return fatal ? ExitCode.Failed : closed.exitCode;
}
