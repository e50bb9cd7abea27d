/**
 * The worker wire's op codec: binary, numbers as numbers and each string once per batch; rare ops stay JSON inside it.
 * JSON on both ends cost more than a span's serialization (docs/performance.md, "Figures moved from source comments").
 *
 * Invariants:
 * - `decodeWireOps(encode(ops))` deep-equals `ops` as JSON would carry them, except headers under `headers: 'trace'`
 *   (a pipeline that records nothing keeps `traceparent` and `tracestate` alone, for telemetry).
 * - {@link CONTEXT_BITS} names every FrameContext field (a field missing here fails to compile).
 * - A batch's string table starts empty: batches decode on their own (the spool stores them so).
 */
import type { StreamEnd } from '../model/events.js';
import type { FrameContext, FrameOrigin } from '../model/frame.js';
import { InterningByteReader, InterningByteWriter } from './interned-bytes.js';
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

export class WireOpWriter extends InterningByteWriter {
  constructor(private readonly headersKept: HeadersKept = 'all') {
    super();
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
        // Open, Anomaly, Close, Gap, LongStream: once per connection, fault or long-lived stream; JSON of the op's fields.
        this.str(JSON.stringify(op.slice(1)));
    }
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
    mask |= this.optStr(c.streamId, CONTEXT_BITS.streamId);
    mask |= this.optF64(c.httpStatus, CONTEXT_BITS.httpStatus);
    mask |= this.optStr(c.sessionId, CONTEXT_BITS.sessionId);
    mask |= this.optStr(c.sseEventId, CONTEXT_BITS.sseEventId);
    mask |= this.optStr(c.sseEventName, CONTEXT_BITS.sseEventName);
    mask |= this.optStr(c.headerProtocolVersion, CONTEXT_BITS.headerProtocolVersion);
    mask |= this.optF64(c.responseHeadersUs, CONTEXT_BITS.responseHeadersUs);
    mask |= this.optF64(c.streamEndUs, CONTEXT_BITS.streamEndUs);
    const headers = c.headers !== undefined ? this.keptHeaders(c.headers) : undefined;
    if (headers !== undefined) {
      mask |= CONTEXT_BITS.headers;
      this.headerRecord(headers);
    }
    this.buf[maskAt] = mask & 0xff;
    this.buf[maskAt + 1] = mask >>> 8;
  }

  /** A FrameContext field that may be absent: written when present; returns its mask bit then, else 0. */
  private optStr(v: string | undefined, bit: number): number {
    if (v === undefined) return 0;
    this.str(v);
    return bit;
  }

  private optF64(v: number | undefined, bit: number): number {
    if (v === undefined) return 0;
    this.f64(v);
    return bit;
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

class WireOpReader extends InterningByteReader {
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
      case Op.LongStream:
        return [code, ...(JSON.parse(this.str()) as unknown[])] as WireOp;
      default:
        throw new Error(`unknown wire op ${code as number}`);
    }
  }

  private origin(): FrameOrigin {
    const o: FrameOrigin = {
      connectionId: this.str(),
      direction: this.str() as FrameOrigin['direction'],
      channel: this.str() as FrameOrigin['channel'],
      timeUs: this.f64(),
    };
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
}
