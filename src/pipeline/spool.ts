/**
 * The recording's spool: each batch the tap saw is appended as it arrives (one write), and the indexer
 * (recording-indexer.ts) builds the recording from it when the CPU allows, so recording keeps up with any traffic rate.
 * In RAM or beside the recording ({@link spoolPlace}).
 *
 * Invariants:
 * - A ring of fixed capacity: positions only grow, a record lives at `position % capacity`, and `append` refuses what
 *   does not fit in front of the reader (the caller keeps it): the file never grows past its capacity.
 * - Private and transient: random name, unlinked at once; only this process and its indexer (inheriting the descriptor)
 *   reach it, and nothing is left behind.
 * - Never in clear: AES-256-CTR under a random key held in memory only, a random IV per record. Traffic is spooled before
 *   redaction; whatever reaches a disk (or swap) is ciphertext.
 * - Records, in order: [u32 opsLen][u32 bytesLen][16-byte IV][u64 position], then the ops (wire-codec.ts) and raw bytes.
 *   The body is written before its header, so a header naming its own position is a whole record ({@link SpoolReader.recover}).
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { closeSync, ftruncateSync, openSync, readSync, statfsSync, unlinkSync, writevSync } from 'node:fs';
import { totalmem } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { McptapError } from '../errors.js';

const HEADER = 32;
/** Where the record's own logical position is in its header. */
const POSITION_AT = 24;
const CIPHER = 'aes-256-ctr';
/** The cipher runs over a batch this much at a time (one pass is slower: docs/performance.md); CTR is a stream: pieces give the same bytes. */
const CIPHER_PIECE = 64 * 1024;

export interface SpoolRecord {
  /** The batch's ops, encoded (wire-codec.ts). */
  ops: Buffer;
  bytes: Buffer;
}

export interface SpoolPlace {
  dir: string;
  /** In RAM (a tmpfs or ramfs). */
  inMemory: boolean;
}

/** What {@link spoolPlace} looks at; the machine's own by default (tests pass their own). */
export interface SpoolProbe {
  /** The filesystem of `dir`: its type (statfs magic) and free bytes; undefined when it cannot be read. */
  fs(dir: string): { type: number; free: number } | undefined;
  /** The memory this process may use (bytes): the machine's, or its cgroup's limit when lower. */
  memory(): number;
}

const TMPFS_MAGIC = 0x01021994;
const RAMFS_MAGIC = 0x858458f6;
/** The RAM spool's directory (Linux; a tmpfs on every distribution). */
export const SHM_DIR = '/dev/shm';

export const systemProbe: SpoolProbe = {
  fs(dir) {
    try {
      const st = statfsSync(dir);
      return { type: st.type, free: st.bavail * st.bsize };
    } catch {
      return undefined;
    }
  },
  memory() {
    const limit = process.constrainedMemory?.() ?? 0;
    return limit > 0 ? Math.min(limit, totalmem()) : totalmem();
  },
};

/**
 * Where the spool goes: `chosenDir` when given; else {@link SHM_DIR} when a tmpfs with room for twice the ring, the ring
 * at most an eighth of this process's memory (a burst may fill it); else beside the recording.
 */
export function spoolPlace(recordingPath: string, capacity: number, chosenDir?: string, probe: SpoolProbe = systemProbe): SpoolPlace {
  const inRam = (fs: { type: number } | undefined) => fs !== undefined && (fs.type === TMPFS_MAGIC || fs.type === RAMFS_MAGIC);
  const chosen = chosenDir?.trim();
  if (chosen) return { dir: chosen, inMemory: inRam(probe.fs(chosen)) };
  const shm = process.platform === 'linux' ? probe.fs(SHM_DIR) : undefined;
  if (inRam(shm) && shm!.free >= 2 * capacity && capacity * 8 <= probe.memory()) return { dir: SHM_DIR, inMemory: true };
  return { dir: dirname(recordingPath), inMemory: false };
}

export class SpoolWriter {
  /** The descriptor the indexer reads (handed down to its process). */
  readonly fd: number;
  /** The cipher key, in memory only (the indexer gets it on its stdin). */
  readonly key: Buffer;
  private at = 0;
  private closed = false;
  /** How far into the file anything was written since it was last emptied. */
  private extent = 0;

  /** Creates the spool for the recording at `recordingPath` where `place` says (default: beside it), unlinked at once. */
  constructor(
    recordingPath: string,
    readonly capacity: number,
    place: SpoolPlace = { dir: dirname(recordingPath), inMemory: false },
  ) {
    this.key = randomBytes(32);
    const path = join(place.dir, `.${basename(recordingPath)}.spool-${process.pid}-${randomBytes(4).toString('hex')}`);
    this.fd = openSync(path, 'wx+', 0o600);
    try {
      unlinkSync(path);
    } catch (err) {
      closeSync(this.fd);
      throw err;
    }
  }

  /** The most ops and bytes one record can hold (its header aside): a larger batch must be spooled in parts. */
  get maxRecordBytes(): number {
    return this.capacity - HEADER;
  }

  /** Bytes appended so far: the readable extent. */
  get end(): number {
    return this.at;
  }

