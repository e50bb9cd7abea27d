/**
 * Whole-or-nothing output files meet what a user may give as a path: a symlink (its target is
 * written, the link stays) and a pipe or device such as `/dev/stdout` (written in place: a rename
 * over it would replace it with a regular file). A named pipe stands in for `/dev/stdout`.
 */
import { execFileSync } from 'node:child_process';
import { createReadStream, lstatSync, mkdtempSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeAtomically } from '../../src/util/atomic-file.js';
import { writeFileAtomic } from '../../src/util/atomic-write.js';

/** What a reader of the named pipe gets, once the writer closes it. */
function readPipe(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    createReadStream(path, 'utf8')
      .on('data', (c) => (text += c))
      .on('end', () => resolve(text))
      .on('error', reject);
  });
}

describe('atomic output files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-atomic-'));

  it('through a symlink: the file it points to is replaced, the link stays', async () => {
    const real = join(dir, 'real.json');
    const link = join(dir, 'link.json');
    writeFileSync(real, 'old\n');
    symlinkSync(real, link);
    await writeFileAtomic(link, 'new\n');
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readlinkSync(link)).toBe(real);
    expect(readFileSync(real, 'utf8')).toBe('new\n');
    await writeAtomically(link, { overwrite: true, code: 'MCPTAP_EXPORT_WRITE_FAILED' }, (temp) => writeFileSync(temp, 'newer\n'));
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readFileSync(real, 'utf8')).toBe('newer\n');
  });

  it('through a dangling symlink: the file it names is created, the link stays (as the shell does)', async () => {
    const link = join(dir, 'dangling.json');
    symlinkSync(join(dir, 'not-yet.json'), link);
    await writeFileAtomic(link, 'made\n');
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(dir, 'not-yet.json'), 'utf8')).toBe('made\n');
  });

  it('a directory is refused (usage), not met with EISDIR at the end', async () => {
    const err = await writeAtomically(dir, { overwrite: true, code: 'MCPTAP_EXPORT_WRITE_FAILED' }, () => undefined).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'MCPTAP_BAD_FLAG', message: `${dir} is a directory; give a file` });
  });

  it('a pipe (as /dev/stdout is) is written in place and stays a pipe', async () => {
    const fifo = join(dir, 'out.fifo');
    execFileSync('mkfifo', [fifo]);
    const report = readPipe(fifo);
    await writeFileAtomic(fifo, '<testsuites/>\n');
    expect(await report).toBe('<testsuites/>\n');
    expect(lstatSync(fifo).isFIFO()).toBe(true);
    const copied = readPipe(fifo);
    await writeAtomically(fifo, { overwrite: true, code: 'MCPTAP_EXPORT_WRITE_FAILED' }, (temp) => writeFileSync(temp, '{"jsonl":1}\n'));
    expect(await copied).toBe('{"jsonl":1}\n');
    expect(lstatSync(fifo).isFIFO()).toBe(true);
  });
});
