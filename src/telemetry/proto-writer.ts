/**
 * A protobuf wire-format writer into one reusable growable buffer, for the OTLP span serializer
 * (otlp-span-serializer.ts). Only what OTLP needs: varints, fixed32/64, doubles, strings, bytes
 * and length-delimited messages.
 *
 * Invariants:
 * - Every varint, including message lengths, is written in its shortest form, so the bytes equal
 *   those of any conforming encoder that writes the same fields in the same order.
 * - A message's length is reserved before its body is written (`begin`) and filled in after
 *   (`end`); when the length needs a different number of bytes than reserved, the body moves
 *   (one memmove), so callers reserve what the usual size needs.
 * - `take()` hands the written bytes over and continues in a fresh buffer: what it returned is the
 *   caller's (an export may be retried after the writer has been reused).
 */

/** Bytes of the shortest varint for `v` (10 for negative values, sent as 64-bit two's complement). */
export function varintSize(v: number): number {
  if (v < 0) return 10;
  if (v < 0x80) return 1;
  if (v < 0x4000) return 2;
  if (v < 0x200000) return 3;
  if (v < 0x10000000) return 4;
  if (v < 0x800000000) return 5;
  if (v < 0x40000000000) return 6;
  if (v < 0x2000000000000) return 7;
  if (v < 0x100000000000000) return 8;
  return v < 2 ** 63 ? 9 : 10;
}

/** Strings up to this many UTF-16 units are measured and copied in JS; longer ones natively. */
const SHORT_STRING = 48;

/** UTF-8 byte length of `s` (well-formed or not: lone surrogates count as U+FFFD, 3 bytes). */
export function utf8Length(s: string): number {
  const n = s.length;
  if (n > SHORT_STRING) return Buffer.byteLength(s, 'utf8');
  for (let i = 0; i < n; i++) if (s.charCodeAt(i) > 0x7f) return Buffer.byteLength(s, 'utf8');
  return n;
}

export class ProtoWriter {
  buf: Buffer;
  pos = 0;

  constructor(initialSize = 64 * 1024) {
    this.buf = Buffer.allocUnsafe(initialSize);
  }

  /** Room for `n` more bytes. */
  ensure(n: number): void {
    if (this.pos + n > this.buf.length) this.grow(n);
  }

