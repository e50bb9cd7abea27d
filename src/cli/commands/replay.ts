/**
 * `mcptap replay FILE (--url URL | -- <command> [args...])`: sends a recording's client traffic to a
 * server again and compares every answer with the recorded one (match rules, text/JSON/JUnit
 * reports, exit 1 on any difference). `--update FILE` keeps the replay as the next baseline.
 */
import { existsSync } from 'node:fs';
import { Option, type Command } from 'commander';
import { McptapError } from '../../errors.js';
import { parseDurationMs } from '../../data-file/duration.js';
import { OUTCOMES } from '../../model/outcome.js';
import { ReplayPlanBuilder, type ReplayPlan } from '../../replay/replay-plan.js';
import { countReport, hasDifferences, ReplayReportBuilder, type ReplayReport } from '../../replay/replay-report.js';
import { apiChangeOf, type ApiChange } from '../../replay/api-change.js';
import { openTarget, type TargetSpec } from '../../replay/replay-target.js';
import { runReplay, type Pace } from '../../replay/replayer.js';
import { loadRules, NO_RULES, type MatchRules } from '../../replay/rules.js';
import { ServerAnswers } from '../../replay/server-answers.js';
import { openUpdateRecording, type UpdateRecording } from '../../replay/update-recording.js';
import { teeObservers } from '../../replay/pipeline-observer.js';
import { replayCheckFromFlags, type ReplayCheckFlags as CheckFlags } from '../check-flags.js';
import { DEFAULT_MIN_SAMPLES, parseMaxSlowdown, slowdownLimit, type SlowdownLimit } from '../../replay/slowdown.js';
import { renderJson, renderJUnit, renderText } from '../../report/replay-diff.js';
import { terminalSafe } from '../../report/format.js';
import { listedOutcome } from '../../report/exchange-view.js';
import type { RecordingStore } from '../../store/recording-store.js';
import type { ExchangeHead, ListedOutcome, StoredExchange } from '../../store/types.js';
import { writeFileAtomic } from '../../util/atomic-write.js';
import { LoopLag } from '../../util/loop-lag.js';
import { checkOutputPaths } from '../output-paths.js';
import { stopOnSignals } from '../signal-stop.js';
import { counted } from '../../util/plural.js';
import { parseUpstream } from '../upstream.js';
import { ExitCode, SIGNAL_EXIT } from '../exit-codes.js';
import { pickRecording } from '../recording-file.js';
import { openRecordingInput } from '../recording-input.js';

interface ReplayFlags {
  url?: string;
  recording?: string[];
  method?: string;
  tool?: string;
  outcome?: ListedOutcome;
  since?: string;
  until?: string;
  pace: string;
  header?: string[];
  timeout: string;
  rules?: string;
  json?: string;
  junit?: string;
  maxSlowdown?: string;
  minSamples?: string;
  update?: string;
  force?: boolean;
  check?: string;
  checkFailOn: string;
  color?: boolean;
}

const collect = (v: string, prev: string[] = []) => [...prev, v];

