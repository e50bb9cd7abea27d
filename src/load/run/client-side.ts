/**
 * What a load session says about its client: the capabilities it declares (the scenario's
 * `clientCapabilities`, else those of the recorded session of `from:`), and how it answers the
 * server's own requests (roots/list, sampling, elicitation): with the recorded client's answers
 * for `from:`, else `roots/list` with no roots; other methods get -32601, `ping` an empty result.
 * A server offers some tools only to clients with roots, sampling or elicitation.
 */
import type { JsonRpcRequest, JsonRpcResponse } from '../../model/jsonrpc.js';
import { ServerAnswers } from '../../replay/server-answers.js';
import type { StoredExchange } from '../../store/types.js';

export interface ClientSide {
  capabilities: Record<string, unknown>;
  /** The answer to a request the server sent. */
  answer(req: JsonRpcRequest): JsonRpcResponse;
}

/** `declared`: the scenario's `clientCapabilities`; `recorded`: what `from:`'s recording holds. */
export function clientSide(
  declared: Record<string, unknown> | undefined,
  recorded?: { clientCapabilities?: Record<string, unknown>; serverRequests: readonly StoredExchange[] },
): ClientSide | undefined {
  const capabilities = declared ?? recorded?.clientCapabilities;
  if (capabilities === undefined || Object.keys(capabilities).length === 0) return undefined;
  const answers = new ServerAnswers(recorded?.serverRequests ?? []);
  return {
    capabilities,
    answer: (req) => {
      const a = answers.answer(req);
      if (a.fromRecording || req.method !== 'roots/list') return a.response;
      return { jsonrpc: '2.0', id: req.id, result: { roots: [] } };
    },
  };
}
