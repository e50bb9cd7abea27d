/**
 * The one event vocabulary of mcptap. Everything downstream of the correlator (recorder, OTel,
 * live stats, checks, load thresholds) consumes exactly this closed union; a recording replays
 * into the same stream. Add a variant here (and handle it in every sink's switch) rather than
 * inventing string-named events.
 */
import type { Exchange } from './exchange.js';
import type { Direction, Frame } from './frame.js';

export type Transport = 'stdio' | 'http';

export interface ConnectionInfo {
  connectionId: string;
  transport: Transport;
  /** stdio: the command line; http: the upstream URL. */
  target: string;
  pid?: number;
  sessionId?: string;
  /** The client's side of the connection (HTTP): its address and port, and the HTTP version it spoke. */
  peer?: { address?: string; port?: number; httpVersion?: string };
}

/** A frame entered the pipeline; `exchangeKey` links it to its exchange when there is one. */
export interface FrameSeen {
  type: 'frame';
  frame: Frame;
  exchangeKey?: string;
}

/** A request was seen; the exchange is in flight. */
export interface ExchangeStarted {
  type: 'exchange-started';
  exchange: Exchange;
}

/** An exchange reached its outcome (answered, errored, cancelled, unanswered at close, transport failure). */
export interface ExchangeCompleted {
  type: 'exchange-completed';
  exchange: Exchange;
}

/** A progress notification linked to an in-flight exchange through its progressToken. */
export interface ExchangeProgress {
  type: 'exchange-progress';
  exchangeKey: string;
  progress: Exchange['progress'][number];
}

/** A response whose id matches no request in flight. */
export interface ExchangeOrphaned {
  type: 'exchange-orphaned';
  exchange: Exchange;
}

export type AnomalyKind =
  | 'stdout_pollution'
  | 'invalid_message'
  | 'duplicate_id'
  | 'orphan_response'
  | 'response_after_cancel'
  | 'truncated_at_eof'
  | 'line_too_long'
  | 'unknown_progress_token'
  | 'header_mismatch'
  | 'protocol_violation'
  /** Traffic the tap forwarded but could not observe (its side path was full): a gap in the recording. */
  | 'dropped'
  /** A request with no JSON-RPC message (a GET stream, a DELETE) failed upstream: no exchange carries its error class. */
  | 'upstream_failed'
  /** The server cancelled a request id no frame ever carried (on HTTP, likely the GET-stream race). */
  | 'unknown_request_cancelled'
  /** A finding of the live check rules (`--check RULES.yaml`); detail: `rule (severity): message`. */
  | 'check';

/** Something the protocol does not allow, observed and counted; never an exception. */
export interface AnomalySeen {
  type: 'anomaly';
  kind: AnomalyKind;
  connectionId: string;
  direction?: Direction;
  timeUs: number;
  detail: string;
  frameSeq?: number;
  exchangeKey?: string;
}

export interface ConnectionOpened {
  type: 'connection-opened';
  timeUs: number;
  connection: ConnectionInfo;
}

export interface ConnectionClosed {
  type: 'connection-closed';
  timeUs: number;
  connectionId: string;
  reason: string;
  exitCode?: number | null;
  signal?: string | null;
}

/**
 * A long-lived server-to-client stream (HTTP): `get`, the standalone GET stream of the legacy eras
 * (Streamable HTTP's, or the deprecated HTTP+SSE transport's `/sse`); `listen`, a 2026-07-28
 * `subscriptions/listen` stream. Neither answers a request, so no exchange says when it was open.
 */
export type LongStreamKind = 'get' | 'listen';

/** What the tap tells the pipeline when a long-lived stream opens (its SSE response began) or ends. */
export interface LongStreamEdge {
  state: 'opened' | 'closed';
  kind: LongStreamKind;
  timeUs: number;
}

/** A long-lived stream opened; `streamId` is the HTTP request's, as in its frames' context. */
export interface StreamOpened {
  type: 'stream-opened';
  connectionId: string;
  streamId: string;
  kind: LongStreamKind;
  timeUs: number;
}

/** A long-lived stream ended (or its connection did): how long it was open and the notifications it carried. */
export interface StreamClosed {
  type: 'stream-closed';
  connectionId: string;
  streamId: string;
  kind: LongStreamKind;
  openedUs: number;
  timeUs: number;
  notifications: number;
}

export type TapEvent =
  | FrameSeen
  | ExchangeStarted
  | ExchangeCompleted
  | ExchangeProgress
  | ExchangeOrphaned
  | AnomalySeen
  | ConnectionOpened
  | ConnectionClosed
  | StreamOpened
  | StreamClosed;

export type TapEventType = TapEvent['type'];

/** How an HTTP response stream ended before all of its requests were answered. */
export interface StreamEnd {
  timeUs: number;
  /** `cancelled`: the client closed the stream (2026-07-28 cancellation); `transport_error`: it failed. */
  outcome: 'cancelled' | 'transport_error';
  errorClass?: string;
  httpStatus?: number;
}

/** When the event happened, as the tap saw it. */
export function eventTimeUs(e: TapEvent): number | undefined {
  switch (e.type) {
    case 'frame':
      return e.frame.timeUs;
    case 'exchange-started':
      return e.exchange.startUs;
    case 'exchange-completed':
    case 'exchange-orphaned':
      return e.exchange.endUs ?? e.exchange.transport?.streamEndUs ?? e.exchange.cancel?.timeUs ?? e.exchange.startUs;
    case 'exchange-progress':
      return e.progress.timeUs;
    case 'anomaly':
    case 'connection-opened':
    case 'connection-closed':
      return e.timeUs;
  }
}
