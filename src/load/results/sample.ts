/**
 * One measured request: the unit the drivers produce and the aggregation consumes. Times are
 * µs since the epoch. `intendedUs` is when the request should have started by the schedule (open
 * model: the arrival time; closed model: when the virtual user became ready), so
 * `endUs - intendedUs` includes any wait a stalled server or a saturated generator caused.
 *
 * The failure layers are kept apart: a sample can be HTTP 400 *and* JSON-RPC -32020 at once;
 * `outcome` is only the one-word summary (transport > JSON-RPC > tool > ok).
 */
import type { JsonRpcResponse } from '../../model/jsonrpc.js';
import { isToolError } from '../../protocol/mcp.js';
import type { CallResult } from '../../client/call-result.js';
import type { TransportErrorClass } from '../../client/transport-error.js';

export type SampleOutcome = 'ok' | 'jsonrpc_error' | 'tool_error' | 'transport_error' | 'unanswered';

export interface Sample {
  step: string;
  method: string;
  /** Tool name (tools/call) — the per-tool statistics key. */
  tool?: string;
  intendedUs: number;
  sentUs: number;
  endUs: number;
  outcome: SampleOutcome;
  transportError?: TransportErrorClass;
  httpStatus?: number;
  rpcCode?: number;
  isError: boolean;
  violations: readonly string[];
  /** The answer came as an SSE stream. */
  sse: boolean;
  /** HTTP response headers arrived. */
  headersUs?: number;
  firstEventUs?: number;
  eventTimesUs?: readonly number[];
  /** SSE: arrival of each `notifications/progress` for this request. */
  progressTimesUs?: readonly number[];
  /** SSE: the stream ended (after the response, normally). */
  streamEndUs?: number;
  checks: number;
  checkFailures: number;
  /** The step declared this error (`expect:`) and got it: counted apart, not as an error. */
  expected?: 'tool_error' | 'protocol_error';
  /** Each check's verdict on this call (only when the step has checks). */
  checkVerdicts?: CheckVerdict[];
}

/** One check on one call: a failure says what was expected and what came. */
export interface CheckVerdict {
  name: string;
  ok: boolean;
  expected?: string;
  got?: string;
}

export interface SampleLabels {
  step: string;
  method: string;
  tool?: string;
  intendedUs: number;
}

/** A sample from a call that got an answer of some kind. */
export function sampleFromResult(labels: SampleLabels, r: CallResult): Sample {
  const res: JsonRpcResponse | undefined = r.response;
  const endUs = r.timing.responseUs ?? r.timing.endUs;
  const isError = res !== undefined && res.error === undefined && labels.method === 'tools/call' && isToolError(res.result);
  let outcome: SampleOutcome;
  if (res?.error) outcome = 'jsonrpc_error';
  else if (isError) outcome = 'tool_error';
  else if (res) outcome = 'ok';
  else outcome = r.httpStatus !== undefined && r.httpStatus >= 400 ? 'transport_error' : 'unanswered';
  const s = baseSample(labels, r.timing.sentUs, endUs, outcome, isError, r.violations, r.contentType === 'sse');
  if (r.httpStatus !== undefined) s.httpStatus = r.httpStatus;
  if (res?.error && typeof res.error.code === 'number') s.rpcCode = res.error.code;
  if (r.timing.firstEventUs !== undefined) s.firstEventUs = r.timing.firstEventUs;
  if (r.timing.eventTimesUs) s.eventTimesUs = r.timing.eventTimesUs;
  if (r.timing.headersUs !== undefined) s.headersUs = r.timing.headersUs;
  if (r.timing.progressTimesUs) s.progressTimesUs = r.timing.progressTimesUs;
  if (s.sse) s.streamEndUs = r.timing.endUs;
  return s;
}

/** A sample from a call that failed below JSON-RPC (refused, reset, timeout, child exit). */
export function sampleFromTransportError(labels: SampleLabels, sentUs: number, endUs: number, cls: TransportErrorClass): Sample {
  const s = baseSample(labels, sentUs, endUs, 'transport_error', false, [], false);
  s.transportError = cls;
  return s;
}

/**
 * The fields every sample has, as one object literal. Hot path (one per request): no object spread
 * here, because `{...labels, more}` takes V8's slow clone-then-define path
 * (docs/performance.md, "Figures moved from source comments").
 */
function baseSample(
  l: SampleLabels,
  sentUs: number,
  endUs: number,
  outcome: SampleOutcome,
  isError: boolean,
  violations: readonly string[],
  sse: boolean,
): Sample {
  const s: Sample = { step: l.step, method: l.method, intendedUs: l.intendedUs, sentUs, endUs, outcome, isError, violations, sse, checks: 0, checkFailures: 0 };
  if (l.tool !== undefined) s.tool = l.tool;
  return s;
}
