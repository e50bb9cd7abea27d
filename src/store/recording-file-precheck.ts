/**
 * What a tap can tell of its recording file in a millisecond, before it starts the traffic: its
 * directory is there and writable, and an existing file is writable and not something other than
 * SQLite. The full check (an mcptap recording, a schema this mcptap reads) runs where the recording
 * is opened, in the indexer: the rest of the header cannot be trusted from outside SQLite (another
 * tap may be creating the file this instant, and a WAL file may hold newer pages than the header).
 */
import { accessSync, closeSync, constants, openSync, readSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { McptapError } from '../errors.js';

const MAGIC = Buffer.from('SQLite format 3\0', 'latin1');
const HEADER_BYTES = MAGIC.length;

/** Throws the McptapError the full check would throw, for what the directory and the file's first bytes tell. */
export function precheckRecordingFile(path: string): void {
  const dir = dirname(path);
  try {
    accessSync(dir, constants.W_OK | constants.X_OK);
  } catch (err) {
    throw new McptapError('MCPTAP_RECORD_OPEN', `cannot record to ${path}: ${(err as Error).message}`);
  }
  let header: Buffer;
  try {
    if (!statSync(path).isFile()) throw new McptapError('MCPTAP_RECORD_OPEN', `cannot record to ${path}: not a regular file`);
    accessSync(path, constants.R_OK | constants.W_OK);
    header = readHeader(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return; // created by the recorder
    if (err instanceof McptapError) throw err;
    throw new McptapError('MCPTAP_RECORD_OPEN', `cannot record to ${path}: ${(err as Error).message}`);
  }
  // Empty, or being created by another writer (zeros not yet written over): left to the full check.
  // SQLite writes a new file's first page whole, so anything else short of the magic is not SQLite.
  if (header.every((b) => b === 0)) return;
  if (!header.equals(MAGIC)) throw new McptapError('MCPTAP_NOT_A_RECORDING', `${path} is not an mcptap recording (not an SQLite database)`);
}

/** Whether `path` is an existing SQLite file (a recording, most likely): false when absent or unreadable. */
export function isSqliteFile(path: string): boolean {
  try {
    return statSync(path).isFile() && readHeader(path).equals(MAGIC);
  } catch {
    return false;
  }
}

function readHeader(path: string): Buffer {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(HEADER_BYTES);
    return buf.subarray(0, readSync(fd, buf, 0, HEADER_BYTES, 0));
  } finally {
    closeSync(fd);
  }
}
