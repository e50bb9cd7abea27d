/**
 * Answers to the new server's own requests (sampling, elicitation, roots/list, ping) during a
 * replay, taken from the recording: the recorded client's answers to the same method, in recorded
 * order (the last one is reused when the new server asks more often). A method the recording never
 * answered gets a JSON-RPC error and is reported; `ping` is always answered (liveness, not behaviour).
 */
import type { JsonRpcRequest, JsonRpcResponse } from '../model/jsonrpc.js';
import type { StoredExchange } from '../store/types.js';

export interface ServerAnswer {
  response: JsonRpcResponse;
  /** False when the recording had no answer for this method (the caller reports it). */
  fromRecording: boolean;
}

export class ServerAnswers {
  private readonly byMethod = new Map<string, JsonRpcResponse[]>();
  private readonly used = new Map<string, number>();

  /** `recorded`: the recording's server-to-client exchanges (others are ignored). */
  constructor(recorded: readonly StoredExchange[]) {
    for (const ex of [...recorded].sort((a, b) => a.startUs - b.startUs)) {
      if (ex.direction !== 's2c' || ex.response === undefined || ex.method === '') continue;
      const list = this.byMethod.get(ex.method) ?? [];
      list.push(ex.response as JsonRpcResponse);
      this.byMethod.set(ex.method, list);
    }
  }

  answer(req: JsonRpcRequest): ServerAnswer {
    const list = this.byMethod.get(req.method);
    if (list && list.length > 0) {
      const n = this.used.get(req.method) ?? 0;
      this.used.set(req.method, n + 1);
      const recorded = list[Math.min(n, list.length - 1)]!;
      return { response: { ...recorded, jsonrpc: '2.0', id: req.id }, fromRecording: true };
    }
    if (req.method === 'ping') return { response: { jsonrpc: '2.0', id: req.id, result: {} }, fromRecording: true };
    return {
      response: { jsonrpc: '2.0', id: req.id, error: { code: -32601, message: `the recording has no answer for ${req.method}` } },
      fromRecording: false,
    };
  }
}
