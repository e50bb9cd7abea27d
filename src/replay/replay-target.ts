/**
 * The server a replay drives, reached through the same client as the load engine (src/client/):
 * Streamable HTTP (one keep-alive pool shared by every replay session) or stdio (one child process
 * per replay session, as each recorded stdio connection was its own process).
 */
import { HttpChannel, McpHttpClient, McpStdioClient, StdioChannel, type HeaderContext, type McpChannel } from '../client/index.js';
import { mcpHeaders } from '../client/mcp-request.js';
import { TransportError } from '../client/transport-error.js';
import type { JsonRpcRequest, JsonRpcResponse } from '../model/jsonrpc.js';
import { McptapError } from '../errors.js';

export type TargetSpec =
  | { transport: 'http'; url: string; headers?: Record<string, string>; timeoutMs: number }
  | { transport: 'stdio'; command: string; args: string[]; timeoutMs: number };

/** One replay session's way to the server. */
export interface TargetConnection {
  readonly channel: McpChannel;
  /** Sends the answer to a server-to-client request (HTTP: a POST; stdio: a line). */
  respond(res: JsonRpcResponse, ctx: HeaderContext): Promise<void>;
  /** Why the connection is gone (stdio: the process exited), or undefined. */
  goneReason(): string | undefined;
}

export interface ReplayTarget {
  readonly transport: 'http' | 'stdio';
  /** The URL or command line, for reports. */
  readonly label: string;
  /** `answer`: what to reply to a server request arriving outside any request's stream (stdio). */
  connect(answer: (req: JsonRpcRequest) => JsonRpcResponse): Promise<TargetConnection>;
  /** Ends the sessions; a stdio server still running `graceMs` after its stdin closed is signalled. */
  close(graceMs?: number): Promise<void>;
  /** At once, before the process exits: SIGKILL to the servers it started (stdio). */
  kill(): void;
}

export function openTarget(spec: TargetSpec): ReplayTarget {
  return spec.transport === 'http' ? httpTarget(spec) : stdioTarget(spec);
}

function httpTarget(spec: Extract<TargetSpec, { transport: 'http' }>): ReplayTarget {
  const client = new McpHttpClient({ url: spec.url, timeoutMs: spec.timeoutMs, connections: 16, ...(spec.headers ? { headers: spec.headers } : {}) });
  const channel = new HttpChannel(client);
  const conn: TargetConnection = {
    channel,
    respond: async (res, ctx) => {
      await client.post(res, { headers: mcpHeaders('', undefined, ctx), expectId: null });
    },
    goneReason: () => undefined,
  };
  return { transport: 'http', label: spec.url, connect: async () => conn, close: () => client.close(), kill: () => undefined };
}

function stdioTarget(spec: Extract<TargetSpec, { transport: 'stdio' }>): ReplayTarget {
  const clients: McpStdioClient[] = [];
  const label = [spec.command, ...spec.args].join(' ');
  return {
    transport: 'stdio',
    label,
    async connect(answer) {
      let client: McpStdioClient;
      try {
        client = await McpStdioClient.spawn({
          command: spec.command,
          args: spec.args,
          timeoutMs: spec.timeoutMs,
          onServerRequest: answer,
        });
      } catch (err) {
        const why = err instanceof TransportError ? err.message : String(err);
        throw new McptapError('MCPTAP_REPLAY_TARGET_UNAVAILABLE', why);
      }
      clients.push(client);
      return {
        channel: new StdioChannel(client),
        respond: async (res) => client.send(res),
        goneReason: () => {
          const r = client.exitedReason;
          if (r === undefined) return undefined;
          const last = client.lastStderrLine;
          return last ? `${r}; its stderr ended with: ${last}` : r;
        },
      };
    },
    close: async (graceMs) => {
      await Promise.all(clients.map((c) => c.close(graceMs)));
    },
    kill: () => clients.forEach((c) => c.kill('SIGKILL')),
  };
}
