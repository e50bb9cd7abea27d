/**
 * What the tap's side path (side-path.ts) could not hand over, counted per stream and per connection until it is
 * accepted again; the gap is then reported first, as an op of its own (a `dropped` anomaly).
 */
import type { Chunk, FrameOrigin } from '../model/frame.js';
import { Op, type Lost, type WireOp } from './worker-wire.js';

const NL = 0x0a;

export class SidePathDrops {
  /** Everything dropped so far (side path full, or the thread gone). */
  readonly dropped = { chunks: 0, messages: 0, bytes: 0 };
  /** Per stream (`conn|dir|channel`): chunks dropped since its last accepted one. */
  private readonly chunks = new Map<string, Lost & { connectionId: string; direction: Chunk['direction']; channel: Chunk['channel'] }>();
  /** Per connection: message bodies dropped since its last accepted one. */
  private readonly messages = new Map<string, { messages: number; bytes: number; timeUs: number }>();

  droppedChunk(c: Chunk): void {
    const key = streamKey(c);
    const l = this.chunks.get(key);
    const endedAtNewline = c.bytes.length > 0 && c.bytes[c.bytes.length - 1] === NL;
    if (l) {
      l.bytes += c.bytes.length;
      l.chunks++;
      l.endedAtNewline = c.bytes.length > 0 ? endedAtNewline : l.endedAtNewline;
    } else {
      this.chunks.set(key, {
        connectionId: c.connectionId,
        direction: c.direction,
        channel: c.channel,
        bytes: c.bytes.length,
        chunks: 1,
        endedAtNewline,
        timeUs: c.timeUs,
      });
    }
    this.dropped.chunks++;
    this.dropped.bytes += c.bytes.length;
  }

  /** Message bodies are dropped whole. */
  droppedMessage(origin: FrameOrigin, raw: Buffer): void {
    const l = this.messages.get(origin.connectionId) ?? { messages: 0, bytes: 0, timeUs: origin.timeUs };
    l.messages++;
    l.bytes += raw.length;
    this.messages.set(origin.connectionId, l);
    this.dropped.messages++;
    this.dropped.bytes += raw.length;
  }

  /** Bytes that were never queued (the thread is gone). */
  droppedBytes(n: number): void {
    this.dropped.bytes += n;
  }

  /** `c`'s stream is accepted again: the op that reports its gap, to queue before it; undefined when none. */
  chunkGap(c: Chunk): WireOp | undefined {
    // Per chunk on the forwarding thread: the key is built only while some stream has a gap.
    if (this.chunks.size === 0) return undefined;
    const key = streamKey(c);
    const l = this.chunks.get(key);
    if (!l) return undefined;
    this.chunks.delete(key);
    return [Op.Gap, l.connectionId, l.direction, l.channel, { bytes: l.bytes, chunks: l.chunks, endedAtNewline: l.endedAtNewline, timeUs: l.timeUs }];
  }

  /** A message on `origin`'s connection is accepted again: the anomaly op that reports the bodies dropped before it. */
  messageGap(origin: FrameOrigin): WireOp | undefined {
    if (this.messages.size === 0) return undefined;
    const cid = origin.connectionId;
    const l = this.messages.get(cid);
    if (!l) return undefined;
    this.messages.delete(cid);
    const detail = `${l.messages} messages (${l.bytes} bytes) forwarded but not observed: the tap's side path was full`;
    return [Op.Anomaly, 'dropped', cid, detail, { direction: origin.direction, timeUs: l.timeUs }];
  }

  /** The line worth telling the user; `dead`: why the thread stopped observing, if it did. */
  lines(dead: string | undefined): string[] {
    const d = this.dropped;
    if (d.chunks === 0 && d.messages === 0 && !dead) return [];
    return [
      `the tap's side path dropped ${d.chunks} chunks and ${d.messages} message bodies (${d.bytes} bytes): forwarded but not observed${dead ? ` (${dead})` : ' (queue full)'}`,
    ];
  }
}

function streamKey(c: Chunk): string {
  return `${c.connectionId}|${c.direction}|${c.channel}`;
}
