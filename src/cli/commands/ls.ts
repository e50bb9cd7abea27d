/**
 * `mcptap ls FILE [--json]`: the recordings in a recording file, each with its exchange outcome
 * counts, anomalies, drops and a per-method latency table.
 */
import type { Command } from 'commander';
import { recordingListJson, renderRecordingList, type ListedRecording } from '../../report/recording-list.js';
import { withRecordingFile } from '../recording-file.js';
import { terminalSafe } from '../../report/format.js';

interface LsFlags {
  json?: boolean;
}

export function register(program: Command): void {
  program
    .command('ls')
    .summary('list the recordings in a recording file')
    .description(
      'Lists each recording (transport, target, start, duration, exchange outcomes, anomalies, dropped events) and a per-method table (a row per tool for tools/call) with outcome counts and latency p50/p95/p99.',
    )
    .argument('<file>', 'recording file written with --record')
    .option('--json', 'print JSON instead of text')
    .addHelpText(
      'after',
      `
A recording whose tap was killed, or that is still being written, is marked INCOMPLETE (complete: false
in --json). Exit codes: 0 ok, 4 not a recording file.

Examples:
  mcptap ls tap.db
  mcptap ls tap.db --json | jq '.recordings[] | {id, exchanges, complete}'
  mcptap show tap.db --recording 2                # then one recording's exchanges`,
    )
    .action((file: string, flags: LsFlags) => {
      const items: ListedRecording[] = withRecordingFile(file, (store) =>
        store.listRecordings().map((recording) => ({ recording, summary: store.summary(recording.id) })),
      );
      process.stdout.write(flags.json ? `${JSON.stringify(recordingListJson(file, items), null, 2)}\n` : terminalSafe(renderRecordingList(file, items)));
    });
}
