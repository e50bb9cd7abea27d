/**
 * Sans-IO decoder for newline-delimited JSON (the stdio transport).
 *
 * Invariants:
 * - Linear in the input: each byte is scanned once for '\n'; a line split over many chunks is
 *   joined once, when its newline arrives (chunks are kept in a list, never concatenated per chunk).
 * - Chunk boundaries may fall anywhere, including inside a multi-byte UTF-8 character: bytes are
 *   decoded only per complete line.
 * - `\r\n` is accepted; whitespace-only lines are skipped.
 * - A line longer than `maxLineBytes` is not buffered further: it becomes one `too_long` invalid
 *   frame carrying its first min(4096, maxLineBytes) bytes, and decoding resumes at the next newline.
 * - Never throws.
 * - On the `stderr` channel lines become `log` frames instead of being parsed.
 */
import type { Channel, Direction, Frame } from '../model/frame.js';
import { parseMessageBytes, preview, type SeqSource } from './frame-parser.js';

export interface NdjsonDecoderOptions {
  connectionId: string;
  direction: Direction;
  channel?: Channel;
  seq: SeqSource;
  /** Default 64 MiB. */
  maxLineBytes?: number;
}

const NL = 0x0a;
const CR = 0x0d;
const KEEP_OF_LONG_LINE = 4096;

export class NdjsonDecoder {
  private parts: Buffer[] = [];
  private partsLen = 0;
  /** Time the current line's first byte arrived: a frame is timed by its first byte. */
  private lineStartUs = 0;
  private overflow = false;
  private readonly maxLineBytes: number;
  private readonly channel: Channel;

  constructor(private readonly opts: NdjsonDecoderOptions) {
    this.maxLineBytes = opts.maxLineBytes ?? 64 * 1024 * 1024;
    this.channel = opts.channel ?? 'stdio';
  }

  /** Bytes buffered for an unfinished line. */
  get buffered(): number {
    return this.partsLen;
  }

  push(chunk: Buffer, timeUs: number): Frame[] {
    const out: Frame[] = [];
    let start = 0;
    while (start < chunk.length) {
      if (this.partsLen === 0 && !this.overflow) this.lineStartUs = timeUs;
      const nl = chunk.indexOf(NL, start);
      if (nl === -1) {
        this.append(chunk.subarray(start), out);
        break;
      }
      this.append(chunk.subarray(start, nl), out);
      this.endLine(out, timeUs);
      start = nl + 1;
    }
    return out;
  }

  /**
   * Some of the stream's bytes were never seen (the tap dropped them under load): the partial line
   * is discarded, and unless the lost bytes ended with a newline, so is everything up to the next
   * one. Decoding goes on from a line boundary, never from the middle of a message.
   */
  gap(lostEndedAtNewline: boolean): void {
    this.parts = [];
    this.partsLen = 0;
    this.overflow = !lostEndedAtNewline;
  }

  /** End of input: an unterminated last line is still decoded (and flagged when it is not valid). */
  end(timeUs: number): Frame[] {
    const out: Frame[] = [];
    if (this.partsLen > 0 || this.overflow) {
      const frames = this.takeLine(timeUs);
      for (const f of frames) {
        if (f.kind === 'invalid' && f.reason === 'not_json') {
          out.push({ ...f, reason: 'truncated_at_eof', detail: `unterminated line at end of stream: ${f.detail}` });
        } else out.push(f);
      }
    }
    return out;
  }

  private append(bytes: Buffer, out: Frame[]): void {
    if (bytes.length === 0) return;
    if (this.overflow) return;
    this.parts.push(bytes);
    this.partsLen += bytes.length;
    if (this.partsLen > this.maxLineBytes) {
      // The same head however the line was chunked: never more than the limit let in.
      const head = concat(this.parts, this.partsLen).subarray(0, Math.min(KEEP_OF_LONG_LINE, this.maxLineBytes));
      out.push({
        seq: this.opts.seq.next(),
        connectionId: this.opts.connectionId,
        direction: this.opts.direction,
        channel: this.channel,
        timeUs: this.lineStartUs,
        raw: head,
        kind: 'invalid',
        reason: 'too_long',
        detail: `line longer than ${this.maxLineBytes} bytes; skipped to the next newline: ${preview(head)}`,
      });
      this.parts = [];
      this.partsLen = 0;
      this.overflow = true;
    }
  }

  private endLine(out: Frame[], _timeUs: number): void {
    if (this.overflow) {
      this.overflow = false;
      return;
    }
    for (const f of this.takeLine(this.lineStartUs)) out.push(f);
  }

  private takeLine(timeUs: number): Frame[] {
    if (this.overflow) {
      this.overflow = false;
      return [];
    }
    let line = concat(this.parts, this.partsLen);
    this.parts = [];
    this.partsLen = 0;
    if (line.length > 0 && line[line.length - 1] === CR) line = line.subarray(0, line.length - 1);
    if (isBlank(line)) return [];
    if (this.channel === 'stderr') {
      // stderr is free-form log output: one log frame per line, never parsed as JSON.
      return [
        {
          seq: this.opts.seq.next(),
          connectionId: this.opts.connectionId,
          direction: this.opts.direction,
          channel: this.channel,
          timeUs,
          raw: line,
          kind: 'log',
          text: line.toString('utf8'),
        },
      ];
    }
    return parseMessageBytes(
      line,
      { connectionId: this.opts.connectionId, direction: this.opts.direction, channel: this.channel, timeUs: timeUs || this.lineStartUs },
      this.opts.seq,
    );
  }
}

function concat(parts: Buffer[], len: number): Buffer {
  if (parts.length === 1) return parts[0]!;
  return Buffer.concat(parts, len);
}

function isBlank(b: Buffer): boolean {
  for (let i = 0; i < b.length; i++) {
    const c = b[i];
    if (c !== 0x20 && c !== 0x09 && c !== CR) return false;
  }
  return true;
}
