/**
 * The long-lived streams of a pipeline (standalone GET streams, `subscriptions/listen` streams):
 * turns the tap's open/close edges into `stream-opened` / `stream-closed` events, and counts the
 * notifications each stream carries (its frames share the stream's `context.streamId`).
 *
 * A stream whose connection closes first ends with it; an edge for an unknown or already open
 * stream is ignored (never an exception).
 */
import type { LongStreamEdge, LongStreamKind, StreamClosed, StreamOpened } from '../model/events.js';
import type { Frame } from '../model/frame.js';

interface OpenStream {
  connectionId: string;
  streamId: string;
  kind: LongStreamKind;
  openedUs: number;
  notifications: number;
}

export class LongStreams {
  /** By connection, then stream id. */
  private readonly open = new Map<string, Map<string, OpenStream>>();

  get size(): number {
    let n = 0;
    for (const m of this.open.values()) n += m.size;
    return n;
  }

  edge(connectionId: string, streamId: string, edge: LongStreamEdge): StreamOpened | StreamClosed | undefined {
    let byStream = this.open.get(connectionId);
    if (edge.state === 'closed') {
      const s = byStream?.get(streamId);
      if (!s) return undefined;
      byStream!.delete(streamId);
      if (byStream!.size === 0) this.open.delete(connectionId);
      return closed(s, edge.timeUs);
    }
    if (byStream?.has(streamId)) return undefined;
    if (!byStream) this.open.set(connectionId, (byStream = new Map()));
    byStream.set(streamId, { connectionId, streamId, kind: edge.kind, openedUs: edge.timeUs, notifications: 0 });
    return { type: 'stream-opened', connectionId, streamId, kind: edge.kind, timeUs: edge.timeUs };
  }

  /** Counts a server notification that arrived on an open long-lived stream. */
  frame(f: Frame): void {
    if (this.open.size === 0 || f.kind !== 'message' || f.messageKind !== 'notification' || f.direction !== 's2c') return;
    const sid = f.context?.streamId;
    if (sid === undefined) return;
    const s = this.open.get(f.connectionId)?.get(sid);
    if (s) s.notifications++;
  }

  /** The connection ended: its streams still open end with it. */
  closeConnection(connectionId: string, timeUs: number): StreamClosed[] {
    const byStream = this.open.get(connectionId);
    if (!byStream) return [];
    this.open.delete(connectionId);
    return [...byStream.values()].map((s) => closed(s, timeUs));
  }
}

function closed(s: OpenStream, timeUs: number): StreamClosed {
  return {
    type: 'stream-closed',
    connectionId: s.connectionId,
    streamId: s.streamId,
    kind: s.kind,
    openedUs: s.openedUs,
    timeUs: Math.max(timeUs, s.openedUs),
    notifications: s.notifications,
  };
}