export function register(program: Command): void {
  program
    .command('replay')
    .summary('send a recording to a server again and report every answer that changed (exit 1)')
    .description(
      "Re-sends the client's side of a recording to a server, in recorded order: exchanges that overlapped stay concurrent, " +
        'and no request starts before the responses that preceded it arrived. Legacy sessions replay their initialize (the new ' +
        'server mints its own session id); 2026-07-28 requests keep their _meta envelope. Ids, progress tokens, requestState and ' +
        "subscription ids are remapped; the server's own requests (sampling, elicitation, roots/list) are answered from the recording. " +
        'Each answer is compared with the recorded one after the match rules (docs/replay-rules.md).',
    )
    .argument('<file>', 'recording file written with --record, or a text baseline (mcptap JSONL: --update next.jsonl)')
    .argument('[command...]', 'stdio target: the server command (after --)')
    .option('--url <url>', 'Streamable HTTP target (instead of a command)')
    .option('--recording <n>', 'recording number from `mcptap ls` (repeatable; default: the latest)', collect)
    .option('--method <method>', 'replay only exchanges of this method')
    .option('--tool <name>', 'replay only calls of this tool (or prompt, or resource URI)')
    .addOption(
      new Option('--outcome <class>', 'replay only exchanges that had this outcome (pending: still in flight when recorded)').choices([...OUTCOMES, 'pending']),
    )
    .option('--since <time>', 'replay only exchanges sent at or after this time: ISO 8601, or a duration from the recording start (90s)')
    .option('--until <time>', 'replay only exchanges sent before this time (same forms)')
    .option('--pace <pace>', 'recorded (the recorded gaps), fast (as fast as the order allows), or a factor N (N times the recorded rate)', 'recorded')
    .option('--header <header>', "a header for every HTTP request, 'Name: value' (repeatable): what the recording does not hold, such as auth", collect)
    .option('--timeout <duration>', 'per-request timeout', '30s')
    .option('--rules <file>', 'match rules (YAML or JSON): what the comparison ignores or normalises')
    .option('--json <file>', 'write the report as JSON (- for stdout; the text report then goes to stderr)')
    .option('--junit <file>', 'write the report as JUnit XML (a test case per exchange)')
    .option(
      '--max-slowdown <factor>',
      'a method or tool whose calls replay more than this times slower, and more than the floor (default 5ms), differs: 1.5x or 1.5x,+50ms',
    )
    .option('--min-samples <n>', `with --max-slowdown: fewer calls than this timed on both sides, no latency verdict (default ${DEFAULT_MIN_SAMPLES})`)
    .option('--update <file>', 'record the replayed traffic as the next baseline: a recording file, or text (mcptap JSONL) when it ends in .jsonl')
    .option('--force', 'let --update replace a file that exists (the recording replayed included)')
    .option('--check <file>', 'run the rules of this file (as mcptap check --rules) on the replayed traffic: findings at --check-fail-on are differences')
    .option('--check-fail-on <what>', 'with --check: what fails the replay, a level (and above) and/or rule ids, comma-separated', 'error')
    .option('--no-color', 'no colour in the report (NO_COLOR is honoured too)')
    .addHelpText(
      'after',
      `
Examples:
  mcptap replay tap.db -- node ./my-server.js
  mcptap replay tap.db --url http://127.0.0.1:3000/mcp --header "Authorization: Bearer $TOKEN"
  mcptap replay tap.db --tool search --pace fast --rules rules.yaml --junit replay.xml -- node ./my-server.js
  mcptap replay tap.db --max-slowdown 1.5x --json replay.json -- node ./my-server.js
  mcptap replay tap.db --update next.db -- node ./my-server.js     # accept the new answers as the baseline
  mcptap replay tap.db --update tap.db --force -- node ./my-server.js   # ... in place of the old one
  mcptap replay baseline.jsonl --update baseline.jsonl --force -- node ./my-server.js   # a text baseline, for review

Stopping (SIGINT/SIGTERM): nothing more is sent, requests in flight are cancelled, and the reports
cover what was answered before it (--update is not written); a second signal quits at once.

Exit codes: 0 every answer matched (with --update: the new baseline was written, its changes accepted); 1 differences (or no response); 2 bad command line; 4 not a
recording, a recording without exchanges, invalid rules; 5 the target could not be reached or
started; 130/143 stopped by SIGINT/SIGTERM.`,
    )
    .action(async (file: string, command: string[], flags: ReplayFlags) => {
      process.exitCode = await runReplayCommand(file, command, flags);
    });
}

/** Stopped by a signal: how long a stdio server gets after its stdin closes before it is signalled. */
const STOPPED_GRACE_MS = 300;

export async function runReplayCommand(file: string, command: string[], flags: ReplayFlags): Promise<number> {
  const spec = targetSpec(command, flags);
  const pace = parsePace(flags.pace);
  const maxSlowdown = flags.maxSlowdown !== undefined ? slowdownLimit(parseMaxSlowdown(flags.maxSlowdown), minSamples(flags.minSamples)) : undefined;
  const rules = flags.rules !== undefined ? loadRules(flags.rules) : NO_RULES;
  const check = await replayCheckFromFlags(flags);
  checkOutputPaths(flags, 'MCPTAP_REPLAY_BAD_OUTPUT', [file, ...(flags.rules !== undefined ? [flags.rules] : [])]);
  if (flags.update !== undefined && flags.force !== true && existsSync(flags.update))
    throw new McptapError('MCPTAP_BAD_FLAG', `--update ${flags.update} exists; pass --force to replace it with the replayed traffic`);
  // Open for the whole replay: each step reads its exchange when it is sent.
  const input = await openRecordingInput(file);
  try {
    return await replayFrom(input.store, file, spec, pace, maxSlowdown, rules, flags, check);
  } finally {
    input.close();
  }
}

