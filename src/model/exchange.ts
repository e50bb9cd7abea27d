/**
 * An exchange: one JSON-RPC request and what became of it. Keyed by (connection, direction, id);
 * `direction` is the direction of the request (server->client requests such as sampling are
 * exchanges too).
 */
import type { Direction } from './frame.js';
import type { IdType, JsonRpcId, JsonRpcMessage } from './jsonrpc.js';
import type { Outcome } from './outcome.js';

export type Era = 'legacy' | 'modern' | 'unknown';

export interface ProgressPoint {
  timeUs: number;
  progress: number;
  total?: number;
  message?: string;
}

export interface CancelInfo {
  timeUs: number;
  /** Who cancelled: the side that sent `notifications/cancelled`, or `disconnect` (HTTP stream closed). */
  by: Direction | 'disconnect';
  reason?: string;
}

/**
 * What followed a cancellation, worked out when the exchange completes: how it was cancelled and
 * whether the server stopped. `stream_closed` is the 2026-07-28 way (the client closed the HTTP
 * stream); `notification` is `notifications/cancelled` (legacy HTTP, stdio).
 */
export interface CancelAftermath {
  mechanism: 'notification' | 'stream_closed';
  /** Progress notifications the server still sent after the cancel (it kept working). */
  progressAfter: number;
  /** Messages of any kind on the request's stream after the cancel (progress, response, others). */
  eventsAfter: number;
  /** From the cancel to the server's last sign of work on this request (0: none after it). */
  workAfterUs: number;
  /** From the cancel to the end of the request's stream, when it ended after the cancel. */
  streamEndAfterUs?: number;
}

export interface Exchange {
  /** Unique within a pipeline run: `${connectionId}/${direction}/${seq}`. */
  key: string;
  connectionId: string;
  direction: Direction;
  id: JsonRpcId;
  idType: IdType;
  method: string;
  /** Tool or prompt name, or resource URI: what `Mcp-Name` would carry. */
  target?: string;
  era: Era;
  protocolVersion?: string;
  sessionId?: string;
  request: JsonRpcMessage;
  response?: JsonRpcMessage;
  startUs: number;
  endUs?: number;
  latencyUs?: number;
  outcome: Outcome;
  errorCode?: number;
  errorMessage?: string;
  /** `tools/call` result had `isError: true`. */
  isError: boolean;
  progress: ProgressPoint[];
  cancel?: CancelInfo;
  /** A response arrived after the request was cancelled. */
  responseAfterCancel: boolean;
  /** Frame sequence numbers of the request and response. */
  requestSeq: number;
  responseSeq?: number;
  /** Transport-specific facts (HTTP status, SSE timings); filled by taps that have them. */
  transport?: ExchangeTransport;
  /** Logical operation that links MRTR retries (2026-07-28 `input_required`): key of the first exchange. */
  operationKey?: string;
}

export interface ExchangeTransport {
  httpStatus?: number;
  /** Transport failure class when outcome is `transport_error` (e.g. `connection_refused`, `timeout`, `child_exit`). */
  errorClass?: string;
  firstEventUs?: number;
  eventTimesUs?: number[];
  streamEndUs?: number;
  responseHeadersUs?: number;
  /** A cancelled exchange: what happened after the cancel (recorded with the transport facts). */
  afterCancel?: CancelAftermath;
}
