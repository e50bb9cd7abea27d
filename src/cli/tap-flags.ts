/**
 * What the tap commands share at the edge: the pipeline's options resolved once from flags and
 * MCPTAP_* variables (the library below never reads the environment), and a close that obeys
 * the host's stop signals.
 */
import { REDACT_KEY_ENV } from '../redact/redactor.js';
import { recordingOptions, type RecordingOptions } from '../pipeline/recording-options.js';
import type { TapPipeline, TapPipelineOptions } from '../pipeline/tap-pipeline.js';
import type { Logger } from '../util/logger.js';
import { McptapError } from '../errors.js';
import { STOP_SIGNALS } from './early-server.js';
import { ExitCode } from './exit-codes.js';

type Env = Readonly<Record<string, string | undefined>>;

/** The tap flags that decide how it records. */
export interface RecordFlags {
  record?: string;
  requireRecording?: boolean;
}

/**
 * `--record` and `--require-recording`, with the tuning variables: MCPTAP_SPOOL_BYTES (the spool's
 * size; a batch larger than the spool is spooled in parts, but a single HTTP message larger than
 * it is lost), MCPTAP_SPOOL_DIR (where the spool goes), MCPTAP_INDEX_LAG_MS (how long indexing
 * waits while traffic flows), MCPTAP_INDEXER_STALL_MS (how long a closing tap waits for an indexer that
 * makes no progress, 30 s). A variable set to something that is not a positive integer is refused.
 */
export function recordingFromFlags(flags: RecordFlags, env: Env = process.env): RecordingOptions | undefined {
  if (!flags.record) return undefined;
  const spoolBytes = envInt(env, 'MCPTAP_SPOOL_BYTES', 1);
  const indexLagMs = envInt(env, 'MCPTAP_INDEX_LAG_MS', 1);
  const stallMs = envInt(env, 'MCPTAP_INDEXER_STALL_MS', 1);
  const spoolDir = env.MCPTAP_SPOOL_DIR?.trim();
  return recordingOptions(flags.record, {
    required: flags.requireRecording === true,
    ...(spoolBytes !== undefined ? { spoolBytes } : {}),
    ...(indexLagMs !== undefined ? { indexLagMs } : {}),
    ...(stallMs !== undefined ? { stallMs } : {}),
    ...(spoolDir ? { spoolDir } : {}),
  });
}

/**
 * `--redact FILE`: the user's redaction rules, read (and refused, exit 4) before the tap starts.
 * Their loader (and the YAML parser) is loaded only then: a tap's start-up pays for every module.
 */
export async function redactRulesFromFlags(flags: { redact?: string }): Promise<Pick<TapPipelineOptions, 'redactRules'>> {
  if (!flags.redact) return {};
  const { loadRedactionRules } = await import('../redact/redaction-rules.js');
  return { redactRules: loadRedactionRules(flags.redact) };
}

/** The `--redact` option's help line, shared by the tap commands. */
export const REDACT_OPTION_HELP =
  'also redact what this rules file names (JSON paths, fields, headers, regular expressions; docs/redaction.md) in the recording, spans and logs';

/**
 * The rest of the pipeline's settings from the environment: MCPTAP_REDACT_KEY (equal secrets get
 * equal tokens across runs), MCPTAP_PIPELINE_THREAD=main (decode and export on the tap's thread,
 * for profiling), MCPTAP_PIPELINE_NICE (0-19, the worker thread's niceness).
 */
export function pipelineTuning(env: Env = process.env): Pick<TapPipelineOptions, 'redactKey' | 'thread' | 'workerNice'> {
  const key = env[REDACT_KEY_ENV];
  const given = env.MCPTAP_PIPELINE_THREAD?.trim() || undefined;
  const thread = given === undefined || isThread(given) ? given : undefined;
  if (given !== thread) throw new McptapError('MCPTAP_BAD_FLAG', `MCPTAP_PIPELINE_THREAD must be main or worker, got ${JSON.stringify(given)}`);
  const nice = envInt(env, 'MCPTAP_PIPELINE_NICE', 0, 19);
  return { ...(key ? { redactKey: key } : {}), ...(thread ? { thread } : {}), ...(nice !== undefined ? { workerNice: nice } : {}) };
}

function isThread(v: string): v is 'main' | 'worker' {
  return v === 'main' || v === 'worker';
}

/** An integer variable within [min, max]; undefined when unset; refused when set to anything else. */
function envInt(env: Env, name: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  const v = env[name];
  if (v === undefined || v.trim() === '') return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new McptapError('MCPTAP_BAD_FLAG', `${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(v)}`);
  return n;
}

