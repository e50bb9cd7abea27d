/**
 * `mcptap load SCENARIO`: run a load scenario; print the summary to stdout and live progress to
 * stderr; write the JSON result, JUnit and an HTML report on request. Exit code: 0 all thresholds passed,
 * 1 a cancel verdict unknown and judged by no threshold (as probe-cancel), 3 a threshold failed, 4 the scenario (or a data file) is invalid, 5 the target is unreachable,
 * 130/143 the run was stopped by SIGINT/SIGTERM (what ran is still reported and written: a CI job
 * cancelled or timed out keeps its partial results, and a partial run never passes as a green one).
 * A shard (`--shard i/n`) never exits 3: it saw part of the run, so `merge-results` judges.
 */
import { writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { basename } from 'node:path';
import { checkOutputPaths } from '../output-paths.js';
import { Option, type Command } from 'commander';
import { parseShard, type ShardSpec } from '../../load/executors/iteration.js';
import { bareDurationMessage, bareDurationNumber, parseDurationMs } from '../../data-file/duration.js';
import type { LoadResult } from '../../load/results/load-result.js';
import type { ProgressSnapshot } from '../../load/run/progress.js';
import { loadChartLibrary } from '../../load/report/chart-library.js';
import { renderLoadHtml } from '../../load/report/html-report.js';
import { renderJunit } from '../../load/report/junit-report.js';
import { renderProgressLine } from '../../load/report/progress-line.js';
import { renderSummary } from '../../load/report/text-report.js';
import { runLoad, StoppedBeforeRun } from '../../load/run/run-load.js';
import { loadScenarioFile } from '../../load/scenario/scenario-loader.js';
import { thresholdsPassed } from '../../load/results/threshold-eval.js';
import { unjudgedMessage, unjudgedUnknownCancels } from '../../load/results/cancel-unjudged.js';
import { createLogger, type Logger, type LogLevel } from '../../util/logger.js';
import type { Scenario } from '../../load/scenario/scenario.js';
import type { LoadLiveMetrics } from '../../load/report/live-metrics.js';
import type { Telemetry } from '../../telemetry/telemetry.js';
import { telemetryEnabled } from '../../telemetry/telemetry-config.js';
import { addLoadMetricsOptions, telemetryConfigFromOptions } from '../telemetry-options.js';
import { McptapError } from '../../errors.js';
import { ExitCode, SIGNAL_EXIT } from '../exit-codes.js';
import { stopOnSignals } from '../signal-stop.js';
import { logLevelOption } from '../log-level-option.js';

interface LoadFlags {
  json?: string;
  junit?: string;
  html?: string;
  shard?: string;
  raw?: boolean;
  startAt?: string;
  progress: string;
  progressInterval?: string;
  logLevel: LogLevel;
  metricsLinger?: string;
  [telemetryFlag: string]: unknown;
}

export function register(program: Command): void {
  const cmd = program
    .command('load')
    .summary('load-test an MCP server with a scenario (open or closed model, both eras, HTTP or stdio)')
    .description(
      'Runs the phases of SCENARIO (a .yaml file, or a .ts/.js module exporting defineScenario) against its target. ' +
        "Latency is measured from each iteration's intended start, so a stalling server cannot hide behind " +
        'coordinated omission. Errors are counted per layer: transport, HTTP status, JSON-RPC code, isError, ' +
        'protocol violations, dropped iterations.',
    )
    .argument('<scenario>', 'scenario file (.yaml/.yml/.ts/.js)')
    .option('--json <file>', 'write the JSON result (mergeable with merge-results); - for stdout')
    .option('--junit <file>', 'write thresholds as JUnit XML')
    .option('--html <file>', 'write a self-contained HTML report with charts (works offline; also: mcptap report RESULT.json --html FILE)')
    .option('--shard <i/n>', 'run shard i of n: every n-th arrival (open, replay) or virtual user (closed); merge the results')
    .option('--raw', 'maximum-throughput mode on autocannon (HTTP, closed phases only)')
    .option('--start-at <time>', 'wait until this wall-clock time (ISO 8601 or epoch ms) before starting: lines up shards')
    .addOption(
      new Option(
        '--progress <mode>',
        'live progress on stderr: live (one line redrawn), lines (a line every interval), none, or auto (live on a terminal, else lines)',
      )
        .choices(['auto', 'live', 'lines', 'none'])
        .default('auto'),
    )
    .option('--progress-interval <duration>', 'period of progress lines when not live (default 5s)')
    .option('--metrics-linger <duration>', 'with --metrics: after the run, keep serving until a scrape has read the final values (at most this long)')
    .addOption(logLevelOption('warn'))
    .addHelpText(
      'after',
      `
Exit codes: 0 thresholds passed, 1 a cancel verdict unknown that no cancel threshold judged (as
probe-cancel), 3 a threshold failed, 4 invalid scenario or data file,
5 target unreachable, 2 bad command line, 130/143 stopped by SIGINT/SIGTERM (in-flight requests
finish and what ran is reported and written; a second signal quits at once; stopped while the
target is still being checked, nothing ran and nothing is written). With --shard,
thresholds are judged by merge-results (a shard sees part of the run), so a shard does not exit 3.

Examples:
  mcptap load scenarios/demo.yaml
  mcptap load scenarios/open-ramp.yaml --json run.json --junit thresholds.xml
  mcptap load scenarios/demo.yaml --json run.json --html report.html
  mcptap load scenarios/open-ramp.yaml --shard 2/4 --json shard-2.json
  mcptap load scenarios/replay.yaml      # a recording (from: tap.db) replayed on its schedule, then at 2x
  mcptap load scenarios/cancel.yaml      # cancel calls mid-flight: does the server stop? (cancel: honoured)
  mcptap load scenarios/cancel-scripted.ts   # a script cancels calls (by its own AbortSignal, or after 100ms)
  mcptap load scenarios/listen-stdio.yaml     # listens held on a stdio server while it fires notifications
  mcptap merge-results shard-*.json --junit thresholds.xml
  mcptap load scenarios/open-ramp.yaml --metrics :9465      # live metrics to scrape (dashboards/mcptap-load.json)
  mcptap load scenarios/open-ramp.yaml --otlp http://localhost:9090/api/v1/otlp   # pushed to Prometheus' OTLP receiver`,
    );
  addLoadMetricsOptions(cmd).action(async (file: string, flags: LoadFlags) => {
    process.exitCode = await runLoadCommand(file, flags);
  });
}

async function runLoadCommand(file: string, flags: LoadFlags): Promise<number> {
  const shard = flags.shard ? parseShard(flags.shard) : undefined;
  if (typeof shard === 'string') throw new McptapError('MCPTAP_LOAD_BAD_SHARD', shard);
  const lingerMs = metricsLingerMs(flags.metricsLinger);
  const scenario = await loadScenarioFile(file, flags.raw ? { driver: 'raw' } : {});
  if (scenario.from && !existsSync(scenario.from.file)) {
    const demo = basename(scenario.from.file) === 'mcptap-demo.db' ? ' (npm start writes mcptap-demo.db)' : '';
    throw new McptapError(
      'MCPTAP_RECORDING_NOT_FOUND',
      `${file}: from: no such recording file: ${scenario.from.file}. Record one first${demo}: mcptap stdio --record FILE -- SERVER..., or mcptap http --upstream URL --record FILE.`,
    );
  }
  checkOutputPaths(flags, 'MCPTAP_LOAD_BAD_OUTPUT', [file, ...scenario.data.map((d) => d.file), ...(scenario.from ? [scenario.from.file] : [])]);
  const logger = createLogger(flags.logLevel);
  const telemetry = await startLiveMetrics(flags, logger);
  if (lingerMs > 0 && !telemetry?.metricsUrl) logger.warn('--metrics-linger waits for a Prometheus scrape, and without --metrics nothing serves one: ignored');
  try {
    return await runAndReport(scenario, shard, flags, logger, telemetry?.observer);
  } finally {
    if (lingerMs > 0 && telemetry?.metricsUrl && !(await telemetry.nextScrape(lingerMs))) {
      logger.warn(`--metrics-linger: no scrape of ${telemetry.metricsUrl} within ${flags.metricsLinger}; its final values were not read`);
    }
    await telemetry?.shutdown();
  }
}

/**
 * Live metrics (`--metrics`, `--otlp`, OTEL_*): only metrics; a load run exports no spans. None
 * asked for: undefined, and the OpenTelemetry SDK is never loaded (half a second of start-up).
 */
async function startLiveMetrics(flags: LoadFlags, logger: Logger): Promise<(Telemetry & { observer?: LoadLiveMetrics }) | undefined> {
  const config = { ...telemetryConfigFromOptions(flags), traces: {} };
  if (!telemetryEnabled(config)) return undefined;
  const [{ createTelemetry }, { LoadLiveMetrics }] = await Promise.all([import('../../telemetry/telemetry.js'), import('../../load/report/live-metrics.js')]);
  const telemetry = await createTelemetry(config, { logger, tapSinks: false });
  if (telemetry.metricsUrl) process.stderr.write(`mcptap load: Prometheus metrics at ${telemetry.metricsUrl}\n`);
  return telemetry.meter ? Object.assign(telemetry, { observer: new LoadLiveMetrics(telemetry.meter) }) : telemetry;
}

function metricsLingerMs(text: string | undefined): number {
  if (text === undefined) return 0;
  const bare = bareDurationNumber(text);
  if (bare !== undefined) throw new McptapError('MCPTAP_LOAD_BAD_FLAG', `--metrics-linger: ${bareDurationMessage(bare)}`);
  const ms = parseDurationMs(text);
  if (ms === undefined || ms < 0) throw new McptapError('MCPTAP_LOAD_BAD_FLAG', `--metrics-linger: not a duration: ${text}`);
  return ms;
}

async function runAndReport(
  scenario: Scenario,
  shard: ShardSpec | undefined,
  flags: LoadFlags,
  logger: Logger,
  observer: LoadLiveMetrics | undefined,
): Promise<number> {
  if (flags.startAt) await waitUntil(flags.startAt);
  const progress = progressWriter(flags);
  const stop = stopOnSignals(() => 'stopping (in-flight requests finish; send it again to quit now)');
  let result: LoadResult;
  try {
    result = await runLoad(scenario, {
      shard,
      logger,
      signal: stop.signal,
      onProgress: progress.write,
      progressIntervalMs: progress.intervalMs,
      ...(observer ? { observer } : {}),
    });
  } catch (err) {
    if (!(err instanceof StoppedBeforeRun)) throw err;
    // Nothing ran, so nothing is written (the target's processes were stopped with the run).
    process.stderr.write(`mcptap: ${err.message}\n`);
    const by = stop.stoppedBy();
    return by ? SIGNAL_EXIT[by] : ExitCode.Failed;
  } finally {
    stop.dispose();
    progress.end();
  }
  await writeOutputs(result, flags);
  const by = stop.stoppedBy();
  if (by) return SIGNAL_EXIT[by];
  // A shard sees part of the run: its verdicts are informative only; merge-results decides.
  const whole = !(shard && shard.count > 1);
  const unjudged = whole ? unjudgedUnknownCancels(result) : [];
  for (const u of unjudged) process.stderr.write(`mcptap: ${unjudgedMessage(u)}\n`);
  if (thresholdsPassed(result.thresholds)) return unjudged.length > 0 ? ExitCode.Failed : ExitCode.Ok;
  if (!whole) {
    process.stderr.write(`mcptap: shard ${shard.index}/${shard.count}: thresholds are judged after \`mcptap merge-results\`; not failing this shard\n`);
    return ExitCode.Ok;
  }
  return ExitCode.ThresholdFailed;
}

export async function writeOutputs(result: LoadResult, flags: { json?: string; junit?: string; html?: string }): Promise<void> {
  const summary = renderSummary(result);
  const write = async (flag: string, path: string, text: string) => {
    try {
      await writeFile(path, text);
    } catch (err) {
      throw new McptapError(
        'MCPTAP_LOAD_WRITE_FAILED',
        `${flag} ${path}: cannot write the result (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      );
    }
  };
  if (flags.json === '-') {
    process.stderr.write(summary);
    process.stdout.write(JSON.stringify(result) + '\n');
  } else {
    process.stdout.write(summary);
    if (flags.json) await write('--json', flags.json, JSON.stringify(result, null, 1) + '\n');
  }
  if (flags.junit) await write('--junit', flags.junit, renderJunit(result));
  if (flags.html) await write('--html', flags.html, renderLoadHtml(result, loadChartLibrary()));
}

/** Shards started by a scheduler (CI matrix, Kubernetes) line up on a shared wall-clock time. */
async function waitUntil(text: string): Promise<void> {
  const at = /^\d+$/.test(text) ? Number(text) : Date.parse(text);
  if (!Number.isFinite(at)) throw new McptapError('MCPTAP_LOAD_BAD_FLAG', `--start-at: not a time: ${text} (use ISO 8601 or epoch ms)`);
  const wait = at - Date.now();
  if (wait > 3_600_000) throw new McptapError('MCPTAP_LOAD_BAD_FLAG', `--start-at ${text} is more than an hour away`);
  if (wait > 0) {
    process.stderr.write(`mcptap: waiting ${(wait / 1000).toFixed(1)}s until ${new Date(at).toISOString()}\n`);
    await new Promise((r) => setTimeout(r, wait));
  }
}

interface ProgressWriter {
  intervalMs: number;
  write?: (p: ProgressSnapshot) => void;
  end(): void;
}

function progressWriter(flags: LoadFlags): ProgressWriter {
  const mode = flags.progress === 'auto' ? (process.stderr.isTTY ? 'live' : 'lines') : flags.progress;
  if (mode === 'none') return { intervalMs: 1000, end: () => {} };
  if (mode === 'live') {
    let drawn = false;
    return {
      intervalMs: 250,
      write: (p) => {
        drawn = true;
        process.stderr.write(`\r\x1b[K${renderProgressLine(p)}`);
      },
      end: () => drawn && process.stderr.write('\n'),
    };
  }
  const bare = bareDurationNumber(flags.progressInterval);
  if (bare !== undefined) throw new McptapError('MCPTAP_LOAD_BAD_FLAG', `--progress-interval: ${bareDurationMessage(bare)}`);
  const every = flags.progressInterval ? parseDurationMs(flags.progressInterval) : 5000;
  if (every === undefined || every <= 0) throw new McptapError('MCPTAP_LOAD_BAD_FLAG', `--progress-interval: not a duration: ${flags.progressInterval}`);
  return { intervalMs: every, write: (p) => process.stderr.write(renderProgressLine(p) + '\n'), end: () => {} };
}
