/**
 * Sending one call that the step cancels mid-flight, and watching what the server does after.
 *
 * The mechanism is the era's and transport's: on 2026-07-28 HTTP closing the response stream IS
 * the cancel; in the legacy era and on stdio it is `notifications/cancelled {requestId}` (legacy
 * HTTP with `close: true` closes the stream as well). After a notification the call's stream (or
 * the stdio pending request) is kept for `observe`, to see progress or a final response that
 * should not come. Then one more request goes to the same session or process: the probe tool
 * when the step names one (asked about the call's work by its progress token), else `ping`
 * (legacy) or `server/discover` (2026-07-28); its latency says whether the server is still busy.
 *
 * Every cancelled call carries a progress token unique to this process and run, so the probe's
 * answer is about that call and no other.
 *
 * On a stdio target (Linux), the server process's CPU time is read over the watch after the grace,
 * and over a short idle window right before the call: the judge may read busy CPU as work.
 */
import { randomUUID } from 'node:crypto';
import { availableParallelism } from 'node:os';
import type { CallResult } from '../../client/call-result.js';
import type { McpSession } from '../../client/mcp-session.js';
import { toTransportError, type TransportError } from '../../client/transport-error.js';
import { isRecord, type JsonRpcMessage } from '../../model/jsonrpc.js';
import type { Clock } from '../../util/clock.js';
import { StdioChannel } from '../../client/mcp-channel.js';
import { judgeCall, type CancelMechanism, type CancelObservation, type ProbeFinding } from '../results/cancel-stats.js';
import { sampleFromResult, sampleFromTransportError } from '../results/sample.js';
import type { CancelSpec } from '../scenario/scenario.js';
import type { CallRecord, PreparedCall } from './driver.js';
import { cpuMark, idleRate, type CpuMark } from './process-cpu.js';

const RUN = randomUUID().slice(0, 8);
let tokens = 0;
/** The idle window measured before each call on a stdio target (20 clock ticks). */
const IDLE_MS = 200;

/** Why the client ended the exchange. */
class ClientEnded extends Error {
  constructor(readonly why: 'client' | 'observe_end') {
    super(why === 'client' ? 'stream closed to cancel the call' : 'observation of the cancelled call ended');
  }
}

export function cancelMechanism(session: McpSession, spec: CancelSpec): CancelMechanism {
  if (session.channel.transport !== 'http') return 'notifications/cancelled';
  if (session.era === 'modern') return 'close';
  return spec.close ? 'notifications/cancelled+close' : 'notifications/cancelled';
}

export async function sendCancellableCall(
  session: McpSession,
  c: PreparedCall & { cancel: CancelSpec },
  intendedUs: number,
  clock: Clock,
): Promise<CallRecord> {
  const spec = c.cancel;
  const id = session.nextId();
  const token = `mcptap-cancel-${RUN}-${++tokens}`;
  const meta = isRecord(c.params?._meta) ? c.params._meta : {};
  const req = session.build(c.method, { ...(c.params ?? {}), _meta: { ...meta, progressToken: token } }, id);
  const mechanism = cancelMechanism(session, spec);
  const stream = new AbortController();
  let cancelUs: number | undefined;
  let progressBefore = 0;
  const progressAfterUs: number[] = [];
  let ended = false;
  let observeTimer: NodeJS.Timeout | undefined;
  // The CPU watch: the idle rate before the send, the process's CPU from the end of the grace.
  const cpuTarget = session.channel instanceof StdioChannel ? session.channel.client : undefined;
  const idle = cpuTarget ? await idleRate(cpuTarget, clock, IDLE_MS) : undefined;
  let cpuStart: CpuMark | undefined;
  let graceTimer: NodeJS.Timeout | undefined;

  const fire = (): void => {
    if (cancelUs !== undefined || ended) return;
    cancelUs = clock.nowUs();
    if (mechanism !== 'close') {
      const n = session.buildNotification('notifications/cancelled', { requestId: id, reason: 'mcptap load: cancel step' });
      session.notify(n).catch(() => undefined);
    }
    if (cpuTarget && idle !== undefined) graceTimer = setTimeout(() => (cpuStart = ended ? undefined : cpuMark(cpuTarget, clock)), spec.graceMs);
    if (mechanism === 'notifications/cancelled') observeTimer = setTimeout(() => stream.abort(new ClientEnded('observe_end')), spec.observeMs);
    else stream.abort(new ClientEnded('client'));
  };
  const onMessage = (m: JsonRpcMessage, t: number): void => {
    if (!('method' in m) || m.method !== 'notifications/progress' || !isRecord(m.params) || m.params.progressToken !== token) return;
    if (cancelUs === undefined) {
      if (++progressBefore >= (spec.afterProgress ?? Infinity)) fire();
    } else progressAfterUs.push(t - cancelUs);
  };
  const afterTimer = spec.afterMs !== undefined ? setTimeout(fire, spec.afterMs) : undefined;
  const labels = { step: c.step, method: c.method, tool: c.tool, intendedUs };
  const sentUs = clock.nowUs();
  let result: CallResult | undefined;
  let failure: TransportError | undefined;
  try {
    const sending = session.send(req, { headers: c.headers, signal: stream.signal, onMessage });
    // A script's own signal (already aborted: cancel right after the send).
    if (spec.signal?.aborted) fire();
    else spec.signal?.addEventListener('abort', fire, { once: true });
    result = await sending;
  } catch (err) {
    failure = toTransportError(err, c.method);
  }
  spec.signal?.removeEventListener('abort', fire);
  ended = true;
  const endUs = clock.nowUs();
  const cpuEnd = cpuTarget && cpuStart ? cpuMark(cpuTarget, clock) : undefined;
  clearTimeout(afterTimer);
  clearTimeout(observeTimer);
  clearTimeout(graceTimer);
  const sample = result ? sampleFromResult(labels, result) : sampleFromTransportError(labels, sentUs, endUs, failure!.errorClass);
  const responseUs = result?.timing.responseUs;
  const o: CancelObservation = {
    key: c.tool ?? c.step,
    mechanism,
    // A response that beat the cancel: a normal call.
    fired: cancelUs !== undefined && !(responseUs !== undefined && responseUs < cancelUs),
    progressBefore,
    progressAfterUs,
    streamEnd: 'server',
    streamEndAfterUs: 0,
  };
  if (!o.fired || cancelUs === undefined) {
    return { sample, ...(result?.response ? { response: result.response } : {}), ...(result ? { result } : {}), cancel: { observation: o } };
  }
  const reason = stream.signal.reason;
  o.streamEnd = reason instanceof ClientEnded ? reason.why : session.channel.transport === 'stdio' ? 'response' : 'server';
  o.streamEndAfterUs = Math.max(0, (o.streamEnd === 'client' ? cancelUs : endUs) - cancelUs);
  const res = result?.response;
  if (res && responseUs !== undefined) o.final = { kind: res.error ? 'error' : 'result', afterUs: responseUs - cancelUs };
  if (cpuStart && cpuEnd && idle !== undefined)
    o.cpu = {
      fromUs: cpuStart.us - cancelUs,
      toUs: cpuEnd.us - cancelUs,
      busyUs: cpuEnd.cpuUs - cpuStart.cpuUs,
      idleRate: idle,
      // Only this call in flight at the start, and nothing sent since.
      alone: cpuStart.inFlight === 1 && cpuEnd.sent === cpuStart.sent,
      cores: availableParallelism(),
    };
  // A probe looks at the work once the watch is over (a closed stream was watched by no one).
  if (spec.probe) await sleepUntil(clock, cancelUs + spec.observeMs * 1000);
  const next = await nextRequest(session, spec, token, cancelUs, clock);
  o.nextRequestUs = next.latencyUs;
  if (next.probe) o.probe = next.probe;
  const verdict = judgeCall(o, spec.graceMs);
  return { sample, ...(res ? { response: res } : {}), ...(result ? { result } : {}), cancel: { observation: o, verdict } };
}

