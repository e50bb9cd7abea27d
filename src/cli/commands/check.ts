/**
 * `mcptap check RECORDING`: CI verdicts on recorded MCP traffic. Flags -> typed options -> the check
 * engine (src/check/) over the recording's event stream -> text, JSON, JUnit and SARIF (src/report/).
 */
import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { ruleCatalogue } from '../../check/catalogue.js';
import { CHECKER_FACTORIES } from '../../check/checkers.js';
import type { Severity } from '../../check/finding.js';
import { loadRuleSettings } from '../../check/rules-file.js';
import { checkFactories } from '../../check/live-check.js';
import { loadBaseline, readSnapshot, surfaceOfRecording, writeSnapshot, type Surface } from '../../check/surface-snapshot.js';
import { fileHead } from '../../interchange/jsonl-baseline.js';
import { isSqliteFile } from '../../store/recording-file-precheck.js';
import { checkRecording, failingCount, type FailOn } from '../../check/run-check.js';
import { McptapError } from '../../errors.js';
import { checkJson } from '../../report/check-json.js';
import { renderCheckJunit } from '../../report/check-junit.js';
import { checkSarif } from '../../report/check-sarif.js';
import { renderCheckText } from '../../report/check-text.js';
import type { CheckReportInput } from '../../report/check-view.js';
import { terminalSafe } from '../../report/format.js';
import { writeFileAtomic } from '../../util/atomic-write.js';
import { ExitCode } from '../exit-codes.js';
import { checkOutputPaths } from '../output-paths.js';
import { pickRecording } from '../recording-file.js';
import { openRecordingInput } from '../recording-input.js';
import type { RecordingStore } from '../../store/recording-store.js';

interface CheckFlags {
  recording?: string;
  rules?: string;
  baseline?: string;
  snapshot?: string;
  failOn: string;
  json?: string;
  junit?: string;
  sarif?: string;
}

const LEVELS: readonly Severity[] = ['error', 'warning', 'note'];

export function register(program: Command): void {
  program
    .command('check')
    .summary('judge a recording: MCP schema conformance, tool contracts, tool-surface drift, assertions')
    .description(
      'Streams a recording (SQLite, or mcptap JSONL) through the check rules and reports every finding. Protocol rules ' +
        'check each JSON-RPC message against the official MCP JSON Schema of the protocol version its connection negotiated ' +
        '(2024-11-05 to 2026-07-28, vendored in schemas/mcp/), naming the exchange, the side that sent it, a JSON Pointer into ' +
        "the message, the schema rule and the spec version; the tap's anomalies (stdout pollution, invalid messages, duplicate " +
        'ids, unanswered or pending requests, drops, an INCOMPLETE recording) are rules too. Every rule has a stable id and a ' +
        'section in docs/check.md.',
    )
    .argument('<recording>', 'recording file (written with --record, or mcptap JSONL)')
    .option('--recording <n>', 'check only this recording of the file (see mcptap ls; default: every recording, each judged alone)')
    .option('--rules <file>', 'rules file (YAML or JSON): `rules: { <rule id>: off|error|warning|note | { severity: ..., <option>: ... } }` (options flat)')
    .option('--baseline <file>', 'drift rules: judge the tool surface against this snapshot (--snapshot) or recording (SQLite or JSONL; its latest recording)')
    .option('--snapshot <file>', "write the recording's tool surface (tools, prompts, resources, token counts) as JSON to commit as a baseline")
    .option(
      '--fail-on <what>',
      'what fails the run, comma-separated: a level (error, warning, note: that level and above; none: no level) and rule ids, which add to the level',
      'error',
    )
    .option('--json <file>', 'write every finding as JSON (- for stdout; the text report then goes to stderr)')
    .option('--junit <file>', 'write JUnit XML: a testsuite per rule family, a testcase per finding')
    .option('--sarif <file>', 'write SARIF 2.1.0 (GitHub code scanning: upload with github/codeql-action/upload-sarif)')
    .addHelpText(
      'after',
      `
Exit codes: 0 nothing at the --fail-on level, 1 findings at it, 2 bad command line, 4 not a recording,
or a rules file with an error (reported as file:line).

A rules file tunes rules by id (an unknown id is an error) and adds assertions (docs/check.md):
  rules:
    protocol/pending: off              # a recording cut short on purpose
    protocol/orphan-response: error    # stricter than the default warning
    surface/tool-tokens: { severity: error, maxToolTokens: 800 }   # options flat, beside severity
  assertions:
    - name: search is fast
      select: { method: tools/call, tool: search }
      expect: [p95 <= 200ms, error_rate < 1%, count >= 1]
    - name: tools listed first
      select: { method: tools/call }
      preceded_by: { method: tools/list }

Examples:
  mcptap stdio --record tap.db -- node server.js   # record, then:
  mcptap check tap.db                              # text report; exit 1 on any error-level finding
  mcptap check tap.db --fail-on warning --sarif check.sarif --junit check.xml
  mcptap check tap.db --fail-on protocol/duplicate-id       # error level, and any duplicate-id finding
  mcptap check tap.db --fail-on none,protocol/result-schema --json - | jq '.findings[0]'   # that rule only
  mcptap check main.db --snapshot tools.json     # commit tools.json; then, in CI on the new build:
  mcptap check new.db --baseline tools.json      # drift: removed tools, loosened annotations, token growth`,
    )
    .action(async (file: string, flags: CheckFlags) => {
      process.exitCode = await runCheckCommand(file, flags);
    });
}

