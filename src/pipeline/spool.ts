/**
 * The recording's spool: each batch of what the tap saw (the worker wire's ops and bytes) is
 * appended here as it arrives, and the indexer (recording-indexer.ts) reads it back and builds the
 * recording from it when the CPU allows. Appending costs a cipher pass and one write per batch, so
 * recording keeps up with any traffic rate; the decoding, correlation and SQL wait, on disk rather
 * than in memory, until the machine has time for them.
 *
 * Invariants:
 * - Private and transient: the file is created next to the recording and unlinked at once, so only
 *   this process reaches it (threads share its descriptor) and nothing is left behind, however the
 *   process ends.
 * - Never in clear: every record is AES-256-CTR encrypted under a random key held in memory only,
 *   with a random IV per record. Traffic is spooled before redaction; a secret in it reaches the
 *   disk only as ciphertext, and the key is gone with the process.
 * - Records are appended in order and read back in order: [u32 opsLen][u32 bytesLen][16-byte IV],
 *   then opsLen + bytesLen encrypted bytes (the ops JSON in UTF-8, then the raw bytes).
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { closeSync, openSync, readSync, unlinkSync, writevSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

const HEADER = 24;
const CIPHER = 'aes-256-ctr';

export interface SpoolRecord {
  ops: string;
  bytes: Buffer;
}

export class SpoolWriter {
  /** The descriptor the indexer thread reads (same process, so the same number works there). */
  readonly fd: number;
  readonly key: Buffer = randomBytes(32);
  private at = 0;
  private closed = false;

  /** Creates the spool beside `recordingPath` (same disk as the recording the user chose), unlinked at once. */
  constructor(recordingPath: string) {
    const path = join(dirname(recordingPath), `.${basename(recordingPath)}.spool-${process.pid}-${randomBytes(4).toString('hex')}`);
    this.fd = openSync(path, 'wx+', 0o600);
    try {
      unlinkSync(path);
    } catch (err) {
      closeSync(this.fd);
      throw err;
    }
  }

  /** Bytes appended so far: the readable extent. */
  get end(): number {
    return this.at;
  }

  /** Appends one batch; returns the new end. Throws on a failed write (disk full): the caller counts the loss. */
  append(ops: string, bytes: Buffer): number {
    const opsBuf = Buffer.from(ops, 'utf8');
    const header = Buffer.allocUnsafe(HEADER);
    header.writeUInt32LE(opsBuf.length, 0);
    header.writeUInt32LE(bytes.length, 4);
    randomBytes(16).copy(header, 8);
    const cipher = createCipheriv(CIPHER, this.key, header.subarray(8));
    const parts = [header, cipher.update(opsBuf), cipher.update(bytes)];
    const total = HEADER + opsBuf.length + bytes.length;
    let written = 0;
    // writev may write less than asked (rare, on a full or slow disk): finish the record or fail.
    while (written < total) {
      const n = writevSync(this.fd, written === 0 ? parts : [concatFrom(parts, written)], this.at + written);
      if (n <= 0) throw new Error('spool write made no progress');
      written += n;
    }
    this.at += total;
    return this.at;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    closeSync(this.fd);
  }
}

/** Reads a spool from the start, record by record; the writer says how far it is readable. */
export class SpoolReader {
  private at = 0;
  private readonly header = Buffer.alloc(HEADER);

  constructor(private readonly fd: number, private readonly key: Buffer | Uint8Array) {}

  /** Where the next record starts (what has been read so far). */
  get position(): number {
    return this.at;
  }

  /** The next record, or undefined when none is complete before `end`. */
  next(end: number): SpoolRecord | undefined {
    if (this.at + HEADER > end) return undefined;
    readFully(this.fd, this.header, this.at);
    const opsLen = this.header.readUInt32LE(0);
    const bytesLen = this.header.readUInt32LE(4);
    if (this.at + HEADER + opsLen + bytesLen > end) return undefined;
    const body = Buffer.allocUnsafe(opsLen + bytesLen);
    readFully(this.fd, body, this.at + HEADER);
    const plain = createDecipheriv(CIPHER, this.key, this.header.subarray(8)).update(body);
    this.at += HEADER + opsLen + bytesLen;
    return { ops: plain.toString('utf8', 0, opsLen), bytes: plain.subarray(opsLen) };
  }
}

function readFully(fd: number, into: Buffer, position: number): void {
  let got = 0;
  while (got < into.length) {
    const n = readSync(fd, into, got, into.length - got, position + got);
    if (n === 0) throw new Error(`spool ends early at ${position + got}`);
    got += n;
  }
}

function concatFrom(parts: Buffer[], skip: number): Buffer {
  return Buffer.concat(parts).subarray(skip);
}
