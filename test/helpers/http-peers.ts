/**
 * Real HTTP peers for the HTTP tap tests: server-everything (streamableHttp / sse) as a child
 * process on a free port, and the 2026-07-28 SDK server (createMcpHandler) in-process.
 * server-everything binds all interfaces: tests only ever talk to it on 127.0.0.1.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { startReferenceHttpServer, type ReferenceHttpServer } from '../../src/reference/reference-server.js';
import { BIN, MCPTAP } from './paths.js';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { startReferenceChild } from '../../bench/hostile-clients.js';
import { freeLoopbackPort } from '../../src/util/free-port.js';

export const freePort = freeLoopbackPort;

export interface ChildPeer {
  url: string;
  port: number;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** server-everything with the given transport; resolves when it listens (bounded: 20 s). */
export async function startEverything(transport: 'streamableHttp' | 'sse', port?: number): Promise<ChildPeer> {
  const p = port ?? (await freePort());
  const child = spawn(join(BIN, 'mcp-server-everything'), [transport], { env: { ...process.env, PORT: String(p) }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.resume();
  await new Promise<void>((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`server-everything ${transport} did not start: ${text}`)), 20_000);
    child.stderr!.on('data', (b: Buffer) => {
      text += b.toString();
      if (/listening on port|running on port/i.test(text)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server-everything exited (${code}): ${text}`));
    });
  });
  const path = transport === 'sse' ? '/sse' : '/mcp';
  return {
    url: `http://127.0.0.1:${p}${path}`,
    port: p,
    child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  };
}

export interface InProcessPeer {
  url: string;
  server: Server;
  close(): Promise<void>;
}

/** A node:http server on a free loopback port. */
export async function listenLocal(handler: Parameters<typeof createServer>[1], path = '/mcp'): Promise<InProcessPeer> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * The reference HTTP server for one test suite: started before its tests, closed after them.
 * Returns the running server (call it inside the tests).
 */
export function referenceServerPerSuite(): () => ReferenceHttpServer {
  let server: ReferenceHttpServer | undefined;
  beforeAll(async () => {
    server = await startReferenceHttpServer({ port: 0 });
  });
  afterAll(async () => {
    await server?.close();
  });
  return () => server!;
}

/** The request headers of a 2026-07-28 `tools/call` of `tool` over Streamable HTTP. */
export function modernToolCallHeaders(tool: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': 'tools/call',
    'mcp-name': tool,
  };
}

/** `mcptap reference --http` in a process of its own for one test suite (memory and fds measured in the test's process are the tap's). */
export function referenceChildPerSuite(): () => { url: string } {
  let ref: Awaited<ReturnType<typeof startReferenceChild>> | undefined;
  beforeAll(async () => {
    ref = await startReferenceChild(MCPTAP);
  });
  afterAll(async () => {
    await ref?.stop();
  });
  return () => ref!;
}

let gcFn: (() => void) | undefined;
/** Heap used plus Buffers, MiB, after full garbage collections (the flag is turned on the first time). */
export function heapAfterGcMiB(): number {
  if (!gcFn) {
    setFlagsFromString('--expose-gc');
    gcFn = runInNewContext('gc') as () => void;
  }
  gcFn();
  gcFn();
  const m = process.memoryUsage();
  return (m.heapUsed + m.arrayBuffers) / 2 ** 20;
}