async function runCheckCommand(file: string, flags: CheckFlags): Promise<number> {
  const catalogue = ruleCatalogue(CHECKER_FACTORIES);
  const failOn = parseFailOn(
    flags.failOn,
    catalogue.map((r) => r.id),
  );
  checkOutputPaths({ json: flags.json, junit: flags.junit, sarif: flags.sarif, snapshot: flags.snapshot }, 'MCPTAP_CHECK_BAD_FLAG', [file]);
  const rules = flags.rules === undefined ? { settings: new Map(), assertions: [] } : loadRuleSettings(flags.rules, catalogue);
  const factories = checkFactories(rules);
  const baseline = flags.baseline === undefined ? undefined : await baselineSurface(flags.baseline);
  const input = await openRecordingInput(file);
  const reports: CheckReportInput[] = [];
  try {
    // Every recording of the file unless one is named: taps recording into one file at once each
    // leave their own, and judging only the latest would pass the others unseen.
    const ids = flags.recording !== undefined ? [pickRecording(input.store, file, flags.recording)] : allRecordings(input.store, file);
    for (const recordingId of ids) {
      const result = checkRecording(input.store, recordingId, {
        factories,
        settings: rules.settings,
        context: { recording: { file }, ...(baseline && { baseline }) },
      });
      reports.push({ file, recordingId, result, failing: failingCount(result, failOn), failOn: failOnText(failOn), failOnSpec: failOn });
    }
    if (flags.snapshot !== undefined) await writeSnapshot(flags.snapshot, surfaceOfRecording(input.store, reports.at(-1)!.recordingId));
  } finally {
    input.close();
  }
  const failing = reports.reduce((n, r) => n + r.failing, 0);
  const text = terminalSafe(reports.map(renderCheckText).join('\n') + severalLine(file, reports));
  if (flags.json === '-') process.stderr.write(text);
  else process.stdout.write(text);
  const json = () => `${JSON.stringify(reports.length === 1 ? checkJson(reports[0]!) : severalJson(file, reports, failing), null, 2)}\n`;
  if (flags.json === '-') process.stdout.write(json());
  else if (flags.json !== undefined) await writeFileAtomic(flags.json, json());
  if (flags.junit !== undefined) await writeFileAtomic(flags.junit, renderCheckJunit(reports));
  if (flags.sarif !== undefined) await writeFileAtomic(flags.sarif, `${JSON.stringify(checkSarif(reports), null, 2)}\n`);
  return failing > 0 ? ExitCode.Failed : ExitCode.Ok;
}

