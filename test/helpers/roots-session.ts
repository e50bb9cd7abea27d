/**
 * A host that offers roots, as the SDK 1.x client does it: server-everything then registers
 * get-roots-list and asks the host for roots/list outside any request (over Streamable HTTP: on
 * the session's standalone GET stream, which the SDK client opens after initialized).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

export const ROOT_URI = 'file:///tmp/mcptap-roots-project';

/** tools/list, get-roots-list (its text names {@link ROOT_URI}), echo. Returns get-roots-list's text. */
export async function rootsSession(transport: StdioClientTransport | StreamableHTTPClientTransport): Promise<string> {
  const client = new Client({ name: 'mcptap-roots-host', version: '1.0.0' }, { capabilities: { roots: { listChanged: true } } });
  client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: ROOT_URI, name: 'project' }] }));
  await client.connect(transport);
  try {
    await client.listTools();
    const r = await client.callTool({ name: 'get-roots-list', arguments: {} });
    await client.callTool({ name: 'echo', arguments: { message: 'roots' } });
    return (r.content as { text: string }[])[0]!.text;
  } finally {
    if (transport instanceof StreamableHTTPClientTransport) await transport.terminateSession();
    await client.close();
  }
}
