/**
 * What the replay tests share: the recorded server-everything session (SDK 1.x client) on any
 * transport, and running the built CLI.
 */
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateMessageRequestSchema, EmptyResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { BIN, MCPTAP } from '../helpers/paths.js';

export const EVERYTHING = join(BIN, 'mcp-server-everything');

/** The exchanges of {@link everythingSession}, by tool or method. */
export const RECORDED = ['initialize', 'tools/list', 'echo', 'get-sum', 'get-tiny-image', 'trigger-long-running-operation', 'get-sum', 'no/such-method'];

export function stdioTransport(args: string[]): StdioClientTransport {
  return new StdioClientTransport({ command: process.execPath, args, stderr: 'pipe' });
}

/** The recorded session: list, echo, sum, image, progress, bad arguments (isError), unknown method. */
export async function everythingSession(transport: StdioClientTransport | StreamableHTTPClientTransport): Promise<void> {
  const client = new Client({ name: 'mcptap-replay-e2e', version: '1.0.0' });
  await client.connect(transport);
  try {
    await client.listTools();
    await client.callTool({ name: 'echo', arguments: { message: 'héllo' } });
    await client.callTool({ name: 'get-sum', arguments: { a: 2, b: 40 } });
    await client.callTool({ name: 'get-tiny-image', arguments: {} });
    await client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } }, CallToolResultSchema, { onprogress: () => {} });
    await client.callTool({ name: 'get-sum', arguments: { a: 'not a number' } });
    await client.request({ method: 'no/such-method', params: {} }, EmptyResultSchema).catch(() => undefined);
  } finally {
    if (transport instanceof StreamableHTTPClientTransport) await transport.terminateSession();
    await client.close();
  }
}

/**
 * A host that supports sampling, recorded through `mcptap stdio`: server-everything then offers
 * trigger-sampling-request, which asks the host for a sampling/createMessage during the call.
 */
export async function samplingSession(db: string): Promise<void> {
  const client = new Client({ name: 'mcptap-replay-sampling', version: '1.0.0' }, { capabilities: { sampling: {} } });
  client.setRequestHandler(CreateMessageRequestSchema, async () => ({
    role: 'assistant',
    content: { type: 'text', text: 'a fixed answer' },
    model: 'test-model',
  }));
  await client.connect(stdioTransport([MCPTAP, 'stdio', '--record', db, '--', EVERYTHING, 'stdio']));
  try {
    await client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'hello', maxTokens: 5 } });
  } finally {
    await client.close();
  }
}

export { runCli as mcptap, type CliRun } from '../helpers/run-cli.js';
