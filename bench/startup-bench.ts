/**
 * Start-up: how long a host waits for the first answer of a server it starts through mcptap, against
 * a bare byte-forwarding shim spawning the same server. Hosts start every configured server at
 * launch, so this is time every user pays. Each run spawns the wrapper, writes one request at once
 * and times the first answer line on stdout; modes run interleaved, round by round, and each mode's
 * figure is the median of its runs. The HTTP tap: time from its start until it answers its first
 * proxied request (retried every 5 ms until the listener is up), against a bare node HTTP proxy
 * (and against the same proxy loading undici's Pool module alone, as the tap does, and that proxy
 * creating a spool file and spawning a process that holds it before it listens: the floor of any
 * recorder that keeps what a tap killed right after its first answer forwarded).
 * MCPTAP_BENCH_BEFORE=/path/to/other/bin/mcptap.js also runs every mcptap mode with that build (a
 * worktree of an earlier commit, built), interleaved with this one: before and after in one run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { BENCH_FIXTURES, MCPTAP, median, stopChild, table } from './bench-util.js';

const REQUEST = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}\n';
/** Runs per mode; at least 5 (the target is judged on the median). */
const RUNS = Math.max(5, Number(process.env.MCPTAP_BENCH_STARTUP_RUNS ?? 7));
/** Another build's launcher to compare with, mode by mode (rows named `before: ...`). */
const BEFORE = process.env.MCPTAP_BENCH_BEFORE;

interface StdioMode {
  name: string;
  args(dir: string, otlp: string, mcptap?: string): string[];
}

/** The bare proxy loading undici's Pool module alone, as the tap does: what the tap adds beyond that saving. */
const POOL_ONLY_PROXY = 'http: bare proxy, Pool module only';
/** That proxy with a spool file and a process holding it before it listens: the floor of a crash-durable recorder. */
const RECORD_FLOOR_PROXY = 'http: Pool-only proxy + recording floor';

const ECHO = [process.execPath, join(BENCH_FIXTURES, 'echo-server.mjs')];

const STDIO_MODES: StdioMode[] = [
  { name: 'bare shim', args: () => [join(BENCH_FIXTURES, 'bare-shim.mjs'), ...ECHO] },
  { name: 'mcptap stdio', args: (_dir, _otlp, bin = MCPTAP) => [bin, 'stdio', '--', ...ECHO] },
  { name: '--record', args: (dir, _otlp, bin = MCPTAP) => [bin, 'stdio', '--record', join(dir, `r${Math.random()}.db`), '--', ...ECHO] },
  { name: '--otlp', args: (_dir, otlp, bin = MCPTAP) => [bin, 'stdio', '--otlp', otlp, '--', ...ECHO] },
  {
    name: '--record --otlp',
    args: (dir, otlp, bin = MCPTAP) => [bin, 'stdio', '--record', join(dir, `r${Math.random()}.db`), '--otlp', otlp, '--', ...ECHO],
  },
];
/** Each mcptap mode again with the `before` build. */
const MODES: StdioMode[] = BEFORE
  ? STDIO_MODES.flatMap((m) => (m.name === 'bare shim' ? [m] : [m, { name: `before: ${m.name}`, args: (d: string, o: string) => m.args(d, o, BEFORE) }]))
  : STDIO_MODES;

/** Spawn to first answer line, in ms; the child is then closed (stdin ended) and waited for. */
async function firstAnswerMs(args: string[]): Promise<number> {
  const t0 = performance.now();
  const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'ignore'] });
  child.stdin.write(REQUEST);
  const ms = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within 30 s: ${args.join(' ')}`)), 30_000);
    child.stdout.once('data', () => {
      clearTimeout(timer);
      resolve(performance.now() - t0);
    });
    child.once('exit', (code) => reject(new Error(`exited (${code}) before answering: ${args.join(' ')}`)));
  });
  child.stdout.resume();
  child.stdin.end();
  await new Promise((r) => child.once('exit', r));
  return ms;
}

/** A stand-in OTLP/HTTP endpoint: answers every request 200 with an empty body. */
async function fakeOtlp(): Promise<{ url: string; close(): Promise<void> }> {
  const { createServer: createHttp } = await import('node:http');
  const server = createHttp((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => server.close(() => r())) };
}

function signed(ms: number): string {
  return `${ms >= 0 ? '+' : ''}${ms.toFixed(0)}`;
}

async function freePort(): Promise<number> {
  const s: Server = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

/**
 * Start to first proxied answer, in ms: the request is retried every 5 ms until the listener answers.
 * `args` gets a free port to listen on; a wrapper that picks its own prints `{"url": ...}` instead.
 */
async function firstProxiedMs(args: (port: number) => string[], upstream: string, env: Record<string, string> = {}): Promise<number> {
  let port = await freePort();
  const t0 = performance.now();
  const child: ChildProcess = spawn(process.execPath, args(port), { stdio: ['pipe', 'pipe', 'ignore'], env: { ...process.env, ...env } });
  child.stdout!.on('data', (d: Buffer) => {
    const m = /"url":"http:\/\/127\.0\.0\.1:(\d+)/.exec(d.toString());
    if (m) port = Number(m[1]);
  });
  try {
    for (const end = t0 + 30_000; performance.now() < end;) {
      try {
        const res = await request(`http://127.0.0.1:${port}/mcp`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          body: REQUEST,
        });
        await res.body.text();
        if (res.statusCode < 500) return performance.now() - t0;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    throw new Error(`no proxied answer within 30 s (upstream ${upstream})`);
  } finally {
    await stopChild(child, 'SIGTERM');
  }
}

