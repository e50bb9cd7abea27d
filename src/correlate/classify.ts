/**
 * Pure helpers that build and finish {@link Exchange} records. Classification keeps the three
 * failure layers apart: a JSON-RPC `error` is `jsonrpc_error`, a `tools/call` result with
 * `isError: true` is `tool_error`, and transport failures are set by the taps.
 */
import type { Exchange, Era } from '../model/exchange.js';
import type { MessageFrame } from '../model/frame.js';
import { idType, isRecord, type JsonRpcRequest, type JsonRpcResponse } from '../model/jsonrpc.js';
import { eraOfRequest, eraOfVersion, isToolError, targetOf } from '../protocol/mcp.js';

export interface ConnectionEra {
  era: Era;
  protocolVersion?: string;
  sessionId?: string;
}

export function newExchange(key: string, frame: MessageFrame, conn: ConnectionEra): Exchange {
  const req = frame.message as JsonRpcRequest;
  const own = eraOfRequest(req.method, req);
  // Over HTTP each TCP connection is a connection of its own, and only one of them carried the
  // initialize: the request's MCP-Protocol-Version header (sent after initialize) tells the era too.
  const era = own.era !== 'unknown' ? own.era : conn.era !== 'unknown' ? conn.era : eraOfVersion(frame.context?.headerProtocolVersion);
  const ex: Exchange = {
    key,
    connectionId: frame.connectionId,
    direction: frame.direction,
    id: req.id,
    idType: idType(req.id),
    method: req.method,
    era,
    request: req,
    startUs: frame.timeUs,
    outcome: 'unanswered',
    isError: false,
    progress: [],
    responseAfterCancel: false,
    requestSeq: frame.seq,
  };
  const target = targetOf(req.method, req);
  if (target !== undefined) ex.target = target;
  const version = own.protocolVersion ?? frame.context?.headerProtocolVersion ?? conn.protocolVersion;
  if (version !== undefined) ex.protocolVersion = version;
  const session = frame.context?.sessionId ?? conn.sessionId;
  if (session !== undefined) ex.sessionId = session;
  return ex;
}

/** Attach a response and classify the outcome. Mutates and returns `ex`. */
export function finishWithResponse(ex: Exchange, frame: MessageFrame): Exchange {
  const res = frame.message as JsonRpcResponse;
  ex.response = res;
  ex.responseSeq = frame.seq;
  ex.endUs = frame.timeUs;
  ex.latencyUs = Math.max(0, frame.timeUs - ex.startUs);
  const status = frame.context?.httpStatus;
  if (status !== undefined) (ex.transport ??= {}).httpStatus = status;
  const ctx = frame.context;
  if (ctx?.responseHeadersUs !== undefined || ctx?.streamEndUs !== undefined) {
    const t = (ex.transport ??= {});
    if (ctx.responseHeadersUs !== undefined) t.responseHeadersUs = ctx.responseHeadersUs;
    if (ctx.streamEndUs !== undefined) t.streamEndUs = ctx.streamEndUs;
  }
  if (frame.context?.sessionId && !ex.sessionId) ex.sessionId = frame.context.sessionId;
  const c = classifyResponse(ex.method, res);
  ex.outcome = c.outcome;
  ex.isError = c.isError;
  if (c.errorCode !== undefined) ex.errorCode = c.errorCode;
  if (c.errorMessage !== undefined) ex.errorMessage = c.errorMessage;
  if (ex.cancel) {
    ex.responseAfterCancel = true;
    ex.outcome = 'cancelled';
  }
  return ex;
}

export interface ResponseClass {
  outcome: 'ok' | 'jsonrpc_error' | 'tool_error';
  isError: boolean;
  errorCode?: number;
  errorMessage?: string;
}

/** The outcome a response gives its request (the tap's and the replayer's one rule). */
export function classifyResponse(method: string, res: JsonRpcResponse): ResponseClass {
  if (res.error !== undefined) {
    const c: ResponseClass = { outcome: 'jsonrpc_error', isError: false };
    if (isRecord(res.error)) {
      if (typeof res.error.code === 'number') c.errorCode = res.error.code;
      if (typeof res.error.message === 'string') c.errorMessage = res.error.message;
    }
    return c;
  }
  if (method === 'tools/call' && isToolError(res.result)) {
    const c: ResponseClass = { outcome: 'tool_error', isError: true };
    const text = toolErrorText(res.result);
    if (text !== undefined) c.errorMessage = text;
    return c;
  }
  return { outcome: 'ok', isError: false };
}

export function finishWithout(ex: Exchange, outcome: Exchange['outcome'], timeUs: number, errorClass?: string): Exchange {
  ex.outcome = outcome;
  ex.endUs = timeUs;
  ex.latencyUs = Math.max(0, timeUs - ex.startUs);
  if (errorClass !== undefined) (ex.transport ??= {}).errorClass = errorClass;
  return ex;
}

/** An exchange record for a response that matched no request. */
export function orphanExchange(key: string, frame: MessageFrame, conn: ConnectionEra): Exchange {
  const res = frame.message as JsonRpcResponse;
  const id = res.id ?? 'null';
  const ex: Exchange = {
    key,
    connectionId: frame.connectionId,
    // The orphan's request would have travelled the other way.
    direction: frame.direction === 'c2s' ? 's2c' : 'c2s',
    id,
    idType: idType(id),
    method: '',
    era: conn.era,
    request: { jsonrpc: '2.0', id, method: '' },
    response: res,
    startUs: frame.timeUs,
    endUs: frame.timeUs,
    latencyUs: 0,
    outcome: 'orphan_response',
    isError: false,
    progress: [],
    responseAfterCancel: false,
    requestSeq: frame.seq,
    responseSeq: frame.seq,
  };
  if (isRecord(res.error) && typeof res.error.code === 'number') ex.errorCode = res.error.code;
  if (conn.sessionId) ex.sessionId = conn.sessionId;
  return ex;
}

function toolErrorText(result: unknown): string | undefined {
  if (!isRecord(result) || !Array.isArray(result.content)) return undefined;
  const first = result.content.find((c) => isRecord(c) && c.type === 'text');
  return isRecord(first) && typeof first.text === 'string' ? first.text.slice(0, 500) : undefined;
}
