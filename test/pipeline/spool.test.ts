/**
 * The recording's spool: records come back whole and in order, a record not yet complete is not
 * read, the file is gone from the directory from the start, and nothing in it is in clear where it
 * could reach a disk. Where it goes (RAM or the recording's disk) is decided from what the machine
 * has, given here as a probe.
 */
import { createCipheriv } from 'node:crypto';
import { mkdtempSync, readdirSync, readSync, rmSync, fstatSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SHM_DIR, SpoolReader, SpoolWriter, spoolPlace, type SpoolProbe } from '../../src/pipeline/spool.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function spoolIn(capacity = 1 << 20): { dir: string; spool: SpoolWriter } {
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-spool-'));
  dirs.push(dir);
  return { dir, spool: new SpoolWriter(join(dir, 'rec.db'), capacity) };
}

describe('spool', () => {
  it('reads back every record in order, and none before it is complete', () => {
    const { spool } = spoolIn();
    const sent = Array.from({ length: 200 }, (_, i) => ({
      ops: Buffer.from(JSON.stringify([[1, 'stdio', 'c2s', 'stdio', i, i * 7]])),
      bytes: Buffer.alloc(i * 7, i % 251),
    }));
    const ends: number[] = [];
    for (const r of sent) {
      expect(spool.append(r.ops, r.bytes, 0)).toBe(true);
      ends.push(spool.end);
    }
    const reader = new SpoolReader(spool.fd, spool.key, spool.capacity);
    // Up to just short of the 100th record's end: 99 records, then nothing until the extent grows.
    const got = [];
    for (let r = reader.next(ends[99]! - 1); r; r = reader.next(ends[99]! - 1)) got.push(r);
    expect(got).toHaveLength(99);
    for (let r = reader.next(spool.end); r; r = reader.next(spool.end)) got.push(r);
    expect(got.map((r) => r.ops.toString())).toEqual(sent.map((r) => r.ops.toString()));
    expect(got.every((r, i) => r.bytes.equals(sent[i]!.bytes))).toBe(true);
    expect(reader.position).toBe(spool.end);
    spool.close();
  });

  it('is a ring: wraps at its size, never overwrites what was not read, never grows', () => {
    const { spool } = spoolIn(1000);
    const reader = new SpoolReader(spool.fd, spool.key, spool.capacity);
    const batch = (i: number) => ({ ops: Buffer.from(`[[7,${i}]]`), bytes: Buffer.alloc(100 + (i % 7) * 13, i % 256) });
    let written = 0;
    let read = 0;
    // Interleaved: the writer fills what the reader freed; records straddle the end of the file.
    while (read < 300) {
      while (written < 300) {
        const b = batch(written);
        if (!spool.append(b.ops, b.bytes, reader.position)) break;
        written++;
      }
      expect(spool.end - reader.position).toBeLessThanOrEqual(1000);
      const r = reader.next(spool.end);
      expect(r).toBeDefined();
      expect(r!.ops.equals(batch(read).ops)).toBe(true);
      expect(r!.bytes.equals(batch(read).bytes)).toBe(true);
      read++;
    }
    expect(spool.end).toBeGreaterThan(20 * 1000);
    expect(fstatSync(spool.fd).size).toBeLessThanOrEqual(1000);
    expect(() => spool.append(Buffer.from('[]'), Buffer.alloc(2000), reader.position)).toThrow(/larger than the spool/);
    spool.close();
  });

  it('gives its disk space back once everything was read, and goes on where it was', () => {
    const { spool } = spoolIn(1 << 20);
    const reader = new SpoolReader(spool.fd, spool.key, spool.capacity);
    for (let i = 0; i < 10; i++) spool.append(Buffer.from(`[${i}]`), Buffer.alloc(10_000, i), reader.position);
    spool.trim(reader.position, 0); // unread records: nothing happens
    expect(fstatSync(spool.fd).size).toBeGreaterThan(100_000);
    for (let i = 0; i < 10; i++) expect(reader.next(spool.end)?.ops.toString()).toBe(`[${i}]`);
    spool.trim(reader.position, 0);
    expect(fstatSync(spool.fd).size).toBe(0);
    expect(spool.inUse).toBe(0);
    spool.append(Buffer.from('[10]'), Buffer.alloc(10_000, 10), reader.position);
    const r = reader.next(spool.end);
    expect(r?.ops.toString()).toBe('[10]');
    expect(r?.bytes.equals(Buffer.alloc(10_000, 10))).toBe(true);
    spool.close();
  });

  it('a reader whose writer is gone reads every whole record past the end it was told, and nothing torn or stale', () => {
    const { spool } = spoolIn(1000);
    const batch = (i: number) => ({ ops: Buffer.from(`[[7,${i}]]`), bytes: Buffer.alloc(90 + (i % 5) * 17, i % 256) });
    const reader = new SpoolReader(spool.fd, spool.key, spool.capacity);
    // Fresh file: its zeros are no record.
    expect(reader.recover()).toBeUndefined();
    // Several laps of the ring, the reader told only part of each: what it recovers is exactly the rest.
    let written = 0;
    for (let lap = 0; lap < 6; lap++) {
      const told = spool.end;
      while (spool.append(batch(written).ops, batch(written).bytes, reader.position)) written++;
      const got: string[] = [];
      for (let r = reader.next(told); r; r = reader.next(told)) got.push(r.ops.toString());
      for (let r = reader.recover(); r; r = reader.recover()) got.push(r.ops.toString());
      expect(reader.position).toBe(spool.end);
      // Past the last record: what is there is the previous lap's (or zeros), never read as a record.
      expect(reader.recover()).toBeUndefined();
      expect(got.length).toBeGreaterThan(0);
      expect(got.at(-1)).toBe(`[[7,${written - 1}]]`);
    }
    // A record torn by a kill: its body is written, its header never was.
    const torn = Buffer.alloc(200, 0x55);
    writeSync(spool.fd, torn, 0, torn.length, (spool.end + 32) % spool.capacity);
    expect(reader.recover()).toBeUndefined();
    // Emptied (trimmed) once read: zeros again, still no record.
    spool.trim(reader.position, 0);
    expect(reader.recover()).toBeUndefined();
    spool.close();
  });

  it('leaves no file behind and holds no plaintext', () => {
    const { dir, spool } = spoolIn();
    expect(readdirSync(dir)).toEqual([]);
    const secret = '{"arguments":{"token":"sk-live-0123456789abcdef"}}\n';
    for (let i = 0; i < 50; i++) spool.append(Buffer.from(JSON.stringify([[1, 'stdio', 'c2s', 'stdio', i, secret.length]])), Buffer.from(secret), 0);
    const raw = Buffer.alloc(fstatSync(spool.fd).size);
    readSync(spool.fd, raw, 0, raw.length, 0);
    expect(raw.length).toBe(spool.end);
    expect(raw.includes('sk-live-0123456789abcdef')).toBe(false);
    expect(raw.includes('"stdio"')).toBe(false);
    // The same plaintext twice never gives the same ciphertext (a fresh IV per record): records 0 and 1
    // have bodies of equal length and equal plaintext apart from one digit of the ops.
    const len = raw.readUInt32LE(0) + raw.readUInt32LE(4) + 32;
    const tail = (at: number) => raw.subarray(at + len - secret.length, at + len);
    expect(tail(0).equals(tail(len))).toBe(false);
    const again = new SpoolReader(spool.fd, spool.key, spool.capacity);
    expect(again.next(spool.end)?.bytes.toString()).toBe(secret);
    spool.close();
  });

  it("encrypts a large record piece by piece as one keystream (no piece reuses another's)", () => {
    const { spool } = spoolIn(4 << 20);
    // Lengths off every block and piece boundary, ops and bytes each spanning several 64 KiB pieces.
    const ops = Buffer.alloc(70_001, 0x61);
    const bytes = Buffer.alloc(200_003);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 31) & 0xff;
    spool.append(ops, bytes, 0);
    const raw = Buffer.alloc(spool.end);
    readSync(spool.fd, raw, 0, raw.length, 0);
    // The body is exactly one AES-256-CTR pass over ops then bytes under the record's IV.
    const oneCall = createCipheriv('aes-256-ctr', spool.key, raw.subarray(8, 24)).update(Buffer.concat([ops, bytes]));
    expect(raw.subarray(32).equals(oneCall)).toBe(true);
    const back = new SpoolReader(spool.fd, spool.key, spool.capacity).next(spool.end)!;
    expect(back.ops.equals(ops)).toBe(true);
    expect(back.bytes.equals(bytes)).toBe(true);
    spool.close();
  });

  it('a spool in RAM is encrypted as well: swap turned on at any time never sees clear text', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcptap-spool-'));
    dirs.push(dir);
    const spool = new SpoolWriter(join(dir, 'rec.db'), 1 << 20, { dir, inMemory: true });
    expect(spool.key).toHaveLength(32);
    expect(readdirSync(dir)).toEqual([]);
    const secret = Buffer.from('Authorization: Bearer sk-live-0123456789');
    const sent = Array.from({ length: 30 }, (_, i) => ({ ops: Buffer.from(`[[${i}]]`), bytes: Buffer.concat([secret, Buffer.alloc(i * 333, i + 1)]) }));
    for (const r of sent) expect(spool.append(r.ops, r.bytes, 0)).toBe(true);
    const raw = Buffer.alloc(spool.end);
    readSync(spool.fd, raw, 0, raw.length, 0);
    expect(raw.includes(secret)).toBe(false);
    expect(raw.includes(Buffer.from('[[0]]'))).toBe(false);
    // Every record has an IV of its own (none left zero).
    expect(raw.subarray(8, 24).equals(Buffer.alloc(16))).toBe(false);
    const reader = new SpoolReader(spool.fd, spool.key, spool.capacity);
    const got = [];
    for (let r = reader.next(spool.end); r; r = reader.next(spool.end)) got.push(r);
    expect(got.map((r) => r.ops.toString())).toEqual(sent.map((r) => r.ops.toString()));
    expect(got.every((r, i) => r.bytes.equals(sent[i]!.bytes))).toBe(true);
    spool.close();
  });
});

