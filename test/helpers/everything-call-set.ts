/**
 * The server-everything call set the OTel end-to-end tests drive through each tap: tools/list, an
 * echo carrying the caller's `_meta.traceparent`, a progress-reporting call, a call with bad
 * arguments (`isError`) and an unknown method (a JSON-RPC error).
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, EmptyResultSchema } from '@modelcontextprotocol/sdk/types.js';

export const CALLER_TRACE = '0af7651916cd43dd8448eb211c80319c';
export const CALLER_SPAN = 'b7ad6b7169203331';

/** Runs the call set; the progress values the client received are pushed to `progress`. */
export async function everythingCallSet(client: Client, progress: number[]): Promise<void> {
  await client.listTools();
  await client.callTool({ name: 'echo', arguments: { message: 'hi' }, _meta: { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` } });
  await client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } }, CallToolResultSchema, {
    onprogress: (p) => progress.push(p.progress),
  });
  await client.callTool({ name: 'get-sum', arguments: { a: 'not a number' } });
  await client.request({ method: 'no/such-method', params: {} }, EmptyResultSchema).catch(() => undefined);
}