export async function runStartupBench(): Promise<string> {
  const loadBefore = loadavg()[0]!.toFixed(1);
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-startup-'));
  const otlp = await fakeOtlp();
  const upstreamProc = spawn(process.execPath, [join(BENCH_FIXTURES, 'http-echo-server.mjs')], { stdio: ['pipe', 'pipe', 'inherit'] });
  try {
    const upstream = await new Promise<string>((resolve, reject) => {
      upstreamProc.stdout!.once('data', (d: Buffer) => resolve((JSON.parse(d.toString()) as { url: string }).url));
      upstreamProc.once('exit', () => reject(new Error('the HTTP echo server did not start')));
    });
    const times = new Map<string, number[]>();
    const add = (name: string, ms: number) => times.set(name, [...(times.get(name) ?? []), ms]);
    // One warm-up round (page cache, JIT of node itself), not counted.
    for (const m of MODES) await firstAnswerMs(m.args(dir, otlp.url));
    for (let round = 0; round < RUNS; round++) {
      for (const m of MODES) add(m.name, await firstAnswerMs(m.args(dir, otlp.url)));
      add('http: bare proxy', await firstProxiedMs(() => [join(BENCH_FIXTURES, 'bare-http-proxy.mjs')], upstream, { UPSTREAM: upstream }));
      add(POOL_ONLY_PROXY, await firstProxiedMs(() => [join(BENCH_FIXTURES, 'bare-http-proxy.mjs')], upstream, { UPSTREAM: upstream, BARE_POOL_ONLY: '1' }));
      add(
        RECORD_FLOOR_PROXY,
        await firstProxiedMs(() => [join(BENCH_FIXTURES, 'bare-http-proxy.mjs')], upstream, {
          UPSTREAM: upstream,
          BARE_POOL_ONLY: '1',
          BARE_RECORD_FLOOR: '1',
        }),
      );
      for (const [name, bin] of BEFORE
        ? [
            ['', MCPTAP],
            ['before: ', BEFORE],
          ]
        : [['', MCPTAP]]) {
        add(
          `${name}http: mcptap http --record`,
          await firstProxiedMs(
            (port) => [bin!, 'http', '--upstream', upstream, '--listen', `127.0.0.1:${port}`, '--record', join(dir, `h${round}${name ? 'b' : ''}.db`)],
            upstream,
          ),
        );
      }
    }
    const base = median(times.get('bare shim')!);
    const httpBase = median(times.get('http: bare proxy')!);
    const rows = [...times].map(([name, v]) => {
      const m = median(v);
      const ref = name.includes('http:') ? httpBase : base;
      const added = m - ref;
      const isBase = name === 'bare shim' || name === 'http: bare proxy' || name === POOL_ONLY_PROXY || name === RECORD_FLOOR_PROXY;
      return [
        name,
        m.toFixed(0),
        `${Math.min(...v).toFixed(0)}..${Math.max(...v).toFixed(0)}`,
        isBase ? '-' : `${added >= 0 ? '+' : ''}${added.toFixed(0)}`,
        isBase ? '' : added <= 60 ? 'met' : 'NOT met',
      ];
    });
    return [
      `start-up: ms from spawn to the first answer (stdio) or first proxied answer (http), median of ${RUNS} interleaved runs; target: at most 60 ms added; load average ${loadBefore} -> ${loadavg()[0]!.toFixed(1)}`,
      table(['mode', 'median ms', 'range', 'added ms', '<= 60 ms'], rows),
      `http: mcptap http --record against the bare proxy loading undici's Pool module alone: ${signed(median(times.get('http: mcptap http --record')!) - median(times.get(POOL_ONLY_PROXY)!))} ms; ` +
        `against that proxy with the recording's floor (a spool file and a process holding it before listening): ${signed(median(times.get('http: mcptap http --record')!) - median(times.get(RECORD_FLOOR_PROXY)!))} ms`,
    ].join('\n');
  } finally {
    await stopChild(upstreamProc, 'SIGTERM');
    await otlp.close();
    // An indexer may still be completing a recording in the background: retried a while.
    rmSync(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 250 });
  }
}
