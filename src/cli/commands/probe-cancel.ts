/**
 * `mcptap probe-cancel --tool NAME (--url URL | -- COMMAND ARGS...)`: does a server stop working
 * when a caller cancels? Calls the tool a few times, cancels each call by the era's mechanism and
 * prints the verdict (honoured, ignored or unknown), the figures and the evidence. Exit 1 unless honoured.
 */
import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { McptapError } from '../../errors.js';
import { bareDurationMessage, bareDurationNumber, parseDurationMs } from '../../data-file/duration.js';
import { unknownReason } from '../../load/results/cancel-stats.js';
import { probeCancelScenario, probeVerdict } from '../../load/run/probe-cancel.js';
import { renderCancel } from '../../load/report/cancel-report.js';
import { runLoad } from '../../load/run/run-load.js';
import { createLogger, type LogLevel } from '../../util/logger.js';
import { ExitCode } from '../exit-codes.js';
import { logLevelOption } from '../log-level-option.js';

interface ProbeFlags {
  tool: string;
  args?: string;
  url?: string;
  times: string;
  after?: string;
  afterProgress: string;
  observe: string;
  probe?: string;
  era?: string;
  timeout: string;
  json?: string;
  logLevel: LogLevel;
}

export function register(program: Command): void {
  program
    .command('probe-cancel')
    .summary("check whether a server stops a tool's work when the call is cancelled (honoured or ignored)")
    .description(
      'Calls TOOL a few times, one after another, and cancels each call mid-flight by the mechanism of the ' +
        "server's era and transport: notifications/cancelled (legacy HTTP, stdio) or closing the response stream " +
        '(2026-07-28 HTTP). Progress or a result after the cancel, the probe finding the work running, or (stdio ' +
        'on Linux) the server process busy on the CPU after the cancel means the server kept working: ignored. ' +
        "Honoured needs the probe's word that the work stopped: SDK 1.x servers drop a cancelled call's progress " +
        'and result, so seeing nothing proves nothing; without a probe the verdict is unknown. ' +
        'Prints the verdict, the stop delay or how long work went on, and the evidence.',
    )
    .requiredOption('--tool <name>', 'the long-running tool to call (one that sends progress, or use --after)')
    .option('--args <json>', 'its arguments, a JSON object', '{}')
    .option('--url <url>', 'a Streamable HTTP server (else the command after --)')
    .option('--times <n>', 'calls to make', '3')
    .option('--after <duration>', 'cancel this long after the send (default: after the first progress notification)')
    .option('--after-progress <n>', 'cancel after this many progress notifications', '1')
    .option('--observe <duration>', 'how long to watch each cancelled call for work going on', '2s')
    .option('--probe <tool>', "a tool reporting the server's work in flight (the reference server's in-flight): the only evidence of honoured")
    .option('--era <era>', 'legacy or 2026-07-28 (default: detected)')
    .option('--timeout <duration>', 'per call', '60s')
    .option('--json <file>', 'write the verdict and figures as JSON; - for stdout')
    .addOption(logLevelOption('warn'))
    .argument('[command...]', 'stdio server command, after --')
    .addHelpText(
      'after',
      `
Exit codes: 0 honoured, 1 ignored or unknown (no evidence the work stopped: give --probe; or no call
could be cancelled), 2 bad command line
(--args that is not a JSON object among them), 4 bad input (a tool the server does not have),
5 server unreachable.

Examples:
  mcptap probe-cancel --tool trigger-long-running-operation --args '{"duration": 3, "steps": 10}' -- npx -y @modelcontextprotocol/server-everything stdio
  mcptap probe-cancel --tool progress --args '{"steps": 20, "intervalMs": 100}' --url http://127.0.0.1:7070/mcp --probe in-flight
  mcptap probe-cancel --tool slow-report --after 500ms --json verdict.json --url https://mcp.example.com/mcp`,
    )
    .action(async (command: string[], flags: ProbeFlags) => {
      process.exitCode = await probeCancel(command, flags);
    });
}