/** `--help` text for the recording's settings, shared by the tap commands. */
export const RECORDING_HELP = `
--record spools the traffic (encrypted, in RAM when it has room) and an indexer process writes the
SQLite file when the CPU allows; the tap ends once the recording is complete. Settings:
  MCPTAP_SPOOL_BYTES   spool size in bytes, how far indexing may lag before traffic goes unobserved (1 GiB)
  MCPTAP_SPOOL_DIR     where the spool goes (default /dev/shm when it has room, else beside the recording)
  MCPTAP_INDEX_LAG_MS  how long indexing waits while traffic flows (10000); --require-recording indexes at once
  MCPTAP_REDACT_KEY    key of the redaction tokens: set it to compare tokens across recordings`;

/** The signals a tap passes on to its server, and obeys itself once the server is gone. */
export { STOP_SIGNALS } from './early-server.js';

/**
 * Closes a tap's pipeline once its traffic is over, which may take a while: the recording's
 * backlog is indexed then. A SIGINT, SIGTERM or SIGHUP meanwhile is obeyed as soon as the recorded
 * traffic is in the hands of the recording's indexer (a process of its own, which completes the
 * recording in the background): at once, unless the indexer is still starting up (a busy machine).
 * Hosts send SIGTERM, then SIGKILL a few seconds later. A group signal (Ctrl-C, `timeout`, systemd)
 * may come again or as another signal: a second one waits for the hand-over too (leaving first
 * would lose what is not spooled yet, issue 36); a third exits at once. The process
 * exits with `exitCode`; telemetry not yet exported is lost. Returns the lines worth telling the user,
 * and the exit code: `exitCode`, but never 0 when the recording is known to lack forwarded traffic.
 */
export async function closeObeyingSignals(
  pipeline: TapPipeline,
  opts: { logger: Logger; record?: string; exitCode: number },
): Promise<{ lines: string[]; exitCode: number }> {
  let signals = 0;
  const stopNow = (sig: NodeJS.Signals) => {
    if (++signals >= 3) {
      pipeline.checkIndexer();
      process.exit(opts.exitCode);
    }
    if (signals > 1) return;
    const recording = opts.record ? `; the recording indexer completes ${opts.record} in the background` : '';
    opts.logger.warn(`${sig} while closing: stopping now${recording}`);
    void pipeline.handedOver.then(() => {
      pipeline.checkIndexer();
      process.exit(opts.exitCode);
    });
  };
  for (const s of STOP_SIGNALS) process.on(s, stopNow);
  try {
    const lines = await pipeline.close();
    const lost = opts.record ? pipeline.recordingLoss() : { bytes: 0, events: 0 };
    if (lost.bytes === 0 && lost.events === 0) return { lines, exitCode: opts.exitCode };
    const what = [lost.bytes > 0 && `${lost.bytes} bytes`, lost.events > 0 && `${lost.events} events (not written: see above)`].filter(Boolean).join(' and ');
    lines.push(`recording ${opts.record} lacks ${what} of the traffic the tap forwarded; exit code ${opts.exitCode || ExitCode.Failed}`);
    return { lines, exitCode: opts.exitCode || ExitCode.Failed };
  } finally {
    for (const s of STOP_SIGNALS) process.off(s, stopNow);
  }
}

/** Says where Prometheus scrapes once it does, unless the user asked for errors only: a notice, not a warning. */
export function sayMetricsUrl(command: string, pipeline: TapPipeline, logLevel: string): void {
  if (logLevel === 'error' || logLevel === 'silent') return;
  pipeline.ready.then(
    ({ metricsUrl }) => metricsUrl && process.stderr.write(`mcptap ${command}: Prometheus metrics at ${metricsUrl}\n`),
    () => {}, // said by the pipeline
  );
}

/** The `--print` option's help line, shared by the tap commands. */
export const PRINT_OPTION_HELP =
  'one line per completed exchange on stderr, as mitmdump prints flows: time, connection, method, tool, outcome, latency, SSE events, progress (colour on a terminal)';

/** `--print`: the print sink's settings, writing to stderr (coloured when stderr is a terminal and NO_COLOR is unset). */
export function printFromFlags(flags: { print?: boolean }, env: Env = process.env): Pick<TapPipelineOptions, 'print'> {
  if (!flags.print) return {};
  const colour = process.stderr.isTTY === true && !env.NO_COLOR;
  return { print: { colour, writeLine: (line) => void process.stderr.write(`${line}\n`) } };
}
