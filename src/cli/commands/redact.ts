/**
 * `mcptap redact FILE [--rules FILE]`: rewrites an existing recording with the built-in redaction
 * rules plus the user's, leaving none of what they redact in the file's bytes (store/recording-rewrite.ts).
 */
import type { Command } from 'commander';
import { loadRedactionRules } from '../../redact/redaction-rules.js';
import { redactorFromEnv } from '../../redact/redactor.js';
import { rewriteRecording, type RewriteStep } from '../../store/recording-rewrite.js';
import { ExitCode } from '../exit-codes.js';

interface RedactFlags {
  rules?: string;
  progress?: boolean;
}

/** Test hook: the process is killed (SIGKILL) right after this step, to show a crash loses nothing. */
const CRASH_ENV = 'MCPTAP_TEST_REDACT_CRASH_AFTER';
/** Below this many rows a rewrite takes well under a second: no progress lines. */
const PROGRESS_MIN_ROWS = 20_000;

export function register(program: Command): void {
  program
    .command('redact')
    .summary('rewrite a recording with the redaction rules (built-in and yours), leaving no trace of what they redact')
    .description(
      'Redacts an existing recording in place: every frame, exchange, log line and anomaly goes through the built-in ' +
        'rules (Authorization, cookies, api_key-like fields, passwords in URLs, ...) and the rules file given with ' +
        '--rules (docs/redaction.md). The file is rewritten into a fresh one (no freed pages or WAL holding old bytes), ' +
        'fsynced and renamed over the original: a crash on the way leaves the original as it was. A recording a tap is ' +
        'still writing is refused. Values already redacted keep their tokens; new tokens use MCPTAP_REDACT_KEY when set ' +
        "(use the tap's key to make them comparable with its tokens), else a random key: equal values get equal tokens " +
        'within the file either way, so replay and mock still match them.',
    )
    .argument('<file>', 'recording file written with --record')
    .option('--rules <file>', 'redaction rules: JSON paths, fields, headers, regular expressions (YAML or JSON; docs/redaction.md)')
    .option('--no-progress', 'do not show progress on stderr')
    .addHelpText(
      'after',
      `
Examples:
  mcptap redact tap.db                          built-in rules only (e.g. a recording from an older mcptap)
  mcptap redact tap.db --rules redact.yaml      also what redact.yaml names

  # redact.yaml
  paths: [/params/arguments/note, /result/content/*/text]
  patterns: ['sk-[A-Za-z0-9]{12,}']

Exit codes: 0 done, 4 not a recording, invalid rules, or the recording is in use.`,
    )
    .action((file: string, flags: RedactFlags) => {
      process.exitCode = runRedact(file, flags);
    });
}

function runRedact(file: string, flags: RedactFlags): number {
  const rules = flags.rules ? loadRedactionRules(flags.rules) : {};
  const redactor = redactorFromEnv(process.env, rules);
  const crashAfter = process.env[CRASH_ENV];
  let shown = 0;
  const result = rewriteRecording(file, redactor, {
    onProgress: (done, total) => {
      if (flags.progress === false || total < PROGRESS_MIN_ROWS || (done - shown < total / 10 && done < total)) return;
      shown = done;
      process.stderr.write(`mcptap: redacting ${file}: ${done}/${total} rows (${Math.floor((done / total) * 100)}%)\n`);
    },
    afterStep: (step: RewriteStep) => {
      if (step === crashAfter) process.kill(process.pid, 'SIGKILL');
    },
  });
  process.stdout.write(`redacted ${file}: ${result.changed} of ${result.rows} rows changed\n`);
  return ExitCode.Ok;
}
