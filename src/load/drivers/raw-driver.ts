/**
 * Raw maximum-throughput mode on autocannon (HTTP JSON endpoints, closed phases only): the step mix
 * is prebuilt into one request cycle (arguments rendered once per slot of the smooth round-robin
 * sequence), each request gets a unique JSON-RPC id from autocannon's `[<id>]` replacement, and
 * every answer is still classified per layer (HTTP status, JSON-RPC code, isError).
 *
 * Caveat, by design: autocannon is a closed-loop tool and times from the moment it wrote a request,
 * so its latency does not include waits the server imposed on requests it never sent (coordinated
 * omission). Use open phases with the regular driver for honest latency.
 */
import autocannon from 'autocannon';
import { McptapError } from '../../errors.js';
import type { CallResult } from '../../client/call-result.js';
import { detectEra } from '../../client/detect-era.js';
import { HttpChannel } from '../../client/mcp-channel.js';
import { mcpHeaders, applyHeaderOverrides } from '../../client/mcp-request.js';
import { McpSession } from '../../client/mcp-session.js';
import { classifyNetworkError, TransportError } from '../../client/transport-error.js';
import { classifyMessage, type JsonRpcResponse } from '../../model/jsonrpc.js';
import { SseDecoder } from '../../parse/sse-decoder.js';
import type { Clock } from '../../util/clock.js';
import type { ShardSpec } from '../executors/iteration.js';
import { prepared } from '../run/iteration-runner.js';
import type { LoadMetrics } from '../results/metrics.js';
import { iterationRandom, SALT } from '../scenario/random.js';
import { sampleFromResult, sampleFromTransportError } from '../results/sample.js';
import type { ClosedPhase, Scenario } from '../scenario/scenario.js';
import { smoothRoundRobin } from '../scenario/step-mix.js';

export interface RawRunOptions {
  url: string;
  headers: Record<string, string>;
  shard: ShardSpec;
  metrics: LoadMetrics;
  clock: Clock;
  signal?: AbortSignal;
}

const ID = '[<id>]';

/** Runs every (closed) phase of the scenario on autocannon. Returns the era used. */
export async function runRawPhases(s: Scenario, o: RawRunOptions): Promise<'legacy' | 'modern'> {
  // autocannon's timeout is in seconds, at least 1: a shorter one would be rounded up unseen.
  if (s.timeoutMs < 1000)
    throw new McptapError(
      'MCPTAP_LOAD_RAW_TIMEOUT',
      `the raw driver (autocannon) times requests out after 1 s at the least; the scenario's timeout is ${s.timeoutMs} ms (use the default driver for shorter timeouts)`,
    );
  const channel = new HttpChannel({ url: o.url, headers: o.headers, timeoutMs: s.timeoutMs, clock: o.clock });
  try {
    const session = await openSession(s, channel, o.url);
    const requests = buildRequests(s, session, o);
    for (const phase of s.phases) {
      if (o.signal?.aborted) break;
      await runPhase(phase as ClosedPhase, requests, s, o);
    }
    await session.close();
    return session.era;
  } finally {
    await channel.close();
  }
}

async function openSession(s: Scenario, channel: HttpChannel, url: string): Promise<McpSession> {
  try {
    let era = s.era === 'modern' ? 'modern' : 'legacy';
    let version = s.protocolVersion;
    if (s.era === 'detect') ({ era, protocolVersion: version } = await detectEra(channel, { timeoutMs: s.timeoutMs }));
    const session = new McpSession(channel, { era: era as 'legacy' | 'modern', protocolVersion: version, timeoutMs: s.timeoutMs });
    if (era === 'legacy') {
      await session.initialize();
      if (!session.isInitialized) throw new McptapError('MCPTAP_LOAD_TARGET_REFUSED', `${url} refused the initialize handshake`);
    } else if (s.era === 'modern') {
      // Declared, not detected: one discover still says whether the target can be reached (any answer will do).
      await session.request('server/discover', {});
    }
    return session;
  } catch (err) {
    if (err instanceof TransportError)
      throw new McptapError('MCPTAP_LOAD_TARGET_UNREACHABLE', `cannot reach the target ${url}: ${err.errorClass.replace('_', ' ')}`);
    throw err;
  }
}

interface RawRequest {
  request: autocannon.Request;
  step: string;
  method: string;
  tool?: string;
}

function buildRequests(s: Scenario, session: McpSession, o: RawRunOptions): RawRequest[] {
  const url = new URL(o.url);
  const order = smoothRoundRobin(s.steps.map((st) => st.weight));
  return order.map((k, slot) => {
    const step = s.steps[k]!;
    const params = step.params.render({ vu: 0, iteration: slot, phase: 'raw', rows: {}, random: iterationRandom(s.seed, 0, slot, SALT.template) });
    const c = prepared(step, params as Record<string, unknown> | undefined);
    const req = session.build(c.method, c.params, ID);
    const base = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...o.headers,
      ...mcpHeaders(c.method, req.params, session.headerContext),
    };
    const headers = applyHeaderOverrides(base, c.headers);
    const r: RawRequest = { request: { method: 'POST', path: url.pathname + url.search, headers, body: JSON.stringify(req) }, step: c.step, method: c.method };
    if (c.tool) r.tool = c.tool;
    return r;
  });
}

