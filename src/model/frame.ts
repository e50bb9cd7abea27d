/**
 * Chunks and frames: the first two stages of the pipeline.
 *
 * A tap emits {@link Chunk}s (bytes exactly as forwarded); decoders turn them into {@link Frame}s
 * (one JSON-RPC message, one invalid line, one log line, one SSE event). Transports stop here:
 * nothing downstream of a Frame knows whether bytes came over a pipe or a socket, except through
 * the `channel` label and the connection's {@link ConnectionInfo}.
 */
import type { JsonRpcMessage, MessageKind } from './jsonrpc.js';

/** Who sent the bytes: the client (host) or the server. */
export type Direction = 'c2s' | 's2c';

/**
 * Where the bytes travelled.
 * - `stdio`: a line on the child's stdin/stdout (direction says which);
 * - `stderr`: the child's free-form log output;
 * - `http-body`: a request body or a JSON response body;
 * - `sse`: one Server-Sent Event's data.
 */
export type Channel = 'stdio' | 'stderr' | 'http-body' | 'sse';

export interface Chunk {
  connectionId: string;
  direction: Direction;
  channel: Channel;
  bytes: Buffer;
  /** Microseconds since the Unix epoch, taken when the tap saw the bytes. */
  timeUs: number;
}

/** Transport-level context that a decoder or tap attaches to a frame (HTTP tap fills these). */
export interface FrameContext {
  /** HTTP request/stream this frame belongs to; unique within the connection. */
  streamId?: string;
  httpStatus?: number;
  sessionId?: string;
  sseEventId?: string;
  sseEventName?: string;
  /** Protocol version claimed by a transport header (HTTP `MCP-Protocol-Version`). */
  headerProtocolVersion?: string;
  /** HTTP tap: when the upstream's response headers arrived (response frames only). */
  responseHeadersUs?: number;
  /** HTTP tap: when the response body ended, if it had by the time this frame was pushed (JSON bodies). */
  streamEndUs?: number;
  /** Raw MCP headers of the HTTP request (lower-cased names), redacted. */
  headers?: Record<string, string>;
}

interface FrameBase {
  /** Monotonic sequence number within one pipeline, assigned by the pipeline. */
  seq: number;
  connectionId: string;
  direction: Direction;
  channel: Channel;
  timeUs: number;
  /** The exact bytes of this frame (without the line terminator). */
  raw: Buffer;
  context?: FrameContext;
}

/** One JSON-RPC message. A batch (JSON array) yields one frame per element with `batch` set. */
export interface MessageFrame extends FrameBase {
  kind: 'message';
  messageKind: Exclude<MessageKind, 'malformed'>;
  message: JsonRpcMessage;
  batch?: { index: number; size: number };
}

/** Bytes that are not a JSON-RPC message: non-JSON, truncated JSON, valid JSON of the wrong shape, too long. */
export interface InvalidFrame extends FrameBase {
  kind: 'invalid';
  reason: 'not_json' | 'not_jsonrpc' | 'too_long' | 'truncated_at_eof' | 'empty_batch';
  detail: string;
}

/** A line of the server's stderr. */
export interface LogFrame extends FrameBase {
  kind: 'log';
  text: string;
}

export type Frame = MessageFrame | InvalidFrame | LogFrame;

/** Where and when one complete message was seen: what a tap tells the parser along with its bytes. */
export interface FrameOrigin {
  connectionId: string;
  direction: Direction;
  channel: Channel;
  timeUs: number;
  context?: FrameContext;
}
