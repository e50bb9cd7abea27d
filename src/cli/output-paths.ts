/**
 * --json / --junit / --html must be writable before a long run starts (load, replay, report):
 * finding out after the run, with its results lost, is the worst time. `--json -` is stdout (the
 * text report then goes to stderr); the other reports need a file.
 */
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { McptapError, type McptapErrorCode } from '../errors.js';

export function checkOutputPaths(flags: { json?: string; junit?: string; html?: string }, code: McptapErrorCode): void {
  for (const [flag, path] of [
    ['--json', flags.json],
    ['--junit', flags.junit],
    ['--html', flags.html],
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
  }
}
