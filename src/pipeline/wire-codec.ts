/**
 * The worker wire's op codec: a batch's ops as compact binary rather than JSON.
 *
 * Why: at saturation the HTTP tap hands its pipeline thread three ops per exchange (request body,
 * response body, end of stream), about 840 bytes of JSON. JSON.stringify on the forwarding thread
 * and JSON.parse on the pipeline thread cost about 4 us each per exchange (measured on 150-op
 * batches taken from a live tap): more than a span's whole serialization. This codec knows the op
 * shapes, so it writes numbers as numbers and each distinct string once per batch (connection ids,
 * header names and values repeat from exchange to exchange); the rare ops (connection open and
 * close, anomalies, gaps) stay JSON inside it.
 *
 * Invariants:
 * - `decodeWireOps(encode(ops))` deep-equals `ops` as JSON would carry them (undefined fields
 *   absent), except request headers when the writer keeps only trace context (`headers: 'trace'`,
 *   for a pipeline that records nothing: telemetry reads `traceparent` and `tracestate` alone).
 * - Every FrameContext field is carried: {@link CONTEXT_BITS} must name each of them (a field added
 *   to FrameContext and not here fails to compile).
 * - A batch's string table starts empty: batches decode on their own (the spool stores them so).
 */
import type { StreamEnd } from '../correlate/correlator.js';
import type { FrameContext } from '../model/frame.js';
import type { FrameOrigin } from '../parse/frame-parser.js';
import { Op, type WireOp } from './worker-wire.js';

/** Which request headers a writer keeps in frame contexts. */
export type HeadersKept = 'all' | 'trace';

/** One bit per FrameContext field, in the order written. */
const CONTEXT_BITS = {
  streamId: 1,
  httpStatus: 2,
  sessionId: 4,
  sseEventId: 8,
  sseEventName: 16,
  headerProtocolVersion: 32,
  responseHeadersUs: 64,
  streamEndUs: 128,
  headers: 256,
} as const satisfies Record<keyof FrameContext, number>;
/** Set when a context object is present (possibly with no field). */
const HAS_CONTEXT = 512;

const END_ERROR_CLASS = 1;
const END_HTTP_STATUS = 2;

const TRACE_HEADERS = ['traceparent', 'tracestate'] as const;

export class WireOpWriter {
  private buf = Buffer.allocUnsafe(64 * 1024);
  private at = 0;
  private strings = new Map<string, number>();

  constructor(private readonly headersKept: HeadersKept = 'all') {}

  /** Bytes encoded since the last {@link take}. */
  get length(): number {
    return this.at;
  }

  write(op: WireOp): void {
    this.u8(op[0]);
    switch (op[0]) {
      case Op.Chunk:
        this.str(op[1]);
        this.str(op[2]);
        this.str(op[3]);
        this.f64(op[4]);
        this.u32(op[5]);
        return;
      case Op.Message:
        this.origin(op[1]);
        this.u32(op[2]);
        return;
      case Op.Request:
        this.origin(op[1]);
        this.u32(op[2]);
        this.headerRecord(op[3]);
        return;
      case Op.EndStream:
        this.str(op[1]);
        this.str(op[2]);
        this.streamEnd(op[3]);
        return;
      default:
        // Open, Anomaly, Close, Gap: once per connection or per fault; JSON of the op's fields.
        this.str(JSON.stringify(op.slice(1)));
    }
  }

  /** Copies what is encoded into `into` at `offset` and starts a new batch; returns the byte count. */
  take(into: Buffer, offset: number): number {
    const n = this.buf.copy(into, offset, 0, this.at);
    this.reset();
    return n;
  }

  reset(): void {
    this.at = 0;
    this.strings.clear();
  }

