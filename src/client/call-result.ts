/**
 * What one request came back with, on either transport. Transport-neutral data: the JSON-RPC
 * response (if any), the other messages that arrived for it, the HTTP facts when there are some,
 * protocol violations the client noticed, and the timings the load engine measures.
 */
import type { JsonRpcMessage, JsonRpcResponse } from '../model/jsonrpc.js';

/** Protocol violations the client can see on its own (counted by the load engine, never thrown). */
export type ViolationKind =
  'bad_json' | 'not_jsonrpc' | 'no_response' | 'id_mismatch' | 'bad_content_type' | 'stdout_pollution' | 'orphan_response' | 'server_request';

export interface CallTiming {
  /** Just before the request was handed to the socket or pipe (µs since the epoch). */
  sentUs: number;
  /** HTTP response headers arrived. */
  headersUs?: number;
  /** First SSE event with data (HTTP) or first related notification (stdio). */
  firstEventUs?: number;
  /** Arrival of every SSE event with data / related notification, in order (the response included). */
  eventTimesUs?: number[];
  /** Arrival of every `notifications/progress` that came with the answer (SSE / stdio). */
  progressTimesUs?: number[];
  /** The JSON-RPC response arrived (absent when none did). */
  responseUs?: number;
  /** The exchange ended: body fully read, stream closed, or response matched. */
  endUs: number;
}

export interface CallResult {
  response?: JsonRpcResponse;
  /** Other messages that arrived for this request: notifications, server requests, foreign responses. */
  messages: JsonRpcMessage[];
  httpStatus?: number;
  /** Response headers, lower-cased names. */
  headers?: Record<string, string>;
  contentType?: 'json' | 'sse' | 'empty' | 'other';
  /** `Mcp-Session-Id` of the response, when it carried one. */
  sessionId?: string;
  violations: ViolationKind[];
  timing: CallTiming;
}
