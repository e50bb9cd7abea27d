/**
 * `mcptap merge OUT IN...`: recordings of several tap instances into one file, each still a
 * recording of its own. (`mcptap merge-results` is the other merge: load-test results.)
 */
import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { terminalSafe } from '../../report/format.js';
import { samePlace } from '../output-paths.js';
import { counted } from '../../util/plural.js';
import { McptapError } from '../../errors.js';
import { mergeRecordings, type MergedRecording, type MergeSource } from '../../interchange/merge-recordings.js';
import { RecordingStore } from '../../store/recording-store.js';
import { writeAtomically } from '../../util/atomic-file.js';

export function register(program: Command): void {
  program
    .command('merge')
    .summary('merge recording files (several taps) into one; each recording stays its own (not load results: see merge-results)')
    .description(
      'Copies every recording of every IN file into a new recording file OUT. Each stays a separate recording, with a ' +
        'new number in OUT and its original transport, target, start time, exchanges, frames and anomalies; ' +
        '`mcptap ls OUT` lists them all. For load-test results (mcptap load --json), use mcptap merge-results.',
    )
    .argument('<out>', 'recording file to write (refused if it exists, unless --force)')
    .argument('<in...>', 'recording files to read')
    .option('--force', 'overwrite OUT when it exists')
    .addHelpText(
      'after',
      `
OUT is written whole or not at all (a temporary file renamed into place). Exit codes: 0 merged,
4 an IN file is missing or not a recording (MCPTAP_MERGE_RECORDINGS_INVALID), 2 OUT exists (pass --force)
or an IN file is given twice. A recording whose tap is still running (or was killed) is merged as
it is, ending at its last event and marked INCOMPLETE; merge again once the tap has stopped.

Examples:
  mcptap merge all.db tap-a.db tap-b.db
  mcptap ls all.db`,
    )
    .action(async (out: string, inputs: string[], flags: { force?: boolean }) => {
      refuseRepeats(inputs);
      const merged = await writeAtomically(out, { overwrite: flags.force === true, code: 'MCPTAP_RECORDING_UNWRITABLE' }, (temp) => mergeFiles(inputs, temp));
      const lines = merged.map(
        (m) =>
          `  ${m.file} recording ${m.from} -> ${m.to} (${m.events} events${m.incomplete !== undefined ? `; INCOMPLETE: ${terminalSafe(m.incomplete)}` : ''})\n`,
      );
      process.stdout.write(`merged ${counted(merged.length, 'recording')} into ${out}:\n${lines.join('')}`);
      const open = merged.filter((m) => m.notClosed).length;
      if (open > 0)
        process.stderr.write(
          `mcptap warn: ${open} of the recordings merged ${open === 1 ? 'was' : 'were'} not closed (a tap still running, or killed): merge again once it has stopped to get all of its traffic\n`,
        );
    });
}

/** Every input is closed before OUT is renamed into place (OUT may be one of them, with --force). */
function mergeFiles(inputs: string[], temp: string): MergedRecording[] {
  const sources: MergeSource[] = [];
  try {
    for (const file of inputs) sources.push(openInput(file));
    const store = RecordingStore.open(temp, { create: true });
    try {
      return mergeRecordings(sources, store);
    } finally {
      store.close();
    }
  } finally {
    for (const s of sources) s.store.close();
  }
}

/** The same file given twice would be merged twice: every recording in it duplicated. */
function refuseRepeats(inputs: string[]): void {
  const seen = new Map<string, string>();
  for (const file of inputs) {
    if (!existsSync(file)) continue; // missing: said by openInput
    const real = samePlace(file); // the file itself, whatever its name: symlinks and hard links too
    const first = seen.get(real);
    if (first !== undefined)
      throw new McptapError('MCPTAP_BAD_FLAG', `${file} is given twice${first === file ? '' : ` (as ${first} and ${file})`}: each file is merged once`);
    seen.set(real, file);
  }
}

function openInput(file: string): MergeSource {
  let store: RecordingStore;
  try {
    store = RecordingStore.open(file, { create: false });
  } catch (err) {
    throw new McptapError('MCPTAP_MERGE_RECORDINGS_INVALID', `cannot merge ${file}: ${(err as Error).message}`);
  }
  if (store.latestRecordingId() === undefined) {
    store.close();
    throw new McptapError('MCPTAP_MERGE_RECORDINGS_INVALID', `cannot merge ${file}: it holds no recordings`);
  }
  return { file, store };
}
