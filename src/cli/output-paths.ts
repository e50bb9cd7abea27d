/**
 * --json / --junit / --html (and replay's --update) must be writable before a long run starts
 * (load, replay, report): finding out after the run, with its results lost, is the worst time.
 * `--json -` is stdout (the text report then goes to stderr); the other outputs need a file. No
 * output may be an input, another output, or (a report) a recording: it would be destroyed.
 */
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { McptapError, type McptapErrorCode } from '../errors.js';
import { isSqliteFile } from '../store/recording-file-precheck.js';

export function checkOutputPaths(
  flags: { json?: string; junit?: string; html?: string; sarif?: string; snapshot?: string; update?: string },
  code: McptapErrorCode,
  inputs: readonly string[] = [],
): void {
  const taken = inputPlaces(inputs);
  for (const [flag, path] of [
    ['--json', flags.json],
    ['--junit', flags.junit],
    ['--html', flags.html],
    ['--sarif', flags.sarif],
    ['--snapshot', flags.snapshot],
    ['--update', flags.update],
  ] as const) {
    if (path === undefined || (path === '-' && flag === '--json')) continue;
    if (path === '-') throw new McptapError(code, `${flag} -: only --json can go to stdout; give ${flag} a file`);
    try {
      const exists = existsSync(path);
      // A directory passes the access check but cannot be written as a file.
      if (exists && statSync(path).isDirectory()) throw Object.assign(new Error('a directory'), { code: 'EISDIR' });
      accessSync(exists ? path : dirname(resolve(path)), constants.W_OK);
    } catch (err) {
      throw new McptapError(code, `${flag} ${path}: cannot write there (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
    const place = samePlace(path);
    const other = taken.get(place);
    // --update may replace the recording replayed (with --force): that is what it writes.
    if (other !== undefined && !(flag === '--update' && other.startsWith('is the input')))
      throw new McptapError(code, `${flag} ${path}: ${other}; each output needs a file of its own`);
    if (flag !== '--update' && isSqliteFile(path)) throw new McptapError(code, `${flag} ${path}: is a recording; a report would replace it`);
    taken.set(place, `is given to ${flag} too`);
  }
}

/**
 * The inputs as places no output may take: each file, and the side files SQLite keeps beside a
 * recording while it is open (an output there would be deleted when the recording is closed).
 */
export function inputPlaces(inputs: readonly string[]): Map<string, string> {
  const taken = new Map<string, string>();
  for (const file of inputs) {
    taken.set(samePlace(file), `is the input ${file}`);
    for (const side of SQLITE_SIDE_FILES) taken.set(samePlace(file + side), `is where SQLite keeps the input ${file}'s ${side.slice(1)} file`);
  }
  return taken;
}

const SQLITE_SIDE_FILES = ['-wal', '-shm', '-journal'];

/** One key per file, whatever its name: `./` spellings, symlinks and hard links are one file. */
export function samePlace(path: string): string {
  try {
    const st = statSync(path);
    return `${st.dev}:${st.ino}`;
  } catch {
    return resolve(path); // not there yet
  }
}
