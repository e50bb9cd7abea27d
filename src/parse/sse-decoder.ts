/**
 * Sans-IO Server-Sent Events decoder (WHATWG `text/event-stream` rules): bytes in, events out.
 * Lines end with LF, CRLF or CR (a CRLF split across chunks is one line end); `data:` lines join
 * with `\n`; comments (`:`) and unknown fields are ignored; an event without its terminating blank
 * line is dropped at end of stream. Never throws; no sockets, no timers.
 */
export interface SseEvent {
  data: string;
  event?: string;
  id?: string;
  retry?: number;
}

const LF = 0x0a;
const CR = 0x0d;

export class SseDecoder {
  private parts: Buffer[] = [];
  /** The previous chunk ended with `\r`: a `\n` starting the next chunk belongs to that line end. */
  private pendingCr = false;
  private atStart = true;
  private data: string[] = [];
  private sawData = false;
  private eventType: string | undefined;
  private eventId: string | undefined;
  private eventRetry: number | undefined;
  private lastId: string | undefined;

  /** The last `id:` seen on the stream (what `Last-Event-ID` would carry). */
  get lastEventId(): string | undefined {
    return this.lastId;
  }

  push(chunk: Buffer): SseEvent[] {
    const out: SseEvent[] = [];
    let start = 0;
    if (this.pendingCr && chunk.length > 0) {
      this.pendingCr = false;
      if (chunk[0] === LF) start = 1;
    }
    for (let i = start; i < chunk.length; i++) {
      const c = chunk[i];
      if (c !== LF && c !== CR) continue;
      if (i > start) this.parts.push(chunk.subarray(start, i));
      this.endLine(out);
      if (c === CR) {
        if (i + 1 < chunk.length) {
          if (chunk[i + 1] === LF) i++;
        } else this.pendingCr = true;
      }
      start = i + 1;
    }
    if (start < chunk.length) this.parts.push(chunk.subarray(start));
    return out;
  }

  /** End of stream: an unterminated last line is processed; an event without its blank line is dropped (WHATWG rule). */
  end(): SseEvent[] {
    const out: SseEvent[] = [];
    if (this.parts.length > 0) this.endLine(out);
    this.resetEvent();
    return out;
  }

  private endLine(out: SseEvent[]): void {
    let line = this.parts.length === 1 ? this.parts[0]!.toString('utf8') : Buffer.concat(this.parts).toString('utf8');
    this.parts = [];
    if (this.atStart) {
      this.atStart = false;
      if (line.charCodeAt(0) === 0xfeff) line = line.slice(1);
    }
    if (line.length === 0) {
      this.dispatch(out);
      return;
    }
    if (line.charCodeAt(0) === 0x3a /* ':' */) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 0x20) value = value.slice(1);
    this.field(field, value);
  }

  private field(name: string, value: string): void {
    switch (name) {
      case 'data':
        this.data.push(value);
        this.sawData = true;
        break;
      case 'event':
        this.eventType = value;
        break;
      case 'id':
        if (!value.includes('\u0000')) {
          this.eventId = value;
          this.lastId = value;
        }
        break;
      case 'retry':
        if (/^\d+$/.test(value)) this.eventRetry = Number(value);
        break;
      default:
        break; // unknown fields are ignored, per the format
    }
  }

  private dispatch(out: SseEvent[]): void {
    if (this.sawData) {
      const ev: SseEvent = { data: this.data.join('\n') };
      if (this.eventType !== undefined && this.eventType !== '') ev.event = this.eventType;
      if (this.eventId !== undefined) ev.id = this.eventId;
      if (this.eventRetry !== undefined) ev.retry = this.eventRetry;
      out.push(ev);
    }
    this.resetEvent();
  }

  private resetEvent(): void {
    this.data = [];
    this.sawData = false;
    this.eventType = undefined;
    this.eventId = undefined;
    this.eventRetry = undefined;
  }
}
