/**
 * A real MCP client (SDK 1.x Client over StdioClientTransport) whose server command is the built
 * `mcptap stdio` CLI wrapping a server: what a host does when mcptap is put in its MCP config.
 * The tap's stderr is collected so tests can read what it said (e.g. the Prometheus URL).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { MCPTAP } from './paths.js';
import { freeLoopbackPort } from '../../src/util/free-port.js';

export interface TappedClient {
  client: Client;
  transport: StdioClientTransport;
  /** Everything the tap (and the server, through it) wrote to stderr so far. */
  stderr(): string;
  /** Resolves with the first match of `re` in stderr; rejects after `timeoutMs`. */
  waitForStderr(re: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Closes the client; the tap exits when its server does. */
  close(): Promise<void>;
}

export async function connectThroughTap(tapFlags: string[], server: string[], env: Record<string, string> = {}): Promise<TappedClient> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MCPTAP, 'stdio', ...tapFlags, '--', ...server],
    env: { ...(process.env as Record<string, string>), ...env },
    stderr: 'pipe',
  });
  let text = '';
  const listeners = new Set<() => void>();
  transport.stderr?.on('data', (b: Buffer) => {
    text += b.toString('utf8');
    for (const l of listeners) l();
  });
  const client = new Client({ name: 'mcptap-test-host', version: '1.0.0' });
  await client.connect(transport);
  return {
    client,
    transport,
    stderr: () => text,
    waitForStderr: (re, timeoutMs = 10_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const m = re.exec(text);
          if (!m) return;
          listeners.delete(check);
          clearTimeout(timer);
          resolve(m);
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`tap stderr never matched ${re}: ${text}`));
        }, timeoutMs);
        listeners.add(check);
        check();
      }),
    close: () => client.close(),
  };
}

/** A port nothing listens on right now (bound to 127.0.0.1, then released). */
export const unusedPort = freeLoopbackPort;