async function replayFrom(
  store: RecordingStore,
  file: string,
  spec: TargetSpec,
  pace: Pace,
  maxSlowdown: SlowdownLimit | undefined,
  rules: MatchRules,
  flags: ReplayFlags,
  check: CheckFlags | undefined,
): Promise<number> {
  const target = openTarget(spec);
  // Ctrl-C: nothing more is sent, what is in flight is cancelled, and what was answered is reported;
  // quitting at once still ends the servers this replay started. Listened to from before the plan is read.
  const stop = stopOnSignals(
    () => 'stopping the replay (requests in flight are cancelled; send it again to quit now)',
    () => target.kill(),
  );
  let planned: ReturnType<typeof readPlan>;
  try {
    planned = readPlan(store, file, flags);
  } catch (err) {
    stop.dispose();
    throw err;
  }
  const { plan, recordingIds, answers } = planned;
  const update =
    flags.update !== undefined
      ? openUpdateRecording(flags.update, {
          transport: spec.transport,
          target: target.label,
          overwrite: flags.force === true,
          recordedStartUs: Math.min(...recordingIds.map((id) => store.getRecording(id)!.startedUs)),
        })
      : undefined;
  // The checkers and their schema validators load only for --check (a third of a second).
  const checking = check
    ? (await import('../../replay/replay-check.js')).openReplayCheck(check.source, { transport: spec.transport, target: target.label, ...check })
    : undefined;
  const observer = update && checking ? teeObservers(update, checking) : (update ?? checking);
  // The JSON and JUnit reports list every exchange; the text report only the different ones.
  // A busy machine slows the server as it does the replayer: how late the replayer runs widens the floor.
  const lag = maxSlowdown !== undefined ? new LoopLag().start() : undefined;
  const builder = new ReplayReportBuilder(rules, {
    listAll: flags.json !== undefined || flags.junit !== undefined,
    ...(maxSlowdown !== undefined ? { slowdown: maxSlowdown, lagUs: () => lag!.recentUs() } : {}),
  });
  const load = (rowid: number): StoredExchange => store.exchangeAt(rowid)!;
  // What --update accepts that looks like an API change: warned about once the update is written.
  const apiChanges: ApiChange[] = [];
  let report: ReplayReport;
  let written = false;
  try {
    const run = await runReplay({
      plan,
      load,
      loadFrame: (rowid) => store.frameAt(rowid),
      onAnswer: (i, recorded, answer) => {
        builder.add(i, recorded, answer);
        const change = update ? apiChangeOf(recorded, answer) : undefined;
        if (change) apiChanges.push(change);
      },
      target,
      answers,
      pace,
      timeoutMs: timeoutMs(flags.timeout),
      ...(observer ? { observer } : {}),
      signal: stop.signal,
    }).finally(() => {
      lag?.stop();
      return target.close(stop.stoppedBy() ? STOPPED_GRACE_MS : undefined);
    });
    report = builder.finish({
      file,
      recordingIds,
      target: target.label,
      ...(lag ? { loopLagMaxUs: lag.maxUs } : {}),
      notSent: run.notSent,
      ...(run.failure !== undefined ? { failure: run.failure } : {}),
      ...(run.stopped ? { stopped: { signal: stop.stoppedBy() ?? 'a signal', planned: plan.size } } : {}),
    });
    if (checking) report = { ...report, check: await checking.finish() };
    // A replay cut short is no baseline: --update is not written.
    const unfit = run.stopped ? 'the replay was stopped' : run.failure !== undefined ? `the target failed (${run.failure})` : undefined;
    await writeOutputs(report, flags, unfit === undefined ? update : undefined);
    written = update !== undefined && unfit === undefined;
    if (unfit !== undefined && update) {
      await update.abandon();
      process.stderr.write(`mcptap: --update ${flags.update} not written: ${terminalSafe(unfit)}\n`);
    }
    // Never reached: exit 5, with the reports written (every exchange not sent), for CI to publish.
    if (!run.reached && !run.stopped) {
      throw new McptapError(
        'MCPTAP_REPLAY_TARGET_UNAVAILABLE',
        `${target.label} did not answer: ${(run.failure ?? 'no response').replace(/\.+$/, '')}. ${spec.transport === 'stdio' ? 'Check the command after -- (it must start an MCP server on stdio).' : 'Start the server, or check --url.'}`,
      );
    }
  } catch (err) {
    await update?.abandon();
    throw err;
  } finally {
    stop.dispose();
  }
  // `--json -`: the JSON on stdout, for a pipe; the text report beside it on stderr.
  const textOut = flags.json === '-' ? process.stderr : process.stdout;
  const color = flags.color !== false && textOut.isTTY === true && !process.env.NO_COLOR;
  textOut.write(renderText(report, { color }));
  if (update?.replaced) {
    const n = update.replaced.recordings;
    const held = n > 0 ? ` (which held ${counted(n, 'recording')})` : ' (which was not a recording)';
    process.stderr.write(`mcptap: replaced ${flags.update}${held} with the replayed traffic (--force)\n`);
  }
  if (flags.json === '-') process.stdout.write(renderJson(report));
  const signal = stop.stoppedBy();
  if (signal !== undefined) return SIGNAL_EXIT[signal];
  // The update written is the accept step's success: its differences are what it accepted.
  if (written) {
    process.stderr.write(updateSummary(flags.update!, countReport(report).different, apiChanges));
    // Changed answers are accepted; check findings are not: they still fail the run.
    return (report.check?.failing ?? 0) > 0 ? ExitCode.Failed : ExitCode.Ok;
  }
  return hasDifferences(report) ? ExitCode.Failed : ExitCode.Ok;
}

