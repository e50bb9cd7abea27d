/**
 * The byte level of wire-codec.ts: little-endian numbers; a string is a varint, the index + 1 of one written earlier in the
 * batch, or 0 then a u32 length and its UTF-8 bytes. The reader checks every length against its buffer.
 */

/** Writes numbers and interned strings into a growing buffer; `take` hands a batch over and starts the next. */
export class InterningByteWriter {
  protected buf = Buffer.allocUnsafe(64 * 1024);
  protected at = 0;
  private strings = new Map<string, number>();

  /** Bytes written since the last {@link take}. */
  get length(): number {
    return this.at;
  }

  /** Copies what is written into `into` at `offset` and starts a new batch; returns the byte count. */
  take(into: Buffer, offset: number): number {
    const n = this.buf.copy(into, offset, 0, this.at);
    this.reset();
    return n;
  }

  reset(): void {
    this.at = 0;
    this.strings.clear();
  }

  protected room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.at + n));
    this.buf.copy(next, 0, 0, this.at);
    this.buf = next;
  }

  protected u8(v: number): void {
    this.room(1);
    this.buf[this.at++] = v;
  }

  protected u16(v: number): void {
    this.room(2);
    this.buf[this.at++] = v & 0xff;
    this.buf[this.at++] = v >>> 8;
  }

  protected u32(v: number): void {
    this.room(4);
    this.buf.writeUInt32LE(v, this.at);
    this.at += 4;
  }

  protected f64(v: number): void {
    this.room(8);
    this.buf.writeDoubleLE(v, this.at);
    this.at += 8;
  }

  protected str(s: string): void {
    const ref = this.strings.get(s);
    if (ref !== undefined) {
      this.varint(ref + 1);
      return;
    }
    this.strings.set(s, this.strings.size);
    this.room(5 + s.length);
    this.buf[this.at++] = 0;
    const lenAt = this.at;
    this.at += 4;
    // Most strings are short ASCII (ids, header names, times as text): copied char by char, no native call.
    let ascii = s.length <= 64;
    if (ascii) {
      for (let i = 0; i < s.length; i++) {
        const c = s.charCodeAt(i);
        if (c > 0x7f) {
          ascii = false;
          break;
        }
        this.buf[this.at + i] = c;
      }
    }
    let n = s.length;
    if (!ascii) {
      n = Buffer.byteLength(s, 'utf8');
      this.room(n);
      this.buf.write(s, this.at, n, 'utf8');
    }
    this.buf.writeUInt32LE(n, lenAt);
    this.at += n;
  }

  protected varint(v: number): void {
    this.room(5);
    while (v >= 0x80) {
      this.buf[this.at++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buf[this.at++] = v;
  }
}

/** Reads what an {@link InterningByteWriter} wrote; throws on bytes that end early or refer to an unknown string. */
export class InterningByteReader {
  protected at = 0;
  private readonly strings: string[] = [];

  constructor(protected readonly buf: Buffer) {}

  protected need(n: number): void {
    if (this.at + n > this.buf.length) throw new Error('the bytes end early');
  }

  protected u8(): number {
    this.need(1);
    return this.buf[this.at++]!;
  }

  protected u16(): number {
    this.need(2);
    const v = this.buf[this.at]! | (this.buf[this.at + 1]! << 8);
    this.at += 2;
    return v;
  }

  protected u32(): number {
    this.need(4);
    const v = this.buf.readUInt32LE(this.at);
    this.at += 4;
    return v;
  }

  protected f64(): number {
    this.need(8);
    const v = this.buf.readDoubleLE(this.at);
    this.at += 8;
    return v;
  }

  protected str(): string {
    let ref = 0;
    for (let shift = 0; ; shift += 7) {
      const b = this.u8();
      ref |= (b & 0x7f) << shift;
      if (b < 0x80) break;
    }
    if (ref > 0) {
      const s = this.strings[ref - 1];
      if (s === undefined) throw new Error('the bytes refer to an unknown string');
      return s;
    }
    const n = this.u32();
    this.need(n);
    const s = this.buf.toString('utf8', this.at, (this.at += n));
    this.strings.push(s);
    return s;
  }
}
