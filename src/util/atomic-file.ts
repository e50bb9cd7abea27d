/**
 * Output files that are either whole or absent: written under a temporary name beside the target
 * (same directory, so the rename stays on one file system) and renamed into place only on success.
 */
import { createReadStream, createWriteStream, existsSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { pipeline } from 'node:stream/promises';
import { randomBytes } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import { McptapError, type McptapErrorCode } from '../errors.js';
import { damagedDatabaseError, isDamagedDatabase } from './damaged-database.js';
import { writeTarget } from './atomic-write.js';

/** A fresh temporary path beside `target`. */
export function tempPathBeside(target: string): string {
  return join(dirname(target), `.${basename(target)}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`);
}

/** Removes a temporary file and any SQLite side files it left (`-wal`, `-shm`, `-journal`). */
export function removeTemp(path: string): void {
  for (const p of [path, `${path}-wal`, `${path}-shm`, `${path}-journal`]) rmSync(p, { force: true });
}

/**
 * Runs `write(tempPath)` and renames the result to `target`; on any failure the temporary file is
 * removed and the error rethrown (ours as they are, others as `code`). With `overwrite` false an
 * existing `target` is refused (a usage error) before anything is written.
 */
export async function writeAtomically<T>(
  target: string,
  opts: { overwrite: boolean; code: McptapErrorCode },
  write: (tempPath: string) => T | Promise<T>,
): Promise<T> {
  if (!opts.overwrite && existsSync(target)) throw new McptapError('MCPTAP_BAD_FLAG', `${target} exists; pass --force to overwrite it`);
  const place = writeTarget(target);
  // A device or a pipe (`/dev/stdout`) gets a copy of the finished file: renamed over, it would be replaced.
  const temp = place.inPlace ? tempPathBeside(join(tmpdir(), 'mcptap-out')) : tempPathBeside(place.path);
  try {
    const result = await write(temp);
    if (place.inPlace) {
      await pipeline(createReadStream(temp), createWriteStream(target));
      removeTemp(temp);
      return result;
    }
    renameSync(temp, place.path);
    // A replaced SQLite file must not meet the side files of the one it replaced.
    for (const side of ['-wal', '-shm']) rmSync(`${place.path}${side}`, { force: true });
    return result;
  } catch (err) {
    removeTemp(temp);
    if (err instanceof McptapError) throw err;
    if (isDamagedDatabase(err)) throw damagedDatabaseError(err); // an input's pages, not the output
    throw new McptapError(opts.code, `cannot write ${target}: ${(err as Error).message}`, { cause: err });
  }
}
