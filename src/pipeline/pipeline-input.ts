/**
 * What taps call, and nothing else: {@link Pipeline} and {@link SidePath} both implement it, so a tap never knows, or
 * waits for, what happens downstream. Every method returns at once and never throws; times are the tap's (µs since epoch).
 */
import type { LongStreamEdge, StreamEnd, AnomalyKind, ConnectionInfo } from '../model/events.js';
import type { Chunk, Direction, FrameOrigin } from '../model/frame.js';
import { H_METHOD, H_NAME, H_PROTOCOL_VERSION } from '../protocol/headers.js';
import type { Clock } from '../util/clock.js';

/** Request headers as node:http gives them (lower-case names). */
export type RequestHeaders = Readonly<Record<string, string | string[] | undefined>>;

export interface ConnectionClose {
  reason: string;
  exitCode?: number | null;
  signal?: string | null;
  errorClass?: string;
  timeUs?: number;
}

export interface AnomalyExtra {
  direction?: Direction;
  timeUs?: number;
  exchangeKey?: string;
}

export interface PipelineInput {
  readonly clock: Clock;
  openConnection(info: ConnectionInfo, timeUs?: number): void;
  /** Bytes of a newline-delimited stream (stdio stdout/stdin, stderr). */
  pushChunk(chunk: Chunk): void;
  /** One complete message body (an HTTP body or one SSE event's data): a message or a batch. */
  pushMessage(origin: FrameOrigin, raw: Buffer): void;
  /** An HTTP request body, with the request's headers checked against each message in it (2026-07-28). */
  pushRequest(origin: FrameOrigin, raw: Buffer, headers: RequestHeaders): void;
  /** An HTTP response stream ended; its unanswered requests end as given. */
  endStream(connectionId: string, streamId: string, end: StreamEnd): void;
  /** A long-lived stream (standalone GET, `subscriptions/listen`) opened or ended. */
  longStream(connectionId: string, streamId: string, edge: LongStreamEdge): void;
  /** A protocol violation found by a tap (e.g. a refused request). */
  anomaly(kind: AnomalyKind, connectionId: string, detail: string, extra?: AnomalyExtra): void;
  /** End of a connection: flush partial lines, end what is pending, say it closed. */
  closeConnection(connectionId: string, close: ConnectionClose): void;
}

/** The headers the 2026-07-28 checks read (all a request's other headers are irrelevant to them). */
export function checkedHeaders(headers: RequestHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const name of [H_PROTOCOL_VERSION, H_METHOD, H_NAME]) {
    const v = headers[name];
    if (v !== undefined) out[name] = v;
  }
  return out;
}

/** The input of a tap with nothing downstream: nothing is decoded, so the tap costs what a bare forwarding shim costs. */
export function discardingInput(clock: Clock): PipelineInput {
  const none = (): void => {};
  return {
    clock,
    openConnection: none,
    pushChunk: none,
    pushMessage: none,
    pushRequest: none,
    endStream: none,
    longStream: none,
    anomaly: none,
    closeConnection: none,
  };
}

/** Both inputs get every call, `first` first; times left to the input are stamped once, by `first`'s clock, for both. */
export function teeInput(first: PipelineInput, second: PipelineInput): PipelineInput {
  const now = () => first.clock.nowUs();
  return {
    clock: first.clock,
    openConnection: (info, timeUs = now()) => (first.openConnection(info, timeUs), second.openConnection(info, timeUs)),
    pushChunk: (c) => (first.pushChunk(c), second.pushChunk(c)),
    pushMessage: (o, raw) => (first.pushMessage(o, raw), second.pushMessage(o, raw)),
    pushRequest: (o, raw, h) => (first.pushRequest(o, raw, h), second.pushRequest(o, raw, h)),
    endStream: (cid, sid, end) => (first.endStream(cid, sid, end), second.endStream(cid, sid, end)),
    longStream: (cid, sid, edge) => (first.longStream(cid, sid, edge), second.longStream(cid, sid, edge)),
    anomaly: (kind, cid, detail, extra = {}) => {
      const stamped = { ...extra, timeUs: extra.timeUs ?? now() };
      first.anomaly(kind, cid, detail, stamped);
      second.anomaly(kind, cid, detail, stamped);
    },
    closeConnection: (cid, close) => {
      const stamped = { ...close, timeUs: close.timeUs ?? now() };
      first.closeConnection(cid, stamped);
      second.closeConnection(cid, stamped);
    },
  };
}
