/**
 * A stdio-only real server (server-filesystem, server-memory) served over Streamable HTTP, as users
 * front such servers with a gateway: one HTTP session on the SDK 1.x StreamableHTTPServerTransport,
 * its messages passed unchanged to and from the server's stdio (SDK StdioClientTransport). The
 * server's own messages reach the wire; the HTTP framing (session id, SSE or JSON) is the SDK's.
 * Server-initiated messages go on the session's GET stream, as an McpServer's unrelated ones do.
 */
import { randomUUID } from 'node:crypto';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { listenLocal } from './http-peers.js';

export interface BridgedServer {
  url: string;
  stop(): Promise<void>;
}

/** Starts the server (`command`, with `env` added) and serves it at `/mcp` on a free loopback port. */
export async function bridgeOverHttp(command: string[], env: Record<string, string> = {}): Promise<BridgedServer> {
  const [cmd, ...args] = command;
  const stdio = new StdioClientTransport({ command: cmd!, args, env: { ...(process.env as Record<string, string>), ...env }, stderr: 'ignore' });
  const http = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID() });
  http.onmessage = (m: JSONRPCMessage) => void stdio.send(m);
  stdio.onmessage = (m: JSONRPCMessage) => void http.send(m).catch(() => undefined);
  await stdio.start();
  await http.start();
  const peer = await listenLocal((req, res) => void http.handleRequest(req, res));
  return {
    url: peer.url,
    stop: async () => {
      await http.close();
      await stdio.close();
      await peer.close();
    },
  };
}
