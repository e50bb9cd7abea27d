/**
 * A tap asked to stop stops, even when its OTLP endpoint hangs: closing the telemetry has one
 * deadline (5 s) from the first close of any of its parts, the spans it could not deliver are
 * counted in one line, and exports the deadline abandoned do not keep the process alive.
 *
 * Before this, `mcptap http` took 25 s to exit on SIGTERM with its endpoint gone (the sinks'
 * final flush was not under the deadline, and the abandoned retries held the process); with an
 * endpoint that accepts and never answers it would wait for the whole export timeout.
 *
 * The hung endpoint is an in-process fake (a TCP server that accepts and never answers): a real
 * collector only does that when it is broken. Everything else is real: the built CLI, the
 * reference server (HTTP and stdio), and the SDK 2.x client. The export timeout is set to 120 s,
 * so a tap that waited for its exports could not exit within the tests' 40 s bound.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { startReferenceHttpServer, type ReferenceHttpServer } from '../../src/reference/reference-server.js';
import { CloseDeadline, type GiveUpSignal } from '../../src/telemetry/close-deadline.js';
import { MCPTAP } from '../helpers/paths.js';
import { startHttpTapCli } from '../helpers/http-tap-cli.js';

const EXPORTS_WAIT = { OTEL_EXPORTER_OTLP_TIMEOUT: '120000', OTEL_BSP_EXPORT_TIMEOUT: '120000', OTEL_BSP_SCHEDULE_DELAY: '200' };
const EXIT_BOUND_MS = 40_000;
const CALLS = 12;

/** Fake fault: accepts connections and never answers (a hung collector). */
async function hungEndpoint(): Promise<{ url: string; sockets: () => number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let seen = 0;
  const server: Server = createServer((s) => {
    seen++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    sockets: () => seen,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

function collect(child: ChildProcess): () => string {
  let text = '';
  child.stderr!.on('data', (b: Buffer) => (text += b.toString()));
  return () => text;
}

/** Resolves with the exit code; kills the tap and rejects past the bound. */
function exitOf(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the tap did not exit within ${EXIT_BOUND_MS} ms`));
    }, EXIT_BOUND_MS);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

/** The one line saying what did not reach the endpoint: [not delivered, delivered]. */
function undelivered(stderr: string): [number, number] {
  const m =
    /otel: (\d+) spans were not delivered \(0 refused with the queue full, 0 in failed exports, (\d+) queued or being sent at the deadline\); (\d+) were delivered/.exec(
      stderr,
    );
  expect(m, stderr).not.toBeNull();
  expect(Number(m![2])).toBe(Number(m![1]));
  return [Number(m![1]), Number(m![3])];
}

// The two taps wait out the deadline side by side, each with a hung endpoint of its own (whose
// connections are its exports alone).
describe.concurrent('closing the telemetry when the OTLP endpoint hangs', () => {
  const endpoints: Awaited<ReturnType<typeof hungEndpoint>>[] = [];
  const ownEndpoint = async () => {
    const e = await hungEndpoint();
    endpoints.push(e);
    return e;
  };
  let server: ReferenceHttpServer;
  beforeAll(async () => {
    server = await startReferenceHttpServer({ port: 0 });
  });
  afterAll(async () => {
    await server?.close();
    await Promise.all(endpoints.map((e) => e.close()));
  });

  it('mcptap http (telemetry on its worker thread) exits 0 on SIGTERM, and says how many spans were not delivered', async () => {
    const endpoint = await ownEndpoint();
    const tap = await startHttpTapCli(server.url, ['--otlp', endpoint.url], { ...process.env, ...EXPORTS_WAIT });
    const { child, url, stderr } = tap;
    const client = new Client({ name: 'close-deadline-test', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    for (let i = 0; i < CALLS; i++)
      expect(await client.callTool({ name: 'echo', arguments: { text: `n${i}` } })).toMatchObject({ content: [{ type: 'text', text: `n${i}` }] });
    await client.close();
    // The batch processor has started an export by now (every 200 ms): it hangs on the endpoint.
    await expect.poll(() => endpoint.sockets(), { timeout: 10_000 }).toBeGreaterThan(0);

    const exited = exitOf(child);
    child.kill('SIGTERM');
    const code = await exited;
    expect(code).toBe(0);
    expect(stderr()).toContain('otel: shutdown did not finish within 5000 ms; unsent telemetry was dropped');
    const [lost, delivered] = undelivered(stderr());
    // Every call and the connection's own span were made; none reached the endpoint.
    expect(lost).toBeGreaterThanOrEqual(CALLS + 1);
    expect(delivered).toBe(0);
  });

  it("mcptap stdio --inject-trace-context (telemetry in the tap's own thread) exits with its server, not with its exports", async () => {
    const endpoint = await ownEndpoint();
    const child = spawn(
      process.execPath,
      [MCPTAP, 'stdio', '--otlp', endpoint.url, '--inject-trace-context', '--', process.execPath, MCPTAP, 'reference', '--stdio'],
      {
        stdio: ['pipe', 'pipe', 'pipe'],
        env: { ...process.env, ...EXPORTS_WAIT },
      },
    );
    const stderr = collect(child);
    const answers = createInterface({ input: child.stdout! });
    const answered = new Map<number, unknown>();
    const waiting = new Map<number, () => void>();
    answers.on('line', (l) => {
      const m = JSON.parse(l) as { id?: number };
      if (typeof m.id === 'number') {
        answered.set(m.id, m);
        waiting.get(m.id)?.();
      }
    });
    const call = (id: number, method: string, params: unknown) =>
      new Promise<void>((resolve) => {
        waiting.set(id, resolve);
        child.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
      });
    await call(0, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'close-deadline-test', version: '1' } });
    child.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    for (let i = 1; i <= CALLS; i++) await call(i, 'tools/call', { name: 'echo', arguments: { text: `n${i}` } });
    expect(answered.size).toBe(CALLS + 1);
    // Its own endpoint: a connection is this tap's export (the shared one counted the test before's too).
    await expect.poll(() => endpoint.sockets(), { timeout: 10_000 }).toBeGreaterThan(0);

    const exited = exitOf(child);
    // The host goes away: the server exits on EOF, and the tap with it.
    child.stdin!.end();
    const code = await exited;
    expect(code).toBe(0);
    const [lost, delivered] = undelivered(stderr());
    expect(lost).toBeGreaterThanOrEqual(CALLS + 2);
    expect(delivered).toBe(0);
  });
});

/** A manual timer: fires what was scheduled when the test says time has passed. */
function fakeTimer(): { start: (ms: number, fire: () => void) => void; advance(ms: number): void; pending(): number } {
  let now = 0;
  const due: { at: number; fire: () => void }[] = [];
  return {
    start: (ms, fire) => void due.push({ at: now + ms, fire }),
    advance(ms) {
      now += ms;
      for (const d of due.filter((x) => x.at <= now)) {
        due.splice(due.indexOf(d), 1);
        d.fire();
      }
    },
    pending: () => due.length,
  };
}

/** Fake give-up source: the test decides when the endpoints are known unreachable. */
function fakeSignal(): GiveUpSignal & { set(reason: string): void; listeners(): number } {
  let reason: string | undefined;
  const listeners = new Set<() => void>();
  return {
    reason: () => reason,
    onChange: (l) => (listeners.add(l), () => listeners.delete(l)),
    set(r) {
      reason = r;
      for (const l of [...listeners]) l();
    },
    listeners: () => listeners.size,
  };
}

const never = new Promise<void>(() => {});
const settled = async <T>(p: Promise<T>): Promise<T | 'pending'> => Promise.race([p, new Promise<'pending'>((r) => setImmediate(() => r('pending')))]);

describe('CloseDeadline (fake timer)', () => {
  it('gives up before the deadline once the endpoints are known unreachable', async () => {
    const timer = fakeTimer();
    const signal = fakeSignal();
    const d = new CloseDeadline(5000, signal, timer.start);
    const waiting = d.within(never);
    timer.advance(1000);
    expect(await settled(waiting)).toBe('pending');
    signal.set('OTLP endpoint http://127.0.0.1:1 unreachable (connection refused)');
    expect(await settled(waiting)).toBe('unreachable');
    expect(d.gaveUpBecause).toBe('OTLP endpoint http://127.0.0.1:1 unreachable (connection refused)');
    expect(signal.listeners()).toBe(0);
    // later waits (the providers' shutdown after the sinks' flush) end at once too
    expect(await settled(d.within(never))).toBe('unreachable');
  });

  it('gives up at the first wait when the endpoints were already found unreachable', async () => {
    const timer = fakeTimer();
    const signal = fakeSignal();
    signal.set('OTLP endpoint http://127.0.0.1:1 unreachable (connection refused)');
    expect(await settled(new CloseDeadline(5000, signal, timer.start).within(never))).toBe('unreachable');
  });

  it('keeps the whole deadline while the endpoints are not known unreachable', async () => {
    const timer = fakeTimer();
    const signal = fakeSignal();
    const d = new CloseDeadline(5000, signal, timer.start);
    const waiting = d.within(never);
    timer.advance(4999);
    expect(await settled(waiting)).toBe('pending');
    timer.advance(1);
    expect(await settled(waiting)).toBe('expired');
    expect(d.gaveUpBecause).toBeUndefined();
    // the clock started at the first wait: a later one does not get a new 5 s
    expect(await settled(d.within(never))).toBe('expired');
    expect(timer.pending()).toBe(0);
  });

  it('work that finishes first is done, with or without a give-up source', async () => {
    const timer = fakeTimer();
    expect(await new CloseDeadline(5000, fakeSignal(), timer.start).within(Promise.resolve())).toBe('done');
    expect(await new CloseDeadline(5000, undefined, timer.start).within(Promise.reject(new Error('x')))).toBe('done');
  });
});

describe('closing the telemetry when nothing listens on the OTLP endpoint', () => {
  it('mcptap stdio stops without waiting out the deadline, and says once what was not delivered and why', async () => {
    // A loopback port nothing listens on: port 1, which no test takes (an ephemeral port listened on and
    // closed was taken by another test file's server, running beside this one, before the tap gave up).
    const otlp = 'http://127.0.0.1:1';

    const child = spawn(process.execPath, [MCPTAP, 'stdio', '--otlp', otlp, '--', process.execPath, MCPTAP, 'reference', '--stdio'], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, ...EXPORTS_WAIT },
    });
    const stderr = collect(child);
    const answers = createInterface({ input: child.stdout! });
    const answered = new Promise<unknown>((resolve) => answers.once('line', (l) => resolve(JSON.parse(l))));
    child.stdin!.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'close-deadline-test', version: '1' } } })}\n`,
    );
    expect(await answered).toMatchObject({ id: 1, result: { protocolVersion: '2025-06-18' } });

    const exited = exitOf(child);
    const closedAt = performance.now();
    child.stdin!.end();
    const code = await exited;
    // Logged, not asserted (no timed assertions): it was the 5 s deadline plus the exit before.
    console.log(`stdio tap with an unreachable OTLP endpoint exited ${Math.round(performance.now() - closedAt)} ms after stdin closed`);
    expect(code).toBe(0);
    const lines = stderr()
      .split('\n')
      .filter((l) => /not delivered/.test(l));
    // The initialize exchange and the connection's session span; the exporter gave up, the deadline did not end it.
    expect(lines, stderr()).toEqual([
      `mcptap warn: otel: 2 spans and the metrics not delivered: OTLP endpoint ${otlp} unreachable (connection refused); stopped without waiting for it`,
    ]);
    expect(stderr()).not.toContain('did not finish within');
  });
});