/** What `--update` wrote, and a warning per accepted answer that looks like an API change. */
function updateSummary(file: string, changed: number, apiChanges: readonly ApiChange[]): string {
  const lines = [`mcptap: wrote ${file}: ${counted(changed, 'changed answer')} accepted`];
  for (const c of apiChanges) lines.push(`mcptap: warning: accepted an API change: ${c.exchange} worked when recorded, now ${c.kind}: ${c.detail}`);
  if (apiChanges.length > 0)
    lines.push('mcptap: a baseline that expects these errors no longer tests the calls: record the clients again instead (README: "The loop in CI", step 5)');
  return terminalSafe(lines.join('\n')) + '\n';
}

/** Every output or none: a failed write leaves the others' old versions in place. */
async function writeOutputs(report: ReplayReport, flags: ReplayFlags, update: UpdateRecording | undefined): Promise<void> {
  const write = async (flag: string, path: string, text: string) => {
    try {
      await writeFileAtomic(path, text);
    } catch (err) {
      throw new McptapError(
        'MCPTAP_REPLAY_WRITE_FAILED',
        `${flag} ${path}: cannot write the report (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      );
    }
  };
  if (flags.json !== undefined && flags.json !== '-') await write('--json', flags.json, renderJson(report));
  if (flags.junit !== undefined) await write('--junit', flags.junit, renderJUnit(report));
  await update?.commit();
}

function readPlan(store: RecordingStore, file: string, flags: ReplayFlags): { plan: ReplayPlan<ExchangeHead>; recordingIds: number[]; answers: ServerAnswers } {
  const recordingIds = (flags.recording ?? [undefined]).map((r) => pickRecording(store, file, r));
  const starts = new Map(recordingIds.map((id) => [id, store.getRecording(id)!.startedUs]));
  const since = flags.since !== undefined ? timeBound('--since', flags.since) : undefined;
  const until = flags.until !== undefined ? timeBound('--until', flags.until) : undefined;
  if (since && until && recordingIds.every((id) => since(starts.get(id)!) >= until(starts.get(id)!)))
    throw new McptapError('MCPTAP_BAD_FLAG', `--since ${flags.since} is not before --until ${flags.until}: nothing can be replayed between them`);
  const selected = (ex: ExchangeHead): boolean => {
    if (flags.method !== undefined && ex.method !== flags.method) return false;
    if (flags.tool !== undefined && ex.target !== flags.tool) return false;
    if (flags.outcome !== undefined && listedOutcome(ex) !== flags.outcome) return false;
    const start = starts.get(ex.recordingId)!;
    if (since !== undefined && ex.startUs < since(start)) return false;
    if (until !== undefined && ex.startUs >= until(start)) return false;
    return true;
  };
  // Streamed, plain columns only: the plan keeps a few numbers per selected request; the server's own
  // requests (few) are read whole, for their recorded answers.
  const builder = new ReplayPlanBuilder<ExchangeHead>(selected);
  const serverRequests: StoredExchange[] = [];
  for (const id of recordingIds) {
    for (const ex of store.iterateExchangeHeads(id)) {
      if (ex.direction === 'c2s') builder.add(ex);
      else if (ex.answered && ex.method !== '') serverRequests.push(store.exchangeAt(ex.rowid)!);
    }
    for (const n of store.iterateClientNotifications(id)) builder.addNotification(n);
  }
  const plan = builder.build();
  if (plan.size === 0) {
    const filtered = flags.method ?? flags.tool ?? flags.outcome ?? flags.since ?? flags.until;
    throw new McptapError(
      'MCPTAP_REPLAY_NO_EXCHANGES',
      `recording ${recordingIds.join(', ')} in ${file} has no client requests to replay${filtered !== undefined ? ' that match the filters' : ''} (see mcptap show ${file})`,
    );
  }
  return { plan, recordingIds, answers: new ServerAnswers(serverRequests) };
}

/** `--since`/`--until`: an absolute time, or a duration after the recording's start. */
function timeBound(flag: string, v: string): (recordingStartUs: number) => number {
  const ms = parseDurationMs(v);
  if (ms !== undefined) return (start) => start + ms * 1000;
  const at = Date.parse(v);
  if (!Number.isFinite(at))
    throw new McptapError('MCPTAP_BAD_FLAG', `${flag}: not a time: ${JSON.stringify(v)} (ISO 8601, or a duration from the recording start: 90s)`);
  return () => at * 1000;
}

function targetSpec(command: string[], flags: ReplayFlags): TargetSpec {
  const timeout = timeoutMs(flags.timeout);
  if (flags.url !== undefined && command.length > 0)
    throw new McptapError('MCPTAP_BAD_FLAG', 'give the target either as --url or as a command after --, not both');
  if (flags.url !== undefined) {
    const url = parseUpstream(flags.url, '--url');
    return { transport: 'http', url: url.href, headers: parseHeaders(flags.header ?? []), timeoutMs: timeout };
  }
  if (command.length === 0) throw new McptapError('MCPTAP_BAD_FLAG', 'replay needs a target: --url URL, or -- <command> [args...] for a stdio server');
  if (flags.header !== undefined) throw new McptapError('MCPTAP_BAD_FLAG', '--header applies to HTTP targets (--url) only');
  return { transport: 'stdio', command: command[0]!, args: command.slice(1), timeoutMs: timeout };
}

function parseHeaders(list: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const h of list) {
    const i = h.indexOf(':');
    const name = i > 0 ? h.slice(0, i).trim() : '';
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) throw new McptapError('MCPTAP_BAD_FLAG', `--header must be 'Name: value', got ${JSON.stringify(h)}`);
    out[name.toLowerCase()] = h.slice(i + 1).trim();
  }
  return out;
}

export function parsePace(v: string): Pace {
  if (v === 'recorded') return { kind: 'recorded' };
  if (v === 'fast') return { kind: 'fast' };
  const n = Number(v.replace(/x$/, ''));
  if (!Number.isFinite(n) || n <= 0)
    throw new McptapError('MCPTAP_BAD_FLAG', `--pace must be recorded, fast or a positive factor (2 = twice the recorded rate), got ${JSON.stringify(v)}`);
  return { kind: 'factor', factor: n };
}

function minSamples(v: string | undefined): number {
  if (v === undefined) return DEFAULT_MIN_SAMPLES;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new McptapError('MCPTAP_BAD_FLAG', `--min-samples must be a whole number of at least 1, got ${JSON.stringify(v)}`);
  return n;
}

function timeoutMs(v: string): number {
  const ms = parseDurationMs(v);
  if (ms === undefined || ms <= 0) throw new McptapError('MCPTAP_BAD_FLAG', `--timeout must be a duration with a unit (30s, 500ms), got ${JSON.stringify(v)}`);
  return ms;
}
