/**
 * What the commands that talk to (or stand in for) an HTTP MCP server share at the edge: the
 * listen-address and upstream-URL flags parsed once, and an HTTP tap recording what is sent to an
 * upstream (`mcptap http`, and `mcptap mock --on-miss passthrough --record FILE`).
 */
import { startHttpTap, DEFAULT_HTTP_TAP_HOST, DEFAULT_HTTP_TAP_PORT, type HttpTap } from '../tap/http-tap.js';
import { openTapPipeline } from '../pipeline/tap-pipeline.js';
import type { Logger, LogLevel } from '../util/logger.js';
import { McptapError } from '../errors.js';
import { ExitCode } from './exit-codes.js';
import { closeObeyingSignals, pipelineTuning, recordingFromFlags } from './tap-flags.js';
import { telemetryConfigFromOptions } from './telemetry-options.js';
import { httpSchemeHint } from '../util/url-scheme-hint.js';
import { parseDurationMs } from '../data-file/duration.js';

/**
 * A tap's timeout flag: milliseconds as a bare integer (the flag's unit, as its help says), or a
 * duration with its unit as scenario files write them (`5s`, `2m`, `250ms`).
 */
export function timeoutFlagMs(name: string, v: string, allowZero: boolean): number {
  if (/^\s*\d+\s*$/.test(v)) return positiveInt(name, v.trim(), allowZero);
  const ms = parseDurationMs(v);
  if (ms === undefined || !Number.isInteger(ms) || (!allowZero && ms === 0))
    throw new McptapError(
      'MCPTAP_BAD_FLAG',
      `${name} must be a number of ms or a duration such as 5s or 250ms${allowZero ? ' (0 = none)' : ''}, got ${JSON.stringify(v)}`,
    );
  return ms;
}

export function positiveInt(name: string, v: string, allowZero: boolean): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || (!allowZero && n === 0))
    throw new McptapError('MCPTAP_BAD_FLAG', `${name} must be a ${allowZero ? 'non-negative' : 'positive'} integer, got ${JSON.stringify(v)}`);
  return n;
}

/**
 * `host:port`, `[v6]:port`, `:port`, a bare `port` (host {@link DEFAULT_HTTP_TAP_HOST}) or a bare
 * `host` / `[v6]` (port {@link DEFAULT_HTTP_TAP_PORT}). An unbracketed IPv6 address is refused: its
 * last group would read as a port. `flag` names the option in errors.
 */
export function parseListen(v: string, flag = '--listen'): { host: string; port: number } {
  const text = v.trim();
  // All digits: a port (a host name is never all digits; `717` would be read as 0.0.2.205).
  const m = /^\d+$/.test(text) ? undefined : /^(?:\[([^\]\s]+)\]|([^:[\]\s]*))(?::(\d+))?$/.exec(text);
  if (m === null || text === '') throw new McptapError('MCPTAP_BAD_FLAG', `${flag} must be HOST:PORT, HOST, PORT or [IPv6]:PORT, got ${JSON.stringify(v)}`);
  const host = m?.[1] ?? (m?.[2] || DEFAULT_HTTP_TAP_HOST);
  const portText = m ? m[3] : text;
  const port = portText === undefined ? DEFAULT_HTTP_TAP_PORT : positiveInt(`${flag} port`, portText, true);
  if (port > 65535) throw new McptapError('MCPTAP_BAD_FLAG', `${flag} port must be 0-65535, got ${port}`);
  return { host, port };
}

/** `--upstream`: an http(s) URL. */
export function parseUpstream(v: string, flag = '--upstream'): URL {
  let upstream: URL;
  try {
    upstream = new URL(v);
  } catch {
    throw new McptapError('MCPTAP_BAD_FLAG', `${flag} must be a URL, got ${JSON.stringify(v)}`);
  }
  if (upstream.protocol !== 'http:' && upstream.protocol !== 'https:')
    throw new McptapError('MCPTAP_BAD_FLAG', `${flag} must be an http(s) URL, ${httpSchemeHint(v, upstream.protocol)}`);
  return upstream;
}

export interface RecordingTap {
  /** Where to send requests: the tap's loopback address with the upstream's path. */
  url: string;
  tap: HttpTap;
  /**
   * Lets what is in flight finish, then completes the recording: the lines worth telling the user,
   * and the exit code ({@link ExitCode.Failed} when the recording lacks forwarded traffic, else 0).
   */
  close(): Promise<{ lines: string[]; exitCode: number }>;
}

/**
 * An HTTP tap on a free loopback port in front of `upstream`, recording to `record`: the same
 * tap, pipeline and recorder as `mcptap http --record`. Telemetry flags and MCPTAP_* variables apply.
 */
export async function startRecordingTap(opts: {
  upstream: URL;
  record: string;
  logger: Logger;
  logLevel: LogLevel;
  flags?: Record<string, unknown>;
}): Promise<RecordingTap> {
  const sinks = await openTapPipeline({
    logLevel: opts.logLevel,
    transport: 'http',
    target: opts.upstream.href,
    logger: opts.logger,
    telemetry: telemetryConfigFromOptions(opts.flags ?? {}),
    ...pipelineTuning(),
    recording: recordingFromFlags({ record: opts.record }),
  });
  let tap: HttpTap;
  try {
    tap = await startHttpTap({ upstream: opts.upstream, host: '127.0.0.1', port: 0, pipeline: sinks.input, redactor: sinks.redactor, logger: opts.logger });
  } catch (err) {
    await sinks.close();
    throw err;
  }
  return {
    url: tap.url,
    tap,
    close: async () => {
      await tap.close({ drainMs: 5000 });
      return closeObeyingSignals(sinks, { logger: opts.logger, exitCode: ExitCode.Ok, record: opts.record });
    },
  };
}
