/**
 * Hostile HTTP clients over raw sockets (node:net, loopback only), for the tap's hostile-input tests (test/tap/http-hostile.test.ts)
 * and `npm run bench -- hostile`: slowloris connections that send a byte a second, a client that
 * never reads its responses, and one raw exchange that returns whatever came back. Every loop is
 * bounded in count and time; every socket is destroyed by `stop()`.
 */
import { connect, type Socket } from 'node:net';
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';

/** A modern `tools/call` POST of `tool` as raw bytes (Content-Length framed). */
export function rawToolCall(host: string, path: string, id: number | string, tool: string, args: Record<string, unknown>): Buffer {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: {
      name: tool,
      arguments: args,
      _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} },
    },
  });
  const head = [
    `POST ${path} HTTP/1.1`,
    `Host: ${host}`,
    'Content-Type: application/json',
    'Accept: application/json, text/event-stream',
    'MCP-Protocol-Version: 2026-07-28',
    'Mcp-Method: tools/call',
    `Mcp-Name: ${tool}`,
    `Content-Length: ${Buffer.byteLength(body)}`,
  ];
  return Buffer.from(`${head.join('\r\n')}\r\n\r\n${body}`);
}

/** Writes `bytes` on a fresh connection and collects what comes back until the tap closes it or `timeoutMs` passes. */
export function rawExchange(url: string, bytes: Buffer | string, timeoutMs = 5000): Promise<{ text: string; closedByPeer: boolean }> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    const s = connect(Number(u.port), u.hostname);
    const timer = setTimeout(() => {
      s.destroy();
      resolve({ text: Buffer.concat(parts).toString('latin1'), closedByPeer: false });
    }, timeoutMs);
    s.on('data', (b: Buffer) => parts.push(b));
    s.on('error', () => undefined);
    s.on('close', () => {
      clearTimeout(timer);
      resolve({ text: Buffer.concat(parts).toString('latin1'), closedByPeer: true });
    });
    s.write(bytes);
  });
}

export interface Slowloris {
  /** Connections still open (the tap has not closed them). */
  open(): number;
  /** Connections the tap answered 408 before closing. */
  answered408(): number;
  stop(): void;
}

/**
 * `n` connections that each send a request head one byte a second (never finishing it). Opened in
 * batches so that the listen backlog is never the limit; resolves once all are connected.
 */
export async function slowloris(url: string, n: number, opts: { reconnect?: boolean } = {}): Promise<Slowloris> {
  const u = new URL(url);
  const head = Buffer.from(`POST ${u.pathname} HTTP/1.1\r\nHost: ${u.host}\r\nContent-Type: application/json\r\nX-Slow: ${'s'.repeat(4096)}`);
  const sockets: Socket[] = [];
  const closed = new Set<Socket>();
  const got408 = new Set<Socket>();
  let sent = 0;
  let stopped = false;
  // With `reconnect`, a connection the tap closed is replaced (an attacker keeps up the pressure).
  const open = (): Promise<void> => {
    const s = connect(Number(u.port), u.hostname);
    sockets.push(s);
    s.on('error', () => undefined);
    s.on('data', (b: Buffer) => {
      if (b.toString('latin1').startsWith('HTTP/1.1 408')) got408.add(s);
    });
    s.on('close', () => {
      closed.add(s);
      if (opts.reconnect && !stopped) void open();
    });
    return new Promise<void>((resolve) => {
      s.once('connect', resolve);
      s.once('close', resolve);
    });
  };
  for (let i = 0; i < n; i += 100) await Promise.all(Array.from({ length: Math.min(100, n - i) }, open));
  const tick = () => {
    const b = head.subarray(sent % head.length, (sent % head.length) + 1);
    sent++;
    for (const s of sockets) if (!closed.has(s)) s.write(b);
  };
  tick();
  const timer = setInterval(tick, 1000);
  return {
    open: () => sockets.length - closed.size,
    answered408: () => got408.size,
    stop: () => {
      stopped = true;
      clearInterval(timer);
      for (const s of sockets) s.destroy();
    },
  };
}

/**
 * A client that sends `requests` (pipelined, on one connection) and never reads: whatever the tap
 * sends back stays in the kernel's buffers and the tap's. Resolves once the requests are written.
 */
export async function nonReader(url: string, requests: Buffer[]): Promise<{ stop(): void; socket: Socket }> {
  const u = new URL(url);
  const s = connect({ port: Number(u.port), host: u.hostname });
  s.on('error', () => undefined);
  await new Promise<void>((resolve) => s.once('connect', resolve));
  s.pause();
  s.write(Buffer.concat(requests));
  return { socket: s, stop: () => s.destroy() };
}

/** Open file descriptors of this process (Linux /proc). */
export function openFds(pid: number | 'self' = 'self'): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

/** `mcptap reference --http` (the real reference server) as a child process; resolves with its URL. */
export function startReferenceChild(mcptap: string): Promise<{ url: string; child: ChildProcess; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [mcptap, 'reference', '--http', '127.0.0.1:0'], { stdio: ['ignore', 'ignore', 'pipe'] });
  return new Promise((resolve, reject) => {
    let err = '';
    const timer = setTimeout(() => reject(new Error(`reference server did not start: ${err}`)), 15_000);
    child.stderr!.on('data', (b: Buffer) => {
      err += b.toString();
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve({
          url: m[1]!,
          child,
          stop: () =>
            new Promise<void>((done) => {
              if (child.exitCode !== null || child.signalCode !== null) return done();
              child.once('exit', () => done());
              child.kill('SIGTERM');
            }),
        });
      }
    });
    child.once('exit', (code) => reject(new Error(`reference server exited ${code}: ${err}`)));
  });
}
