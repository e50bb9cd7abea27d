/**
 * A host that offers roots, as the SDK 1.x client does it: server-everything then registers
 * get-roots-list and asks the host for roots/list outside any request (over Streamable HTTP: on
 * the session's standalone GET stream, which the SDK client opens after initialized). And a
 * session recorded through `mcptap http` in front of server-everything, as the replay tests take them.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { startEverything } from './http-peers.js';
import { startHttpTapCli } from './http-tap-cli.js';

export const ROOT_URI = 'file:///tmp/mcptap-roots-project';

type HostTransport = StdioClientTransport | StreamableHTTPClientTransport;

/** tools/list, get-roots-list (its text names {@link ROOT_URI}), echo. Returns get-roots-list's text. */
export async function rootsSession(transport: HostTransport): Promise<string> {
  return withRootsHost(transport, async (client) => {
    await client.listTools();
    const r = await client.callTool({ name: 'get-roots-list', arguments: {} });
    await client.callTool({ name: 'echo', arguments: { message: 'roots' } });
    return (r.content as { text: string }[])[0]!.text;
  });
}

/** `session` run by a host that offers {@link ROOT_URI}; the session is ended (HTTP: terminated) after it. */
export async function withRootsHost<T>(transport: HostTransport, session: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ name: 'mcptap-roots-host', version: '1.0.0' }, { capabilities: { roots: { listChanged: true } } });
  client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: ROOT_URI, name: 'project' }] }));
  await client.connect(transport);
  try {
    return await session(client);
  } finally {
    if (transport instanceof StreamableHTTPClientTransport) await transport.terminateSession();
    await client.close();
  }
}

/** `session` through `mcptap http --record db` in front of server-everything (Streamable HTTP); both stopped after it. */
export async function recordOverHttp<T>(db: string, session: (transport: StreamableHTTPClientTransport) => Promise<T>): Promise<T> {
  const upstream = await startEverything('streamableHttp');
  try {
    const tap = await startHttpTapCli(upstream.url, ['--record', db]);
    const out = await session(new StreamableHTTPClientTransport(new URL(tap.url)));
    tap.child.kill('SIGTERM');
    await tap.exited;
    return out;
  } finally {
    await upstream.stop();
  }
}