  /**
   * Appends one batch unless it does not fit in front of `readerAt` (then returns false, writing nothing). Throws on a
   * failed write (disk full) or a batch larger than the spool: the caller counts the loss.
   */
  append(opsBuf: Buffer, bytes: Buffer, readerAt: number): boolean {
    const total = HEADER + opsBuf.length + bytes.length;
    if (total > this.capacity) throw new McptapError('MCPTAP_SPOOL_FAILED', `a batch of ${total} bytes is larger than the spool (${this.capacity} bytes)`);
    if (this.at + total - readerAt > this.capacity) return false;
    const header = Buffer.alloc(HEADER);
    header.writeUInt32LE(opsBuf.length, 0);
    header.writeUInt32LE(bytes.length, 4);
    randomBytes(16).copy(header, 8);
    header.writeBigUInt64LE(BigInt(this.at), POSITION_AT);
    const body: Buffer[] = [];
    const cipher = createCipheriv(CIPHER, this.key, header.subarray(8, 24));
    for (const piece of pieces(opsBuf)) body.push(cipher.update(piece));
    for (const piece of pieces(bytes)) body.push(cipher.update(piece));
    this.extent = Math.max(this.extent, Math.min(this.capacity, (this.at % this.capacity) + total));
    // Body first, then the header that makes the record readable (see the invariants).
    this.writeRing(body, this.at + HEADER, total - HEADER);
    this.writeRing([header], this.at, HEADER);
    this.at += total;
    return true;
  }

  /** Writes `parts` (`length` bytes) at logical position `at`, wrapping at the end of the file. */
  private writeRing(parts: Buffer[], at: number, length: number): void {
    const offset = at % this.capacity;
    if (offset + length <= this.capacity) return writeAllAt(this.fd, parts, offset);
    const whole = Buffer.concat(parts, length);
    writeAllAt(this.fd, [whole.subarray(0, this.capacity - offset)], offset);
    writeAllAt(this.fd, [whole.subarray(this.capacity - offset)], 0);
  }

  /** Empties the file once the reader has read it all and over `minBytes` is in use: nothing unread is lost; later records go where their position falls. */
  trim(readerAt: number, minBytes: number): void {
    if (readerAt !== this.at || this.extent <= minBytes || this.closed) return;
    ftruncateSync(this.fd, 0);
    this.extent = 0;
  }

  /** Bytes of the file in use (written since it was last emptied). */
  get inUse(): number {
    return this.extent;
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

  /** `key`: the writer's. */
  constructor(
    private readonly fd: number,
    private readonly key: Buffer | Uint8Array,
    private readonly capacity: number,
  ) {}

  /** Where the next record starts (what has been read so far). */
  get position(): number {
    return this.at;
  }

  /** The next record, or undefined when none is complete before `end`. Throws when the record there is not whole (the spool is damaged). */
  next(end: number): SpoolRecord | undefined {
    if (this.at + HEADER > end) return undefined;
    this.readAt(this.header, this.at);
    if (!this.headerIsWhole()) throw new McptapError('MCPTAP_SPOOL_FAILED', `the spool record at ${this.at} is damaged`);
    if (this.at + HEADER + this.header.readUInt32LE(0) + this.header.readUInt32LE(4) > end) return undefined;
    return this.body();
  }

  /**
   * The next whole record past what a killed writer last said, or undefined. Whole: its header (written after the body)
   * names its own position, which a torn record, one from the ring's previous lap, or a fresh file's zeros never do.
   */
  recover(): SpoolRecord | undefined {
    try {
      this.readAt(this.header, this.at);
    } catch {
      return undefined; // past the end of the file: nothing was written there
    }
    return this.headerIsWhole() ? this.body() : undefined;
  }

  /** The header read at `at` is a whole record's: it names this position, has ops, and fits the ring. */
  private headerIsWhole(): boolean {
    const len = this.header.readUInt32LE(0) + this.header.readUInt32LE(4);
    return this.header.readBigUInt64LE(POSITION_AT) === BigInt(this.at) && this.header.readUInt32LE(0) > 0 && HEADER + len <= this.capacity;
  }

  private body(): SpoolRecord {
    const opsLen = this.header.readUInt32LE(0);
    const bytesLen = this.header.readUInt32LE(4);
    const body = Buffer.allocUnsafe(opsLen + bytesLen);
    this.readAt(body, this.at + HEADER);
    const decipher = createDecipheriv(CIPHER, this.key, this.header.subarray(8, 24));
    // In place, a piece at a time (see CIPHER_PIECE): `body` is this record's own buffer.
    for (const piece of pieces(body)) decipher.update(piece).copy(piece);
    this.at += HEADER + opsLen + bytesLen;
    return { ops: body.subarray(0, opsLen), bytes: body.subarray(opsLen) };
  }

  /** Fills `into` from logical position `at`, wrapping at the end of the file. */
  private readAt(into: Buffer, at: number): void {
    const offset = at % this.capacity;
    const head = Math.min(into.length, this.capacity - offset);
    readFully(this.fd, into.subarray(0, head), offset);
    if (head < into.length) readFully(this.fd, into.subarray(head), 0);
  }
}

/** Views of `data`, {@link CIPHER_PIECE} bytes each (the last one shorter). */
function* pieces(data: Buffer): Generator<Buffer> {
  for (let at = 0; at < data.length; at += CIPHER_PIECE) yield data.subarray(at, Math.min(data.length, at + CIPHER_PIECE));
}

function readFully(fd: number, into: Buffer, position: number): void {
  let got = 0;
  while (got < into.length) {
    const n = readSync(fd, into, got, into.length - got, position + got);
    if (n === 0) throw new McptapError('MCPTAP_SPOOL_FAILED', `spool ends early at ${position + got}`);
    got += n;
  }
}

/** writev may write less than asked (rare, on a full or slow disk): finish the record or fail. */
function writeAllAt(fd: number, parts: Buffer[], position: number): void {
  const total = parts.reduce((n, p) => n + p.length, 0);
  let written = writevSync(fd, parts, position);
  while (written < total) {
    const n = writevSync(fd, [Buffer.concat(parts, total).subarray(written)], position + written);
    if (n <= 0) throw new McptapError('MCPTAP_SPOOL_FAILED', 'spool write made no progress');
    written += n;
  }
}