async function runPhase(phase: ClosedPhase, requests: RawRequest[], s: Scenario, o: RawRunOptions): Promise<void> {
  const connections = Math.max(1, Math.round(phase.vus / o.shard.count));
  const stats = o.metrics.beginPhase({ name: phase.name, kind: 'closed', plannedDurationMs: phase.durationMs, startUs: o.clock.nowUs() });
  // autocannon calls onResponse just before its 'response' event, on the same client: the
  // client's context object links the classified body to the timing that follows.
  const last = new WeakMap<object, { r: RawRequest; result: Omit<CallResult, 'timing'> }>();
  const reqs = requests.map((r) => ({
    ...r.request,
    onResponse: (status: number, body: string, context: object, headers: Record<string, string>) =>
      last.set(context, { r, result: classify(status, body, headers) }),
  }));
  let finished!: () => void;
  const done = new Promise<void>((resolve) => (finished = resolve));
  const instance = autocannon(
    {
      url: o.url,
      connections,
      requests: reqs as autocannon.Request[],
      idReplacement: true,
      timeout: s.timeoutMs / 1000,
      ...(phase.iterations !== undefined ? { amount: phase.iterations * connections } : { duration: (phase.durationMs ?? 10_000) / 1000 }),
      ...(phase.rate !== undefined ? { overallRate: Math.max(1, Math.round(phase.rate / o.shard.count)) } : {}),
    },
    () => finished(),
  );
  o.signal?.addEventListener('abort', () => instance.stop(), { once: true });
  instance.on('response', (client, _status, _bytes, responseTimeMs) => {
    const endUs = o.clock.nowUs();
    const ctx = (client as unknown as { requestIterator?: { context: object } }).requestIterator?.context;
    const hit = ctx ? last.get(ctx) : undefined;
    if (!hit) return;
    const sentUs = endUs - Math.round(responseTimeMs * 1000);
    stats.started++;
    stats.completed++;
    const labels = { step: hit.r.step, method: hit.r.method, tool: hit.r.tool, intendedUs: sentUs };
    o.metrics.record(sampleFromResult(labels, { ...hit.result, timing: { sentUs, endUs } }));
  });
  instance.on('reqError', (err: unknown) => {
    const now = o.clock.nowUs();
    stats.started++;
    stats.completed++;
    // autocannon says which request failed only for answers: a failure is the run's '(raw)'. A
    // timeout waited the whole timeout (not 0 us, which pulled the percentiles down).
    const timedOut = (err as Error | undefined)?.message === AUTOCANNON_TIMEOUT;
    const sentUs = timedOut ? now - s.timeoutMs * 1000 : now;
    o.metrics.record(
      sampleFromTransportError({ step: '(raw)', method: '(raw)', intendedUs: sentUs }, sentUs, now, timedOut ? 'timeout' : classifyNetworkError(err)),
    );
  });
  await done;
  stats.scheduled = phase.iterations !== undefined ? phase.iterations * connections : stats.started;
  stats.endUs = o.clock.nowUs();
}

/** The error autocannon emits for a request that timed out (lib/run.js). */
const AUTOCANNON_TIMEOUT = 'request timed out';

/** Classify one answer (JSON or SSE body) like the regular driver does. */
export function classify(status: number, body: string, headers: Record<string, string>): Omit<CallResult, 'timing'> {
  const ct = Object.entries(headers).find(([k]) => k.toLowerCase() === 'content-type')?.[1] ?? '';
  const texts = ct.startsWith('text/event-stream') ? sseData(body) : body ? [body] : [];
  let response: JsonRpcResponse | undefined;
  const violations: CallResult['violations'] = [];
  for (const t of texts) {
    try {
      const v = JSON.parse(t) as unknown;
      for (const m of Array.isArray(v) ? v : [v]) if (!response && classifyMessage(m) === 'response') response = m as JsonRpcResponse;
    } catch {
      if (status < 400) violations.push('bad_json');
    }
  }
  const r: Omit<CallResult, 'timing'> = { messages: [], httpStatus: status, violations, contentType: ct.startsWith('text/event-stream') ? 'sse' : 'json' };
  if (response) r.response = response;
  else if (status < 400) violations.push('no_response');
  return r;
}

function sseData(body: string): string[] {
  const d = new SseDecoder();
  return [...d.push(Buffer.from(body, 'utf8')), ...d.end()].map((e) => e.data).filter((x) => x !== '');
}
