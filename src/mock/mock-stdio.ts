/**
 * The mock on stdio: newline-delimited JSON-RPC in on `input`, only JSON-RPC out on `output`
 * (nothing else is ever written there). Requests are answered concurrently, each on its own plan;
 * `notifications/cancelled` stops a plan; other notifications and responses are taken and dropped.
 * Resolves when the input ends and every answer in flight went out.
 */
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { classifyMessage, idKey, isRecord, type JsonRpcMessage, type JsonRpcRequest } from '../model/jsonrpc.js';
import type { MockResponder } from './mock-responder.js';
import { playPlan } from './play-plan.js';
import type { MissForwarder } from './miss-forwarder.js';

export interface MockStdioOptions {
  responder: MockResponder;
  input: Readable;
  output: Writable;
  /** Misses go here instead of being answered with an error (`--on-miss passthrough`). */
  forwarder?: MissForwarder;
}

export async function serveMockStdio(opts: MockStdioOptions): Promise<void> {
  const inFlight = new Map<string, AbortController>();
  const running = new Set<Promise<void>>();
  const send = (m: JsonRpcMessage) => void opts.output.write(`${JSON.stringify(m)}\n`);
  const lines = createInterface({ input: opts.input, crlfDelay: Infinity });
  // The input's end releases held requests: nobody is left to cancel them.
  const ended = new AbortController();

  const onRequest = (request: JsonRpcRequest) => {
    const startMs = performance.now();
    const abort = new AbortController();
    const id = idKey(request.id);
    inFlight.set(id, abort);
    const task = answer(request, opts, send, startMs, abort.signal, ended.signal).finally(() => {
      if (inFlight.get(id) === abort) inFlight.delete(id);
      running.delete(task);
    });
    running.add(task);
  };

  for await (const line of lines) {
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line) as unknown;
    } catch {
      send({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'mcptap mock: parse error: a line that is not JSON' } });
      continue;
    }
    for (const m of Array.isArray(value) ? value : [value]) {
      const kind = classifyMessage(m);
      if (kind === 'request') onRequest(m as JsonRpcRequest);
      else if (kind === 'notification') cancelled(m as JsonRpcMessage, inFlight);
      else if (kind === 'malformed') send({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'mcptap mock: not a JSON-RPC message' } });
    }
  }
  ended.abort();
  while (running.size > 0) await Promise.allSettled([...running]);
}

async function answer(
  request: JsonRpcRequest,
  opts: MockStdioOptions,
  send: (m: JsonRpcMessage) => void,
  startMs: number,
  signal: AbortSignal,
  ended: AbortSignal,
) {
  const plan = opts.responder.answer(request);
  if (plan.outcome === 'miss' && opts.forwarder) {
    opts.responder.stats.passedThrough++;
    await opts.forwarder.forward(request, send, { session: 'stdio', signal });
    return;
  }
  if (plan.hold) await playPlan(plan.messages, send, { startMs, signal: AbortSignal.any([signal, ended]), hold: true });
  else await playPlan(plan.messages, send, { startMs, signal });
}

function cancelled(m: JsonRpcMessage, inFlight: Map<string, AbortController>): void {
  if (!('method' in m) || m.method !== 'notifications/cancelled' || !isRecord(m.params)) return;
  const id = m.params.requestId;
  if (typeof id === 'string' || typeof id === 'number') inFlight.get(idKey(id))?.abort();
}