/** The file's recordings, oldest first; none is bad input. */
function allRecordings(store: RecordingStore, file: string): number[] {
  const ids = store
    .listRecordings()
    .map((r) => r.id)
    .sort((a, b) => a - b);
  if (ids.length === 0) throw new McptapError('MCPTAP_NO_RECORDING', `${file} holds no recordings`);
  return ids;
}

/** With several recordings checked, the verdict over all of them. */
function severalLine(file: string, reports: readonly CheckReportInput[]): string {
  if (reports.length < 2) return '';
  const failed = reports.filter((r) => r.failing > 0).map((r) => r.recordingId);
  const verdict = failed.length > 0 ? `FAILED: recording(s) ${failed.join(', ')}` : 'passed';
  return `\nmcptap check ${file}: ${reports.length} recordings checked (pick one with --recording N); ${verdict}\n`;
}

/** `--json` with several recordings: the verdict over all, and each recording's report as with one. */
function severalJson(file: string, reports: readonly CheckReportInput[], failing: number): unknown {
  return { file, verdict: { failed: failing > 0, failing, failOn: reports[0]!.failOn }, recordings: reports.map(checkJson) };
}

/** `--baseline FILE`: a snapshot (`--snapshot`'s JSON), or a recording (SQLite or JSONL) whose lists give the surface. */
async function baselineSurface(file: string): Promise<Surface> {
  if (!existsSync(file))
    throw new McptapError('MCPTAP_RECORDING_NOT_FOUND', `--baseline ${file}: no such file (a snapshot written by mcptap check --snapshot, or a recording)`);
  if (isSqliteFile(file)) return loadBaseline(file);
  const head = fileHead(file, 256);
  if (/"format"\s*:\s*"mcptap-surface"/.test(head)) return readSnapshot(file);
  // Neither a snapshot nor JSONL: say what a baseline may be, not what a JSONL header looks like.
  if (!/^\s*\{\s*"mcptap"\s*:\s*"jsonl"/.test(head))
    throw new McptapError(
      'MCPTAP_CHECK_SNAPSHOT_INVALID',
      `--baseline ${file}: not a baseline; give a snapshot written by mcptap check --snapshot, or a recording (SQLite, or mcptap JSONL)`,
    );
  const input = await openRecordingInput(file);
  try {
    const id = input.store.latestRecordingId();
    if (id === undefined) throw new McptapError('MCPTAP_NO_RECORDING', `${file} has no recording to take the baseline surface from`);
    return surfaceOfRecording(input.store, id);
  } finally {
    input.close();
  }
}

/**
 * `--fail-on error` / `warning,protocol/pending` / `none,protocol/pending`: a level (and above) and rule
 * ids. Rule ids add to the level, which stays `error` unless given; `none` gates on the named rules only.
 */
export function parseFailOn(text: string, ruleIds: readonly string[], flag = '--fail-on'): FailOn {
  let level: Severity | 'none' | undefined;
  const rules = new Set<string>();
  for (const item of text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    if (item === 'none' || (LEVELS as readonly string[]).includes(item)) {
      if (level !== undefined && level !== item) throw new McptapError('MCPTAP_CHECK_BAD_FLAG', `${flag} takes one level, got ${level} and ${item}`);
      level = item as Severity | 'none';
    } else if (ruleIds.includes(item)) rules.add(item);
    else throw new McptapError('MCPTAP_CHECK_BAD_FLAG', `${flag} ${item}: not a level (error, warning, note, none) nor a rule id (see docs/check.md)`);
  }
  if (level === undefined && rules.size === 0) throw new McptapError('MCPTAP_CHECK_BAD_FLAG', `${flag} needs a level (error, warning, note, none) or rule ids`);
  return { ...(level !== 'none' && { level: level ?? 'error' }), rules };
}

/** The effective `--fail-on`, for the reports: `error,protocol/pending` when only the rule was given. */
export function failOnText(failOn: FailOn): string {
  return [failOn.level ?? 'none', ...failOn.rules].join(',');
}