  private grow(n: number): void {
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  /** One byte (a tag of a field number below 16, or a small value); `ensure` first. */
  byte(b: number): void {
    this.buf[this.pos++] = b;
  }

  varint(v: number): void {
    this.ensure(10);
    const buf = this.buf;
    if (v >= 0 && v <= 0xffffffff) {
      let x = v >>> 0;
      while (x > 0x7f) {
        buf[this.pos++] = (x & 0x7f) | 0x80;
        x >>>= 7;
      }
      buf[this.pos++] = x;
      return;
    }
    // 64-bit: split into unsigned 32-bit halves (two's complement for negative values).
    let lo: number;
    let hi: number;
    if (v >= 0) {
      lo = v >>> 0;
      hi = (v / 0x100000000) >>> 0;
    } else {
      const a = -v;
      lo = ~(a >>> 0) >>> 0;
      hi = ~((a / 0x100000000) >>> 0) >>> 0;
      lo = (lo + 1) >>> 0;
      if (lo === 0) hi = (hi + 1) >>> 0;
    }
    while (hi !== 0 || lo > 0x7f) {
      buf[this.pos++] = (lo & 0x7f) | 0x80;
      lo = ((lo >>> 7) | (hi << 25)) >>> 0;
      hi >>>= 7;
    }
    buf[this.pos++] = lo;
  }

  fixed32(v: number): void {
    this.ensure(4);
    const x = v >>> 0;
    const buf = this.buf;
    let p = this.pos;
    buf[p++] = x;
    buf[p++] = x >>> 8;
    buf[p++] = x >>> 16;
    buf[p++] = x >>> 24;
    this.pos = p;
  }

  /** An HrTime [seconds, nanoseconds] as fixed64 nanoseconds since the epoch. */
  fixed64Time(t: readonly [number, number]): void {
    // seconds * 1e9 + nanos exceeds 2^53; but 1e9 = 1953125 * 2^9 and seconds * 1953125 is exact
    // (below 2^53 for any seconds below 2^32), so its 2^23 multiples are the high word and the
    // rest, shifted by 9 bits, the low word of seconds * 1e9.
    const m = t[0] * 1953125;
    let hi = Math.floor(m / 0x800000);
    let lo = (m - hi * 0x800000) * 512 + t[1];
    if (lo >= 0x100000000) {
      lo -= 0x100000000;
      hi++;
    }
    lo >>>= 0;
    hi >>>= 0;
    this.ensure(8);
    const buf = this.buf;
    let p = this.pos;
    buf[p++] = lo;
    buf[p++] = lo >>> 8;
    buf[p++] = lo >>> 16;
    buf[p++] = lo >>> 24;
    buf[p++] = hi;
    buf[p++] = hi >>> 8;
    buf[p++] = hi >>> 16;
    buf[p++] = hi >>> 24;
    this.pos = p;
  }

  double(v: number): void {
    this.ensure(8);
    this.buf.writeDoubleLE(v, this.pos);
    this.pos += 8;
  }

  /** A length-delimited string (the tag is the caller's). */
  string(s: string): void {
    this.stringBody(s, utf8Length(s));
  }

  /** Length prefix and UTF-8 bytes of `s`, whose byte length `n` the caller measured. */
  stringBody(s: string, n: number): void {
    this.ensure(n + 5);
    this.varint(n);
    const buf = this.buf;
    if (n === s.length && n <= SHORT_STRING) {
      let p = this.pos;
      for (let i = 0; i < n; i++) buf[p++] = s.charCodeAt(i);
      this.pos = p;
    } else {
      this.pos += buf.write(s, this.pos, n, 'utf8');
    }
  }

  /**
   * A length-prefixed KeyValue with a string value (the caller writes the tag): `key` is the
   * encoded KeyValue.key (tag, length, bytes). Short ASCII values, the usual case, are copied in
   * one pass.
   */
  stringKeyValueBody(key: Uint8Array, value: string): void {
    const n = value.length;
    const k = key.length;
    if (n < 0x7e && k < 0x7f - n - 4) {
      // Every length fits one byte if the value is ASCII: KeyValue = key + 0x12 any, AnyValue = 0x0a n bytes.
      this.ensure(k + n + 5);
      const buf = this.buf;
      const start = this.pos;
      let p = start;
      buf[p++] = k + n + 4;
      buf.set(key, p);
      p += k;
      buf[p++] = 0x12;
      buf[p++] = n + 2;
      buf[p++] = 0x0a;
      buf[p++] = n;
      for (let i = 0; i < n; i++) {
        const c = value.charCodeAt(i);
        if (c > 0x7f) return this.stringKeyValueMeasured(key, value);
        buf[p++] = c;
      }
      this.pos = p;
      return;
    }
    this.stringKeyValueMeasured(key, value);
  }

  private stringKeyValueMeasured(key: Uint8Array, value: string): void {
    const n = utf8Length(value);
    const any = 1 + varintSize(n) + n;
    this.varint(key.length + 1 + varintSize(any) + any);
    this.raw(key);
    this.ensure(1);
    this.byte(0x12);
    this.varint(any);
    this.ensure(1);
    this.byte(0x0a);
    this.stringBody(value, n);
  }

  /** Length-delimited raw bytes. */
  bytes(b: Uint8Array): void {
    this.ensure(b.length + 5);
    this.varint(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  /** Pre-encoded bytes (a cached key with its tag and length). */
  raw(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  /**
   * Length-delimited bytes of a hex id (trace or span id): two hex digits per byte, as the OTLP
   * exporters convert them (an odd trailing digit is ignored).
   */
  hexBytes(hex: string): void {
    const n = hex.length >>> 1;
    this.ensure(n + 5);
    this.varint(n);
    const buf = this.buf;
    let p = this.pos;
    for (let i = 0; i < n; i++) {
      const h = hex.charCodeAt(2 * i);
      const l = hex.charCodeAt(2 * i + 1);
      buf[p++] = ((h < 256 ? HEX[h]! : h - 55) << 4) | (l < 256 ? HEX[l]! : l - 55);
    }
    this.pos = p;
  }

  /** Reserve `reserve` bytes for a message length; returns the message start for `end`. */
  begin(reserve: number): number {
    this.ensure(reserve);
    const start = this.pos;
    this.pos += reserve;
    return start;
  }

  /** Write the length of the message begun at `start`, moving its body if the length needs other than `reserve` bytes. */
  end(start: number, reserve: number): void {
    const len = this.pos - start - reserve;
    const size = varintSize(len);
    if (size !== reserve) {
      this.ensure(size - reserve);
      this.buf.copyWithin(start + size, start + reserve, this.pos);
      this.pos += size - reserve;
    }
    // In place: the room was reserved (or made) above, and a length is below 2^32.
    const buf = this.buf;
    let p = start;
    let x = len;
    while (x > 0x7f) {
      buf[p++] = (x & 0x7f) | 0x80;
      x >>>= 7;
    }
    buf[p] = x;
  }

  /** What was written, handed over: the writer starts over in a new buffer of the same size (no copy, no zero fill). */
  take(): Uint8Array {
    const out = this.buf.subarray(0, this.pos);
    this.buf = Buffer.allocUnsafe(this.buf.length);
    this.pos = 0;
    return out;
  }
}

/** Digit values by char code: 0-9, a-f, and anything else as A-F would be (what the OTLP exporters' hex conversion does). */
const HEX = Int16Array.from({ length: 256 }, (_, c) => (c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c - 55));
