/**
 * `mcptap export --jsonl|--har [OUT]`: a recording written as a file (or to stdout when OUT is `-`
 * or absent). A file is written whole or not at all: under a temporary name, renamed when done
 * (an existing OUT is replaced, and the message says so, unless it is a recording: that one may be
 * the only copy of its traffic, and a typo such as `export tap.db --jsonl tap.db` must not destroy it).
 */
import { createWriteStream, statSync } from 'node:fs';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { harChunks } from '../interchange/har-export.js';
import { jsonlLines } from '../interchange/jsonl-export.js';
import { McptapError } from '../errors.js';
import { isSqliteFile } from '../store/recording-file-precheck.js';
import { writeAtomically } from '../util/atomic-file.js';
import { VERSION } from '../version.js';
import { openRecordingFile, pickRecording } from './recording-file.js';
import { inputPlaces, samePlace } from './output-paths.js';

export interface ExportFileOptions {
  format: 'jsonl' | 'har';
  out: string | undefined;
  recording: string | undefined;
}

export async function exportToFile(file: string, opts: ExportFileOptions): Promise<void> {
  if (opts.out !== undefined && opts.out !== '-' && isSqliteFile(opts.out)) {
    throw new McptapError(
      'MCPTAP_EXPORT_OUT_IS_RECORDING',
      `${opts.out} is a recording (SQLite), and --${opts.format} would replace it with ${opts.format.toUpperCase()}: give another OUT (e.g. tap.${opts.format}), or remove it first`,
    );
  }
  const clash = opts.out !== undefined && opts.out !== '-' ? inputPlaces([file]).get(samePlace(opts.out)) : undefined;
  if (clash !== undefined) throw new McptapError('MCPTAP_EXPORT_OUT_IS_RECORDING', `${opts.out} ${clash}: give another OUT`);
  const store = openRecordingFile(file);
  try {
    const id = pickRecording(store, file, opts.recording);
    const chunks = opts.format === 'jsonl' ? jsonlChunks(jsonlLines(store, id)) : harChunks(store, id, VERSION);
    if (opts.out === undefined || opts.out === '-') {
      await writeAll(process.stdout, chunks);
      return;
    }
    const replacing = statSync(opts.out, { throwIfNoEntry: false })?.isFile() === true;
    await writeAtomically(opts.out, { overwrite: true, code: 'MCPTAP_EXPORT_WRITE_FAILED' }, async (temp) => {
      const stream = createWriteStream(temp);
      await writeAll(stream, chunks);
      stream.end();
      await finished(stream);
    });
    process.stderr.write(
      `mcptap: wrote recording ${id} of ${file} as ${opts.format.toUpperCase()} to ${opts.out}${replacing ? ' (replacing the file that was there)' : ''}\n`,
    );
  } finally {
    store.close();
  }
}

/** Lines joined into chunks of about 64 KiB: one write per chunk, not per line. */
function* jsonlChunks(lines: Iterable<string>): Generator<string> {
  let parts: string[] = [];
  let size = 0;
  for (const line of lines) {
    parts.push(line, '\n');
    size += line.length + 1;
    if (size >= 65536) {
      yield parts.join('');
      parts = [];
      size = 0;
    }
  }
  if (parts.length > 0) yield parts.join('');
}

/** Writes every chunk, waiting whenever the stream asks to; a stream error rejects. */
async function writeAll(stream: Writable, chunks: Iterable<string>): Promise<void> {
  let failed: Error | undefined;
  const onError = (err: Error) => (failed = err);
  stream.on('error', onError);
  try {
    for (const chunk of chunks) {
      if (failed) throw failed;
      if (!stream.write(chunk)) await new Promise<void>((resolve) => (stream.once('drain', resolve), stream.once('error', () => resolve())));
    }
    if (failed) throw failed;
  } finally {
    stream.off('error', onError);
  }
}