async function probeCancel(command: string[], flags: ProbeFlags): Promise<number> {
  if ((flags.url === undefined) === (command.length === 0))
    throw new McptapError('MCPTAP_LOAD_BAD_FLAG', 'give the server as --url URL or as a command after --, one of them');
  let args: unknown;
  try {
    args = JSON.parse(flags.args ?? '{}');
  } catch (err) {
    throw new McptapError('MCPTAP_LOAD_BAD_FLAG', `--args: not JSON: ${(err as Error).message}`);
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args)) throw new McptapError('MCPTAP_LOAD_BAD_FLAG', '--args must be a JSON object');
  const times = Number(flags.times);
  const afterProgress = Number(flags.afterProgress);
  if (!Number.isInteger(times) || times < 1 || times > 100)
    throw new McptapError('MCPTAP_LOAD_BAD_FLAG', `--times: a whole number from 1 to 100, got ${flags.times}`);
  if (!Number.isInteger(afterProgress) || afterProgress < 1)
    throw new McptapError('MCPTAP_LOAD_BAD_FLAG', `--after-progress: a whole number from 1, got ${flags.afterProgress}`);
  if (flags.era !== undefined && flags.era !== 'legacy' && flags.era !== '2026-07-28')
    throw new McptapError('MCPTAP_LOAD_BAD_FLAG', `--era: legacy or 2026-07-28, got ${flags.era}`);
  for (const [flag, value] of [
    ['--after', flags.after],
    ['--observe', flags.observe],
    ['--timeout', flags.timeout],
  ] as const)
    if (value !== undefined && parseDurationMs(value) === undefined) {
      const bare = bareDurationNumber(value);
      throw new McptapError('MCPTAP_LOAD_BAD_FLAG', `${flag}: ${bare ? bareDurationMessage(bare) : `a duration like 300ms, 2s or 1m, got ${value}`}`);
    }
  const scenario = probeCancelScenario({
    tool: flags.tool,
    args: args as Record<string, unknown>,
    ...(flags.url !== undefined ? { url: flags.url } : { command }),
    times,
    ...(flags.after !== undefined ? { after: flags.after } : {}),
    afterProgress,
    observe: flags.observe,
    ...(flags.probe !== undefined ? { probe: flags.probe } : {}),
    ...(flags.era !== undefined ? { era: flags.era as 'legacy' | '2026-07-28' } : {}),
    timeout: flags.timeout,
  });
  const result = await runLoad(scenario, { logger: createLogger(flags.logLevel) }).catch((err: unknown) => {
    throw err instanceof McptapError && err.code === 'MCPTAP_LOAD_UNKNOWN_TOOL' ? unknownTool(err, flags) : err;
  });
  const { verdict, group } = probeVerdict(result, flags.tool);
  const lines = [`${flags.tool} on ${result.target} (${result.era === 'modern' ? '2026-07-28' : 'legacy'} era, ${result.driver}): ${verdict}`];
  if (group) lines.push(...renderCancel({ [flags.tool]: group }).slice(2));
  else lines.push(`  no call was cancelled: each ended before the cancel was due (a tool without progress needs --after)`);
  if (group && group.cancelled === 0 && group.completedBeforeCancel > 0)
    lines.push(
      `  hint: every call ended before the cancel was due${flags.after === undefined ? ` (${flags.afterProgress} progress notification(s))` : ''}: give the tool longer work (--args) or cancel sooner (--after 100ms)`,
    );
  const text = lines.join('\n') + '\n';
  const json =
    JSON.stringify(
      {
        tool: flags.tool,
        target: result.target,
        era: result.era,
        transport: result.driver,
        verdict,
        ...(verdict === 'unknown' && group ? { reason: unknownReason(group) } : {}),
        ...(group ? { figures: group } : {}),
      },
      null,
      2,
    ) + '\n';
  if (flags.json === '-') process.stdout.write(json);
  else {
    process.stdout.write(text);
    if (flags.json) await writeFile(flags.json, json);
  }
  return verdict === 'honoured' ? ExitCode.Ok : ExitCode.Failed;
}

/**
 * The preflight's unknown-tool error in probe-cancel's terms: the flag to fix (--tool or --probe)
 * instead of a scenario step; the server's tools and the nearest one are kept.
 */
function unknownTool(err: McptapError, flags: ProbeFlags): McptapError {
  const missing = /"([^"]*)"/.exec(err.message)?.[1];
  const flag = missing !== undefined && missing === flags.probe && missing !== flags.tool ? '--probe' : '--tool';
  const message = err.message
    .replace(/^the scenario calls tool ("[^"]*")(?: \(nor [^)]*\))?, but /, `${flag} $1: `)
    .replace(/ Nothing was sent: .*$/, ` Nothing was sent: give ${flag} one of them (mcptap probe-cancel --help has examples).`);
  return new McptapError('MCPTAP_LOAD_UNKNOWN_TOOL', message, { cause: err });
}
