/** Writing a file so that readers see the old file or the whole new one, never half of it. */
import { randomBytes } from 'node:crypto';
import { lstatSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';

/**
 * Where a write to `path` lands: through a symlink, the file it points to (the link stays); a
 * device or a pipe (`/dev/stdout`) is written in place, since renaming over it would replace it.
 */
export function writeTarget(path: string): { path: string; inPlace: boolean } {
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    // Not there yet; a dangling symlink is followed to the file it names, as the shell's `>` does.
    const dangling = lstatSync(path, { throwIfNoEntry: false })?.isSymbolicLink() === true;
    return { path: dangling ? resolve(dirname(path), readlinkSync(path)) : path, inPlace: false };
  }
  return { path: real, inPlace: !statSync(real).isFile() };
}

/** Writes `text` to a temporary file beside `path`, then renames it into place (see {@link writeTarget}). */
export async function writeFileAtomic(path: string, text: string): Promise<void> {
  const target = writeTarget(path);
  if (target.inPlace) return writeFile(path, text);
  const temp = join(dirname(target.path), `.${basename(target.path)}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    await writeFile(temp, text);
    await rename(temp, target.path);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
}
