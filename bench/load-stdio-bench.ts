/**
 * The rest of `npm run bench -- load` (see load-bench.ts for the HTTP part):
 * - stdio: mcptap's stdio driver (runLoad, closed model, 32 VUs, one process) against a minimal
 *   stdio pump (a few lines of Node: write a request line, read a response line, write the next;
 *   32 in flight), both on bench/fixtures/echo-server.mjs with the same request bytes, in
 *   interleaved rounds of the same run. Rate: responses per second of wall time; CPU: this
 *   process's user + system per request (the server is a child, not counted).
 * - open model: 5,000 arrivals/s for OPEN_SECONDS against the reference server (`target:
 *   {reference: true}`, a child process) and against the JSON bench server: achieved rate
 *   (iterations started per second of the phase), dropped iterations, generator CPU per request.
 *   Each run starts with WARMUP_SECONDS of closed load (not in the row's rate or drops): a fresh
 *   server child serves its first second at a fraction of its warm rate while V8 compiles the
 *   SDK's hot paths, and a server runs warm in any test longer than a few seconds.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BENCH_FIXTURES, median, table } from './bench-util.js';
import { loadYaml } from '../src/load/scenario/scenario-loader.js';
import { runLoad } from '../src/load/run/run-load.js';

const CONNECTIONS = 32;
const STDIO_SECONDS = 4;
const STDIO_ROUNDS = 4;
const OPEN_RATE = 5000;
const OPEN_SECONDS = 5;
const WARMUP_SECONDS = 3;
const ECHO = join(BENCH_FIXTURES, 'echo-server.mjs');

interface StdioRound {
  rps: number;
  cpuUs: number;
  requests: number;
  errors: number;
}

const stdioYaml = (seconds: number) => `
name: load-bench-stdio
target: { command: ${JSON.stringify([process.execPath, ECHO])} }
era: 2026-07-28
phases:
  - closed: { vus: ${CONNECTIONS}, duration: ${seconds}s }
steps:
  - { tool: echo, arguments: { text: hello } }
`;

async function runMcptapStdio(seconds: number): Promise<StdioRound> {
  const c0 = process.cpuUsage();
  const res = await runLoad(loadYaml(stdioYaml(seconds), { source: 'load-bench-stdio.yaml', baseDir: tmpdir() }));
  const cpu = process.cpuUsage(c0);
  const c = res.overall.counters;
  const phase = res.phases[0]!;
  return { rps: c.requests / ((phase.endUs - phase.startUs) / 1e6), cpuUs: (cpu.user + cpu.system) / c.requests, requests: c.requests, errors: c.errors };
}

/** The request line both send (what mcptap's stdio driver writes for the step), cut around the id. */
const [BEFORE, AFTER] = JSON.stringify({
  jsonrpc: '2.0',
  id: 0,
  method: 'tools/call',
  params: {
    name: 'echo',
    arguments: { text: 'hello' },
    _meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
      'io.modelcontextprotocol/clientInfo': { name: 'mcptap', version: '0.1.0' },
    },
  },
}).split('"id":0') as [string, string];

/** The minimal pump: spawn, one warm-up exchange, then 32 requests in flight for `seconds`. */
async function runPump(seconds: number): Promise<StdioRound> {
  const c0 = process.cpuUsage();
  const child = spawn(process.execPath, [ECHO], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout });
  let id = 0;
  const send = () => child.stdin.write(`${BEFORE}"id":${++id}${AFTER}\n`);
  await new Promise<void>((resolve) => {
    lines.once('line', () => resolve());
    send();
  });
  let n = 0;
  let inFlight = 0;
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  const elapsed = await new Promise<number>((resolve) => {
    lines.on('line', () => {
      n++;
      inFlight--;
      if (performance.now() < end) {
        inFlight++;
        send();
      } else if (inFlight === 0) resolve(performance.now() - t0);
    });
    for (; inFlight < CONNECTIONS; inFlight++) send();
  });
  child.stdin.end();
  await new Promise((resolve) => child.once('exit', resolve));
  const cpu = process.cpuUsage(c0);
  return { rps: n / (elapsed / 1000), cpuUs: (cpu.user + cpu.system) / n, requests: n, errors: 0 };
}