describe('where the spool goes', () => {
  const GiB = 2 ** 30;
  const TMPFS = 0x01021994;
  const EXT4 = 0xef53;
  /** A machine as the placement sees it: filesystems by directory, memory. */
  const machine = (over: { shmFree?: number; shmType?: number; memory?: number; fs?: Record<string, number> } = {}): SpoolProbe => ({
    fs: (dir) =>
      dir === SHM_DIR
        ? { type: over.shmType ?? TMPFS, free: over.shmFree ?? 12 * GiB }
        : over.fs?.[dir] !== undefined
          ? { type: over.fs[dir]!, free: 100 * GiB }
          : undefined,
    memory: () => over.memory ?? 24 * GiB,
  });
  const linux = process.platform === 'linux';

  it.runIf(linux)('RAM when a tmpfs has room for twice the ring and the ring is at most an eighth of memory', () => {
    expect(spoolPlace('/data/rec.db', GiB, undefined, machine())).toEqual({ dir: SHM_DIR, inMemory: true });
  });

  it.each([
    ['a small /dev/shm (a container default of 64 MiB)', { shmFree: 64 * 2 ** 20 }],
    ['too little memory for the ring (a cgroup limit of 4 GiB)', { memory: 4 * GiB }],
    ['/dev/shm that is not a tmpfs', { shmType: EXT4 }],
  ])('on disk beside the recording, with %s', (_name, over) => {
    expect(spoolPlace('/data/rec.db', GiB, undefined, machine(over))).toEqual({ dir: '/data', inMemory: false });
  });

  it('a chosen directory (MCPTAP_SPOOL_DIR) decides', () => {
    const fs = { '/var/spool/mcptap': EXT4, '/run/mcptap': TMPFS };
    expect(spoolPlace('/data/rec.db', GiB, '/var/spool/mcptap', machine({ fs }))).toEqual({ dir: '/var/spool/mcptap', inMemory: false });
    expect(spoolPlace('/data/rec.db', GiB, '/run/mcptap', machine({ fs }))).toEqual({ dir: '/run/mcptap', inMemory: true });
    // A directory that cannot be looked at is taken for a disk.
    expect(spoolPlace('/data/rec.db', GiB, '/nowhere', machine({ fs }))).toEqual({ dir: '/nowhere', inMemory: false });
  });
});
