/**
 * The `--update` side of a replay: what it sends and receives, told to a {@link TrafficObserver}
 * with the replay clock's time and, where known, when the message's counterpart was recorded (so
 * the new baseline keeps stable times).
 */
import type { JsonRpcId, JsonRpcMessage } from '../model/jsonrpc.js';
import type { StoredExchange } from '../store/types.js';
import type { Clock } from '../util/clock.js';

/** What the live session's HTTP headers said of a message: its session id and protocol version. */
export interface SessionFacts {
  readonly sessionId?: string | undefined;
  readonly protocolVersion?: string | undefined;
}

/**
 * Sees the replay's traffic as it happens (`--update` records it). `recordedUs`: when the message's
 * counterpart was recorded (a step's request, response or cancellation), for a baseline of stable times.
 */
export interface TrafficObserver {
  opened(session: string, timeUs: number): void;
  message(session: string, direction: 'c2s' | 's2c', message: JsonRpcMessage, timeUs: number, facts?: SessionFacts, recordedUs?: number): void;
  closed(session: string, timeUs: number): void;
}

/** A replay's traffic, told to the observer when there is one (a no-op otherwise). */
export class ReplayTraffic {
  constructor(
    private readonly clock: Clock,
    private readonly observer?: TrafficObserver,
  ) {}

  opened(session: string): void {
    this.observer?.opened(session, this.clock.nowUs());
  }

  closed(session: string): void {
    this.observer?.closed(session, this.clock.nowUs());
  }

  /** A message the replayer sent now. */
  sent(session: string, m: JsonRpcMessage, facts?: SessionFacts, recordedUs?: number): void {
    this.observer?.message(session, 'c2s', m, this.clock.nowUs(), facts, recordedUs);
  }

  /** A message the server sent, seen at `timeUs` (now when not given). */
  received(session: string, m: JsonRpcMessage, timeUs?: number, facts?: SessionFacts, recordedUs?: number): void {
    this.observer?.message(session, 's2c', m, timeUs ?? this.clock.nowUs(), facts, recordedUs);
  }
}

/** When a step's message was recorded: its response at the recorded end (or cancel), anything else at its start. */
export function recordedTimeOf(ex: StoredExchange, m: JsonRpcMessage, sentId: JsonRpcId): number {
  const response = !('method' in m) && 'id' in m && m.id === sentId;
  return response ? (ex.endUs ?? ex.cancel?.timeUs ?? ex.startUs) : ex.startUs;
}