function sleepUntil(clock: Clock, us: number): Promise<void> {
  const wait = (us - clock.nowUs()) / 1000;
  return wait > 0 ? new Promise((resolve) => setTimeout(resolve, wait)) : Promise.resolve();
}

/** The follow-up request: the probe about `token`'s work, or a ping / discover. */
async function nextRequest(
  session: McpSession,
  spec: CancelSpec,
  token: string,
  cancelUs: number,
  clock: Clock,
): Promise<{ latencyUs?: number; probe?: ProbeFinding }> {
  const [method, params] = spec.probe
    ? ['tools/call', { name: spec.probe, arguments: { progressToken: token } }]
    : session.era === 'modern'
      ? ['server/discover', {}]
      : ['ping', undefined];
  const t0 = clock.nowUs();
  try {
    const r = await session.request(method, params);
    const latencyUs = (r.timing.responseUs ?? r.timing.endUs) - r.timing.sentUs;
    if (!spec.probe) return { latencyUs };
    return { latencyUs, probe: readProbe(r, cancelUs, t0) };
  } catch (err) {
    if (!spec.probe) return {};
    return { probe: { found: false, running: false, askedAfterUs: t0 - cancelUs, error: (err as Error).message } };
  }
}

/**
 * The probe's answer (`structuredContent`, or JSON text): `{found, running, lastWorkAtMs,
 * endedAtMs, cancelSeenAtMs?}` in epoch ms, the reference server's `in-flight` shape. Server and client clocks are
 * compared: on one host they agree to about a millisecond.
 */
export function readProbe(r: CallResult, cancelUs: number, askedUs: number): ProbeFinding {
  const askedAfterUs = askedUs - cancelUs;
  const res = r.response;
  if (!res || res.error)
    return { found: false, running: false, askedAfterUs, error: res?.error ? `probe error ${res.error.code} ${res.error.message}` : 'probe: no answer' };
  const result = isRecord(res.result) ? res.result : {};
  let body: unknown = result.structuredContent;
  if (!isRecord(body) && Array.isArray(result.content)) {
    const text = (result.content as unknown[]).find((x): x is { text: string } => isRecord(x) && typeof x.text === 'string');
    try {
      body = text ? JSON.parse(text.text) : undefined;
    } catch {
      body = undefined;
    }
  }
  if (!isRecord(body) || body.found === false) return { found: false, running: false, askedAfterUs, error: 'probe: the server has no record of the call' };
  const at = (k: string) => (typeof body[k] === 'number' ? (body[k] as number) * 1000 - cancelUs : undefined);
  const f: ProbeFinding = { found: true, running: body.running === true, askedAfterUs };
  const last = at('lastWorkAtMs');
  const endedAt = at('endedAtMs');
  if (last !== undefined) f.lastWorkAfterUs = last;
  if (endedAt !== undefined) f.endedAfterUs = endedAt;
  const seen = at('cancelSeenAtMs');
  if (seen !== undefined) f.cancelSeenAfterUs = seen;
  return f;
}
