/**
 * Output files that are either whole or absent: written under a temporary name beside the target
 * (same directory, so the rename stays on one file system) and renamed into place only on success.
 */
import { createReadStream, createWriteStream, existsSync, renameSync, rmSync, statSync } from 'node:fs';
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
  if (statSync(target, { throwIfNoEntry: false })?.isDirectory()) throw new McptapError('MCPTAP_BAD_FLAG', `${target} is a directory; give a file`);
  const temp = tempFor(target);
  try {
    const result = await write(temp);
    await moveIntoPlace(temp, target);
    return result;
  } catch (err) {
    removeTemp(temp);
    if (err instanceof McptapError) throw err;
    if (isDamagedDatabase(err)) throw damagedDatabaseError(err); // an input's pages, not the output
    throw new McptapError(opts.code, `cannot write ${target}: ${(err as Error).message}`, { cause: err });
  }
}

/** Where a file bound for `target` is written first: beside where it lands (or in tmp for a pipe or device). */
export function tempFor(target: string): string {
  const place = writeTarget(target);
  return place.inPlace ? tempPathBeside(join(tmpdir(), 'mcptap-out')) : tempPathBeside(place.path);
}

/**
 * A finished `temp` (from {@link tempFor}) to `target`: renamed over the file (through a symlink, the
 * one it points to); a device or a pipe (`/dev/stdout`) gets a copy, since renamed over it would be replaced.
 */
export async function moveIntoPlace(temp: string, target: string): Promise<void> {
  const place = writeTarget(target);
  if (place.inPlace) {
    await pipeline(createReadStream(temp), createWriteStream(target));
    removeTemp(temp);
    return;
  }
  renameSync(temp, place.path);
  // A replaced SQLite file must not meet the side files of the one it replaced.
  for (const side of ['-wal', '-shm']) rmSync(`${place.path}${side}`, { force: true });
}
