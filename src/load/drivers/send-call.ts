/** Sending one prepared call on a session and turning what happened into a {@link CallRecord}. */
import { toTransportError } from '../../client/transport-error.js';
import type { McpSession } from '../../client/mcp-session.js';
import type { Clock } from '../../util/clock.js';
import { isRecord } from '../../model/jsonrpc.js';
import { sampleFromResult, sampleFromTransportError, type Sample } from '../results/sample.js';
import { sendCancellableCall } from './cancel-call.js';
import type { CallRecord, PreparedCall, StreamHold } from './driver.js';
import type { BuiltRequest, RequestShapes } from './request-shapes.js';
import type { CallResult } from '../../client/call-result.js';
import type { NameList } from '../run/preflight.js';

/**
 * Puts a built request on the wire of a driver; resolves with the answer, rejects on a transport
 * failure. `sentUs`: the clock read just before (a driver may take it as its send time).
 */
export type SendBuilt = (b: BuiltRequest, id: number, sentUs: number) => Promise<CallResult>;

/** One call: built by `shapes` (once per step where it can be), sent by the driver's `send`. */
export async function sendCall(
  session: McpSession,
  shapes: RequestShapes,
  send: SendBuilt,
  c: PreparedCall,
  intendedUs: number,
  clock: Clock,
): Promise<CallRecord> {
  if (c.cancel) return sendCancellableCall(session, { ...c, cancel: c.cancel }, intendedUs, clock);
  const id = session.nextId() as number;
  const b = shapes.build(session, c, id);
  const labels = { step: c.step, method: c.method, tool: c.tool, intendedUs };
  const sentUs = clock.nowUs();
  try {
    const r = await send(b, id, sentUs);
    return { sample: sampleFromResult(labels, r), response: r.response, result: r };
  } catch (err) {
    const te = toTransportError(err, c.method);
    return { sample: sampleFromTransportError(labels, sentUs, clock.nowUs(), te.errorClass) };
  }
}

/**
 * A `listen` step's stream: `subscriptions/listen` (modern), or the session's own stream (legacy:
 * the GET stream over HTTP, the process's unsolicited notifications on stdio), held until `hold.stop`. Stopping it is the normal end (`held`); an answer or failure before
 * that is recorded as a sample of the step.
 */
export async function holdStream(
  session: McpSession,
  c: PreparedCall,
  intendedUs: number,
  clock: Clock,
  hold: StreamHold,
): Promise<{ held: boolean; rec?: CallRecord }> {
  const legacyStream = session.channel.transport === 'stdio' ? 'stdout stream' : 'GET stream';
  const labels = { step: c.step, method: session.era === 'modern' ? c.method : legacyStream, intendedUs };
  const sentUs = clock.nowUs();
  const opts = { signal: hold.stop, timeoutMs: hold.maxMs, onMessage: hold.onMessage, onHeaders: hold.onHeaders };
  try {
    const stream = session.channel.stream;
    let r;
    if (session.era === 'modern') r = await session.send(session.build(c.method, c.params), opts);
    else if (stream) r = await stream.call(session.channel, session.headerContext, opts);
    else return { held: false };
    return { held: false, rec: { sample: sampleFromResult(labels, r), response: r.response, result: r } };
  } catch (err) {
    if (hold.stop.aborted) return { held: true };
    return { held: false, rec: { sample: sampleFromTransportError(labels, sentUs, clock.nowUs(), toTransportError(err, labels.method).errorClass) } };
  }
}

/** The `initialize` handshake of a legacy session, recorded as a sample of step `(session)`. */
export async function openLegacySession(
  session: McpSession,
  intendedUs: number,
  clock: Clock,
  record: (s: Sample) => void,
  timeoutMs?: number,
): Promise<boolean> {
  const labels = { step: '(session)', method: 'initialize', intendedUs };
  const sentUs = clock.nowUs();
  try {
    const r = await session.initialize(timeoutMs !== undefined ? { timeoutMs } : {});
    record(sampleFromResult(labels, r));
  } catch (err) {
    record(sampleFromTransportError(labels, sentUs, clock.nowUs(), toTransportError(err, 'initialize').errorClass));
  }
  return session.isInitialized;
}

const LISTS: Record<NameList, { method: string; key: string; field: string }> = {
  tools: { method: 'tools/list', key: 'tools', field: 'name' },
  prompts: { method: 'prompts/list', key: 'prompts', field: 'name' },
  resources: { method: 'resources/list', key: 'resources', field: 'uri' },
  resourceTemplates: { method: 'resources/templates/list', key: 'resourceTemplates', field: 'uriTemplate' },
};

/** Each list asked for, every page; a list the server answers with an error is left out. */
export async function listNames(session: McpSession, lists: readonly NameList[]): Promise<Partial<Record<NameList, string[]>>> {
  const out: Partial<Record<NameList, string[]>> = {};
  for (const l of lists) {
    const names = await listPages(session, LISTS[l]);
    if (names) out[l] = names;
  }
  return out;
}

/** Every page of one list (at most 50), as names; undefined when the server answers with an error. */
async function listPages(session: McpSession, { method, key, field }: (typeof LISTS)[NameList]): Promise<string[] | undefined> {
  const names: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 50; page++) {
    const r = await session.request(method, cursor === undefined ? {} : { cursor });
    const result = r.response?.result;
    if (!isRecord(result) || !Array.isArray(result[key])) return undefined;
    for (const t of result[key]) if (isRecord(t) && typeof t[field] === 'string') names.push(t[field]);
    if (typeof result.nextCursor !== 'string' || result.nextCursor === '') return names;
    cursor = result.nextCursor;
  }
  return names;
}
