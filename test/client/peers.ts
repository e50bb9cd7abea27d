/**
 * Real peers for client and load tests: server-everything over Streamable HTTP (legacy era) and
 * stdio, and a 2026-07-28 server built with the MCP SDK's createMcpHandler. Loopback only.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as z from 'zod';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { freeLoopbackPort } from '../../src/util/free-port.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const EVERYTHING_BIN = path.join(ROOT, 'node_modules/.bin/mcp-server-everything');

export const freePort = freeLoopbackPort;

export interface RunningPeer {
  url: string;
  close(): Promise<void>;
}

/** server-everything `streamableHttp` on a free port; resolves once it listens (bounded: 15 s). */
export async function startEverythingHttp(): Promise<RunningPeer & { child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(EVERYTHING_BIN, ['streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('server-everything did not start within 15 s')), 15_000);
    const onData = (b: Buffer) => {
      if (/listening on port/i.test(b.toString())) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server-everything exited early (${code})`)));
  });
  return {
    child,
    url: `http://127.0.0.1:${port}/mcp`,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** A 2026-07-28 server (MCP SDK createMcpHandler) with echo / fail / rpc-fail tools, in process. */
export async function startModernSdkServer(): Promise<RunningPeer> {
  const factory = () => {
    const s = new McpServer({ name: 'modern-test', version: '1.0.0' });
    s.registerTool('echo', { inputSchema: z.object({ text: z.string() }) }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
    s.registerTool('fail', { inputSchema: z.object({}) }, async () => ({ content: [{ type: 'text', text: 'failed' }], isError: true }));
    s.registerTool('progress', { inputSchema: z.object({ steps: z.number() }) }, async ({ steps }, ctx) => {
      const token = ctx.mcpReq._meta?.progressToken;
      for (let i = 1; i <= steps; i++) {
        await new Promise((r) => setTimeout(r, 5));
        if (token !== undefined) {
          await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: steps } });
        }
      }
      return { content: [{ type: 'text', text: `done ${steps}` }] };
    });
    return s;
  };
  const handler = createMcpHandler(factory);
  const node = toNodeHandler(handler);
  const server = http.createServer((req, res) => void node(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: async () => {
      await handler.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
