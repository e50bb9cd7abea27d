/**
 * `mcptap import FILE.jsonl [--into OUT.db]`: a JSONL capture (mcptap's own export, or another
 * tool's converted to docs/jsonl-format.md) into a recording, correlated and redacted as live.
 */
import { createReadStream, existsSync, realpathSync } from 'node:fs';
import { isSqliteFile } from '../../store/recording-file-precheck.js';
import { createInterface } from 'node:readline';
import type { Command } from 'commander';
import { McptapError } from '../../errors.js';
import { importJsonl } from '../../interchange/jsonl-import.js';
import { redactorFromEnv } from '../../redact/redactor.js';
import { writeAtomically } from '../../util/atomic-file.js';
import { createLogger, type LogLevel } from '../../util/logger.js';
import { VERSION } from '../../version.js';
import { logLevelOption } from '../log-level-option.js';
import { counted } from '../../util/plural.js';

interface ImportFlags {
  into?: string;
  force?: boolean;
  redactField: string[];
  redactHeader: string[];
  logLevel: LogLevel;
}

const collect = (v: string, acc: string[]) => [...acc, v];

export function register(program: Command): void {
  program
    .command('import')
    .summary('build a recording from a JSONL capture (mcptap export --jsonl, or another tool converted)')
    .description(
      'Reads mcptap JSONL (docs/jsonl-format.md: a header line, then one JSON-RPC message per line with its time, ' +
        'direction and connection) and builds a recording from it through the same pipeline a live tap uses: the ' +
        'correlator pairs requests and responses, links progress and cancellations, and the recorder redacts secrets ' +
        '(a capture from another tool may hold them) exactly as at record time. The recording can then be listed, ' +
        'shown, exported, replayed and load-tested like one the tap made.',
    )
    .argument('<file>', 'JSONL file')
    .option('--into <out>', 'recording file to write (default: FILE with .db instead of .jsonl)')
    .option('--force', 'overwrite OUT when it exists (to combine recordings, use mcptap merge)')
    .option('--redact-field <name>', 'also redact this JSON field name; repeatable', collect, [])
    .option('--redact-header <name>', 'also redact this header; repeatable', collect, [])
    .addOption(logLevelOption('warn'))
    .addHelpText(
      'after',
      `
Errors name the place: FILE:LINE: FIELD: what is wrong. Exit codes: 0 imported, 4 FILE missing or
invalid (no OUT is left behind), 2 OUT exists (pass --force). MCPTAP_REDACT_KEY keys the redaction
tokens, as for the taps.

Examples:
  mcptap export tap.db --jsonl tap.jsonl && mcptap import tap.jsonl --into copy.db
  mcptap import capture.jsonl --into capture.db --redact-field sessionToken
  mcptap ls capture.db`,
    )
    .action(async (file: string, flags: ImportFlags) => {
      await runImport(file, flags);
    });
}

async function runImport(file: string, flags: ImportFlags): Promise<void> {
  if (!existsSync(file)) throw new McptapError('MCPTAP_IMPORT_MISSING', `no such file: ${file}`);
  if (isSqliteFile(file))
    throw new McptapError('MCPTAP_IMPORT_INVALID', `${file} is a recording already (SQLite), not JSONL: to combine recordings use mcptap merge`);
  const out = flags.into ?? `${file.replace(/\.jsonl$/i, '')}.db`;
  if (existsSync(out) && realpathSync(out) === realpathSync(file))
    throw new McptapError('MCPTAP_BAD_FLAG', `--into ${out} is the file being imported: give the recording another name`);
  const redactor = redactorFromEnv(process.env, { fields: flags.redactField, headers: flags.redactHeader });
  const logger = createLogger(flags.logLevel);
  const result = await writeAtomically(out, { overwrite: flags.force === true, code: 'MCPTAP_RECORDING_UNWRITABLE' }, async (outPath) => {
    const input = createReadStream(file, 'utf8');
    const lines = createInterface({ input, crlfDelay: Infinity });
    try {
      return await importJsonl({ lines, file, outPath, mcptapVersion: VERSION, redactor, logger });
    } finally {
      lines.close();
      input.destroy();
    }
  });
  process.stderr.write(
    `mcptap: imported ${file} (${counted(result.lines, 'line')}, ${counted(result.connections, 'connection')}) into ${out} as recording ${result.recordingId}\n`,
  );
}
