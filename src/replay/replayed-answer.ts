/** What a replayed request's answer is, from what the client got back. Pure. */
import { classifyResponse } from '../correlate/classify.js';
import type { CallResult } from '../client/call-result.js';
import type { JsonRpcMessage, JsonRpcResponse } from '../model/jsonrpc.js';
import type { ReplayedAnswer } from './compare.js';
import { httpStatusHint } from './transport-hint.js';

/** A replayed recorded cancellation's answer; also that of a step a stop cut short (never handed on). */
export const CANCELLED_ANSWER: ReplayedAnswer = { outcome: 'cancelled', isError: false, progressCount: 0, unexpectedServerRequests: [] };

/**
 * The answer of `method` from `result`; `remapped` gives the response with the recorded ids back.
 * Stream figures only over HTTP (stdio has no SSE).
 */
export function answerFrom(method: string, result: CallResult, remapped: (res: JsonRpcResponse) => JsonRpcMessage, http: boolean): ReplayedAnswer {
  const progressCount = result.messages.filter((m) => 'method' in m && m.method === 'notifications/progress').length;
  const res = result.response;
  if (res === undefined) {
    const why =
      result.httpStatus !== undefined
        ? `HTTP ${result.httpStatus} without a JSON-RPC response${httpStatusHint(method, result.httpStatus)}`
        : 'the stream ended without a response';
    return { outcome: 'unanswered', isError: false, progressCount, unexpectedServerRequests: [], transportError: why };
  }
  const c = classifyResponse(method, res);
  const a: ReplayedAnswer = { response: remapped(res), outcome: c.outcome, isError: c.isError, progressCount, unexpectedServerRequests: [] };
  if (c.errorCode !== undefined) a.errorCode = c.errorCode;
  const t = result.timing;
  if (t.responseUs !== undefined) a.latencyUs = Math.max(0, t.responseUs - t.sentUs);
  if (http && t.eventTimesUs && t.eventTimesUs.length > 0) {
    a.stream = { startUs: t.sentUs, eventTimesUs: t.eventTimesUs, streamEndUs: t.endUs };
    if (t.headersUs !== undefined) a.stream.headersUs = t.headersUs;
    if (t.progressTimesUs) a.stream.progressTimesUs = t.progressTimesUs;
    if (t.responseUs !== undefined) a.stream.responseUs = t.responseUs;
  }
  return a;
}

/** An answer's JSON-RPC error, in a few words. */
export function errorOf(a: ReplayedAnswer): string {
  const err = a.response && 'error' in a.response ? a.response.error : undefined;
  return err ? `${err.message} (${err.code})` : 'no answer';
}