  private origin(o: FrameOrigin): void {
    this.str(o.connectionId);
    this.str(o.direction);
    this.str(o.channel);
    this.f64(o.timeUs);
    const c = o.context;
    if (c === undefined) {
      this.u16(0);
      return;
    }
    // The mask is written last, in its place before the fields: each field sets its bit as it goes.
    this.u16(0);
    const maskAt = this.at - 2;
    let mask = HAS_CONTEXT;
    if (c.streamId !== undefined) {
      mask |= CONTEXT_BITS.streamId;
      this.str(c.streamId);
    }
    if (c.httpStatus !== undefined) {
      mask |= CONTEXT_BITS.httpStatus;
      this.f64(c.httpStatus);
    }
    if (c.sessionId !== undefined) {
      mask |= CONTEXT_BITS.sessionId;
      this.str(c.sessionId);
    }
    if (c.sseEventId !== undefined) {
      mask |= CONTEXT_BITS.sseEventId;
      this.str(c.sseEventId);
    }
    if (c.sseEventName !== undefined) {
      mask |= CONTEXT_BITS.sseEventName;
      this.str(c.sseEventName);
    }
    if (c.headerProtocolVersion !== undefined) {
      mask |= CONTEXT_BITS.headerProtocolVersion;
      this.str(c.headerProtocolVersion);
    }
    if (c.responseHeadersUs !== undefined) {
      mask |= CONTEXT_BITS.responseHeadersUs;
      this.f64(c.responseHeadersUs);
    }
    if (c.streamEndUs !== undefined) {
      mask |= CONTEXT_BITS.streamEndUs;
      this.f64(c.streamEndUs);
    }
    const headers = c.headers !== undefined ? this.keptHeaders(c.headers) : undefined;
    if (headers !== undefined) {
      mask |= CONTEXT_BITS.headers;
      this.headerRecord(headers);
    }
    this.buf[maskAt] = mask & 0xff;
    this.buf[maskAt + 1] = mask >>> 8;
  }

  /** The headers this writer carries: all, or only trace context (undefined when none is there). */
  private keptHeaders(h: Record<string, string>): Record<string, string> | undefined {
    if (this.headersKept === 'all') return h;
    let out: Record<string, string> | undefined;
    for (const name of TRACE_HEADERS) if (h[name] !== undefined) (out ??= {})[name] = h[name];
    return out;
  }

  private headerRecord(h: Readonly<Record<string, string | readonly string[]>>): void {
    const names = Object.keys(h);
    this.u32(names.length);
    for (const name of names) {
      const v = h[name]!;
      this.str(name);
      if (typeof v === 'string') {
        this.u8(0);
        this.str(v);
      } else {
        this.u8(1);
        this.u32(v.length);
        for (const s of v) this.str(s);
      }
    }
  }

  private streamEnd(e: StreamEnd): void {
    this.f64(e.timeUs);
    this.str(e.outcome);
    this.u8((e.errorClass !== undefined ? END_ERROR_CLASS : 0) | (e.httpStatus !== undefined ? END_HTTP_STATUS : 0));
    if (e.errorClass !== undefined) this.str(e.errorClass);
    if (e.httpStatus !== undefined) this.f64(e.httpStatus);
  }

  // ---- primitives ------------------------------------------------------------------------

