/**
 * Outcome classes of an exchange. The three failure layers of MCP (transport, JSON-RPC, tool) are
 * never folded together: a tool that fails with `isError: true` is a `tool_error`, not `ok`.
 */
export const OUTCOMES = ['ok', 'jsonrpc_error', 'tool_error', 'transport_error', 'cancelled', 'unanswered', 'orphan_response'] as const;

export type Outcome = (typeof OUTCOMES)[number];

export function isFailure(o: Outcome): boolean {
  return o !== 'ok';
}
