/**
 * events()'s memory of the messages it just streamed as frames, so that an exchange event reuses
 * its request and response (parsed once, as the frame) instead of joining the frames table again
 * and parsing the same bytes two or three more times. Bounded: at most `limit` messages, oldest
 * dropped first; a completion takes its messages out (no later event needs them). A frame not held
 * (dropped, or its exchange event comes first) is read by row id, as the join would have.
 */
import type { FrameSeen } from '../model/events.js';
import type { JsonRpcMessage } from '../model/jsonrpc.js';
import type { FrameMessages } from './exchange-rows.js';

export const FRAME_MESSAGES_HELD = 1024;

export class FrameMessageMemory {
  private readonly held = new Map<number, JsonRpcMessage>();

  constructor(
    /** The message of the frame with this row id, read from the file (undefined if none or it does not parse). */
    private readonly read: (frameId: number) => JsonRpcMessage | undefined,
    private readonly limit = FRAME_MESSAGES_HELD,
  ) {}

  /** Holds the message of a request or response frame just streamed (row id `frameId`). */
  remember(frameId: number, event: FrameSeen): void {
    const f = event.frame;
    if (f.kind !== 'message' || f.messageKind === 'notification') return;
    if (this.held.size >= this.limit) this.held.delete(this.held.keys().next().value as number);
    this.held.set(frameId, f.message);
  }

  /** For a started exchange: its request (the response it does not need). */
  readonly forStart: FrameMessages = (frameId, side) => (side === 'request' ? this.get(frameId, false) : undefined);
  /** For a completed exchange: its messages, no longer held afterwards. */
  readonly forCompletion: FrameMessages = (frameId) => this.get(frameId, true);

  private get(frameId: number | null, take: boolean): JsonRpcMessage | undefined {
    if (frameId === null) return undefined;
    const m = this.held.get(frameId);
    if (m === undefined) return this.read(frameId);
    if (take) this.held.delete(frameId);
    return m;
  }
}