  private room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.at + n));
    this.buf.copy(next, 0, 0, this.at);
    this.buf = next;
  }

  private u8(v: number): void {
    this.room(1);
    this.buf[this.at++] = v;
  }

  private u16(v: number): void {
    this.room(2);
    this.buf[this.at++] = v & 0xff;
    this.buf[this.at++] = v >>> 8;
  }

  private u32(v: number): void {
    this.room(4);
    this.buf.writeUInt32LE(v, this.at);
    this.at += 4;
  }

  private f64(v: number): void {
    this.room(8);
    this.buf.writeDoubleLE(v, this.at);
    this.at += 8;
  }

  /** A string: a reference to one written earlier in the batch (index + 1), or 0 then its UTF-8 bytes. */
  private str(s: string): void {
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

  private varint(v: number): void {
    this.room(5);
    while (v >= 0x80) {
      this.buf[this.at++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buf[this.at++] = v;
  }
}

/** Encodes ops on their own (the spool's split path). */
export function encodeWireOps(ops: readonly WireOp[], headersKept: HeadersKept = 'all'): Buffer {
  const w = new WireOpWriter(headersKept);
  for (const op of ops) w.write(op);
  const out = Buffer.allocUnsafe(w.length);
  w.take(out, 0);
  return out;
}

/** The ops of one batch, as the writer was given them. Throws on bytes that are not such a batch. */
export function decodeWireOps(buf: Buffer): WireOp[] {
  return new WireOpReader(buf).all();
}

class WireOpReader {
  private at = 0;
  private readonly strings: string[] = [];

  constructor(private readonly buf: Buffer) {}

  all(): WireOp[] {
    const ops: WireOp[] = [];
    while (this.at < this.buf.length) ops.push(this.op());
    if (this.at !== this.buf.length) throw new Error('wire ops run past their batch');
    return ops;
  }

  private op(): WireOp {
    const code = this.u8() as Op;
    switch (code) {
      case Op.Chunk:
        return [Op.Chunk, this.str(), this.str() as never, this.str() as never, this.f64(), this.u32()];
      case Op.Message:
        return [Op.Message, this.origin(), this.u32()];
      case Op.Request:
        return [Op.Request, this.origin(), this.u32(), this.headerRecord()];
      case Op.EndStream:
        return [Op.EndStream, this.str(), this.str(), this.streamEnd()];
      case Op.Open:
      case Op.Anomaly:
      case Op.Close:
      case Op.Gap:
        return [code, ...(JSON.parse(this.str()) as unknown[])] as WireOp;
      default:
        throw new Error(`unknown wire op ${code as number}`);
    }
  }

  private origin(): FrameOrigin {
    const o: FrameOrigin = { connectionId: this.str(), direction: this.str() as FrameOrigin['direction'], channel: this.str() as FrameOrigin['channel'], timeUs: this.f64() };
    const mask = this.u16();
    if ((mask & HAS_CONTEXT) === 0) return o;
    const c: FrameContext = {};
    if (mask & CONTEXT_BITS.streamId) c.streamId = this.str();
    if (mask & CONTEXT_BITS.httpStatus) c.httpStatus = this.f64();
    if (mask & CONTEXT_BITS.sessionId) c.sessionId = this.str();
    if (mask & CONTEXT_BITS.sseEventId) c.sseEventId = this.str();
    if (mask & CONTEXT_BITS.sseEventName) c.sseEventName = this.str();
    if (mask & CONTEXT_BITS.headerProtocolVersion) c.headerProtocolVersion = this.str();
    if (mask & CONTEXT_BITS.responseHeadersUs) c.responseHeadersUs = this.f64();
    if (mask & CONTEXT_BITS.streamEndUs) c.streamEndUs = this.f64();
    if (mask & CONTEXT_BITS.headers) c.headers = this.headerRecord() as Record<string, string>;
    o.context = c;
    return o;
  }

  private headerRecord(): Record<string, string | string[]> {
    const out: Record<string, string | string[]> = {};
    for (let n = this.u32(); n > 0; n--) {
      const name = this.str();
      if (this.u8() === 0) out[name] = this.str();
      else {
        const values: string[] = [];
        for (let k = this.u32(); k > 0; k--) values.push(this.str());
        out[name] = values;
      }
    }
    return out;
  }

  private streamEnd(): StreamEnd {
    const e: StreamEnd = { timeUs: this.f64(), outcome: this.str() as StreamEnd['outcome'] };
    const mask = this.u8();
    if (mask & END_ERROR_CLASS) e.errorClass = this.str();
    if (mask & END_HTTP_STATUS) e.httpStatus = this.f64();
    return e;
  }

  private need(n: number): void {
    if (this.at + n > this.buf.length) throw new Error('wire ops end early');
  }

  private u8(): number {
    this.need(1);
    return this.buf[this.at++]!;
  }

  private u16(): number {
    this.need(2);
    const v = this.buf[this.at]! | (this.buf[this.at + 1]! << 8);
    this.at += 2;
    return v;
  }

  private u32(): number {
    this.need(4);
    const v = this.buf.readUInt32LE(this.at);
    this.at += 4;
    return v;
  }

  private f64(): number {
    this.need(8);
    const v = this.buf.readDoubleLE(this.at);
    this.at += 8;
    return v;
  }

  private str(): string {
    let ref = 0;
    for (let shift = 0; ; shift += 7) {
      const b = this.u8();
      ref |= (b & 0x7f) << shift;
      if (b < 0x80) break;
    }
    if (ref > 0) {
      const s = this.strings[ref - 1];
      if (s === undefined) throw new Error('wire ops refer to an unknown string');
      return s;
    }
    const n = this.u32();
    this.need(n);
    const s = this.buf.toString('utf8', this.at, (this.at += n));
    this.strings.push(s);
    return s;
  }
}
