/**
 * What a tap can tell of its recording file in a millisecond, before it starts the traffic: its
 * directory is there and writable, and an existing file is an mcptap recording this mcptap can
 * write (the SQLite header: magic, `application_id`, `user_version`). The full check runs where the
 * recording is opened (the indexer); this one keeps the common mistakes failing before any traffic
 * without waiting for SQLite to load.
 */
import { accessSync, closeSync, constants, openSync, readSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { McptapError } from '../errors.js';
import { LATEST_SCHEMA_VERSION } from './migrations/index.js';
import { APPLICATION_ID } from './migrations/migration.js';

const MAGIC = Buffer.from('SQLite format 3\0', 'latin1');
/** Offsets in the SQLite database header (sqlite.org/fileformat.html). */
const USER_VERSION_AT = 60;
const APPLICATION_ID_AT = 68;
const HEADER_BYTES = 100;

/** Throws the McptapError the full check would throw, for what the header and the directory tell. */
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
  if (header.length === 0) return; // an empty file becomes a recording
  if (header.length < HEADER_BYTES || !header.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw new McptapError('MCPTAP_NOT_A_RECORDING', `${path} is not an mcptap recording (not an SQLite database)`);
  }
  const appId = header.readUInt32BE(APPLICATION_ID_AT);
  if (appId !== APPLICATION_ID && appId !== 0) throw new McptapError('MCPTAP_NOT_A_RECORDING', `${path} is not an mcptap recording (a different SQLite database)`);
  const version = header.readUInt32BE(USER_VERSION_AT);
  if (version > LATEST_SCHEMA_VERSION) {
    throw new McptapError('MCPTAP_RECORDING_TOO_NEW', `${path} has schema version ${version}, written by a newer mcptap (this one reads up to ${LATEST_SCHEMA_VERSION}); upgrade mcptap`);
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
