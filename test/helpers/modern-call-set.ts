/**
 * The call set the 2026-07-28 end-to-end tests drive with the SDK 2.x client against the reference
 * server (directly, through the stdio tap, or a mock of its recording): tools/list, an echo, a
 * progress-reporting call, a tool error, a JSON-RPC error and a prompt.
 */
import type { Client } from '@modelcontextprotocol/client';

/** `progressIntervalMs`: the gap between the progress tool's notifications. */
export async function modernCallSet(client: Client, progressIntervalMs = 10) {
  const progress: number[] = [];
  return {
    version: client.getNegotiatedProtocolVersion(),
    tools: await client.listTools(),
    echo: await client.callTool({ name: 'echo', arguments: { text: 'modern ✓' } }),
    progress: await client.callTool(
      { name: 'progress', arguments: { steps: 3, intervalMs: progressIntervalMs } },
      { onprogress: (p: { progress: number }) => progress.push(p.progress) },
    ),
    progressSeen: progress,
    fail: await client.callTool({ name: 'fail', arguments: { message: 'expected' } }),
    rpcError: await client.callTool({ name: 'rpc-error', arguments: { code: -32099 } }).then(
      () => 0,
      (e: { code: number }) => e.code,
    ),
    prompt: await client.getPrompt({ name: 'greet', arguments: { name: 'Bo' } }),
  };
}
