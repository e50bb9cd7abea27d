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
}