export async function runStdioLoadRows(log: (l: string) => void): Promise<string> {
  const rounds: Record<'mcptap' | 'pump', StdioRound[]> = { mcptap: [], pump: [] };
  log('stdio warm-up (1 s each, not measured)');
  await runPump(1);
  await runMcptapStdio(1);
  for (let round = 1; round <= STDIO_ROUNDS; round++) {
    const order = round % 2 === 1 ? (['pump', 'mcptap'] as const) : (['mcptap', 'pump'] as const);
    log(`stdio round ${round}/${STDIO_ROUNDS}: ${order.join(', ')} (${STDIO_SECONDS} s each)`);
    for (const who of order) rounds[who].push(await (who === 'pump' ? runPump(STDIO_SECONDS) : runMcptapStdio(STDIO_SECONDS)));
  }
  const ratios = rounds.mcptap.map((m, i) => m.rps / rounds.pump[i]!.rps);
  const cpuRatios = rounds.mcptap.map((m, i) => m.cpuUs / rounds.pump[i]!.cpuUs);
  const row = (name: string, r: StdioRound[]) => [
    name,
    r.map((x) => x.rps.toFixed(0)).join(' '),
    median(r.map((x) => x.rps)).toFixed(0),
    r.map((x) => x.cpuUs.toFixed(1)).join(' '),
    median(r.map((x) => x.cpuUs)).toFixed(1),
    String(r.reduce((a, x) => a + x.requests, 0)),
    String(r.reduce((a, x) => a + x.errors, 0)),
  ];
  const med = median(ratios);
  return [
    `stdio, closed model: ${CONNECTIONS} requests in flight on one echo-server.mjs process, ${STDIO_SECONDS} s x ${STDIO_ROUNDS} interleaved rounds`,
    table(
      ['generator', 'req/s per round', 'median', 'CPU us/req per round', 'median', 'requests', 'errors'],
      [row('minimal stdio pump', rounds.pump), row('mcptap (stdio driver)', rounds.mcptap)],
    ),
    `mcptap / pump req/s per round: ${ratios.map((x) => x.toFixed(2) + 'x').join(' ')}; median ${med.toFixed(2)}x, spread ${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)}x (target >= 0.80x) ${med >= 0.8 ? 'PASS' : 'FAIL'}`,
    `mcptap / pump CPU per request per round: ${cpuRatios.map((x) => x.toFixed(2) + 'x').join(' ')}; median ${median(cpuRatios).toFixed(2)}x`,
  ].join('\n');
}

interface OpenRow {
  target: string;
  scheduled: number;
  started: number;
  dropped: number;
  achieved: number;
  requests: number;
  errors: number;
  cpuUs: number;
  lagP99Ms: number;
  p99Ms: number;
}

async function openRow(name: string, target: string): Promise<OpenRow> {
  const yaml = `
name: load-bench-open
target: ${target}
era: 2026-07-28
phases:
  - closed: { vus: ${CONNECTIONS}, duration: ${WARMUP_SECONDS}s }
  - open: { rate: ${OPEN_RATE}, duration: ${OPEN_SECONDS}s }
steps:
  - { tool: echo, arguments: { text: hello } }
`;
  const c0 = process.cpuUsage();
  const res = await runLoad(loadYaml(yaml, { source: 'load-bench-open.yaml', baseDir: tmpdir() }));
  const cpu = process.cpuUsage(c0);
  const p = res.phases[res.phases.length - 1]!;
  const c = res.overall.counters;
  return {
    target: name,
    scheduled: p.scheduled,
    started: p.started,
    dropped: p.dropped,
    achieved: p.started / OPEN_SECONDS,
    requests: c.requests,
    errors: c.errors,
    cpuUs: (cpu.user + cpu.system) / Math.max(1, c.requests),
    lagP99Ms: res.scheduleLag.summary.p99 / 1000,
    p99Ms: res.overall.latency.summary.p99 / 1000,
  };
}

export async function runOpenLoadRows(log: (l: string) => void, jsonServerUrl: string): Promise<string> {
  log(`open model: ${OPEN_RATE}/s for ${OPEN_SECONDS} s against the reference server, then the JSON bench server`);
  const rows = [await openRow('reference server (HTTP, child)', '{ reference: true }'), await openRow('JSON bench server', `{ url: "${jsonServerUrl}" }`)];
  return [
    `open model, ${OPEN_RATE} arrivals/s for ${OPEN_SECONDS} s after ${WARMUP_SECONDS} s of closed warm-up (target: achieved within 2%, no dropped iterations); ` +
      'requests, errors, p99 and CPU (this process per request) include the warm-up',
    table(
      ['target', 'runs', 'scheduled', 'started', 'achieved/s', 'vs target', 'dropped', 'requests', 'errors', 'lag p99 ms', 'p99 ms', 'CPU us/req'],
      rows.map((r) => [
        r.target,
        'in process',
        String(r.scheduled),
        String(r.started),
        r.achieved.toFixed(0),
        `${((r.achieved / OPEN_RATE - 1) * 100).toFixed(1)}%`,
        String(r.dropped),
        String(r.requests),
        String(r.errors),
        r.lagP99Ms.toFixed(2),
        r.p99Ms.toFixed(2),
        r.cpuUs.toFixed(1),
      ]),
    ),
  ].join('\n');
}
