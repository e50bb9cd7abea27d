/**
 * Load-engine benchmark: maximum closed-model requests/s of `mcptap load`'s HTTP driver, with its
 * full per-layer classification of every answer (HTTP status, JSON-RPC outcome, isError, protocol
 * violations; HDR histograms per method, tool and step), against autocannon and Artillery, in the
 * same run and against the same endpoint: bench/fixtures/jsonrpc-json-server.mjs, a child process
 * on 127.0.0.1 answering every 2026-07-28 `tools/call` at once with application/json.
 *
 * Every generator keeps CONNECTIONS connections / virtual users busy back to back (no think time)
 * for SECONDS:
 * - autocannon (npm, programmatic, in this process) POSTs the exact body and headers mcptap sends;
 * - mcptap: runLoad() in this process on a YAML scenario, `closed: {vus, duration}`, one step;
 * - Artillery (npm, child process, temp install outside the repo; see artillery-runner.ts): VUs
 *   arrive over the first second and each loops the same POST for SECONDS.
 * One yardstick for all three: the server's own request count, polled every POLL_MS; req/s is the
 * rate over the steady window [start + SKIP_MS, start + SECONDS − TAIL_MS], when every generator
 * has all its connections busy (Artillery's boot and arrival ramp, and JIT warm-up, are left out).
 * Each tool's own req/s and latency percentiles are printed as well, and the client CPU per
 * request of the two in-process generators (robust on a shared, noisy machine).
 * Rounds interleave the tools (autocannon and mcptap swap places every round); the table shows
 * each tool's best round, and the verdict is on the median of the round-by-round ratios (with
 * their spread), so one lucky round cannot pass it. Target: mcptap >= 0.8x autocannon.
 * Then the stdio driver against a minimal stdio pump, and open-model rows at 5,000 req/s
 * (load-stdio-bench.ts). The load average is printed with the figures: on a shared machine the
 * CPU per request is the steadier figure.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import { Client } from 'undici';
import { BENCH_FIXTURES, median, table } from './bench-util.js';
import { runOpenLoadRows, runStdioLoadRows } from './load-stdio-bench.js';
import { ARTILLERY_VERSION, findArtillery, runArtillery } from './artillery-runner.js';
import { mcpHeaders, withModernMeta } from '../src/client/mcp-request.js';
import { loadYaml } from '../src/load/scenario/scenario-loader.js';
import { runLoad } from '../src/load/run/run-load.js';
import { sum } from '../src/load/results/group-stats.js';

const CONNECTIONS = 32;
const SECONDS = 5;
const ROUNDS = 4;
/** Artillery is ~10x slower and boots for ~10 s: fewer rounds; its noise cannot change the verdict. */
const ARTILLERY_ROUNDS = 2;
const POLL_MS = 100;
const SKIP_MS = 1200;
const TAIL_MS = 300;
const VERSION = '2026-07-28';

type Tool = 'autocannon' | 'mcptap' | 'Artillery';

interface Measured {
  /** Server-counted requests per second over the steady window. */
  rps: number;
  ownRps: number;
  p50Ms: number;
  p99Ms: number;
  /** Client CPU (user + system) per request, µs; in-process generators only. */
  cpuUs?: number;
  requests: number;
  errors: number;
}

interface ServerStats {
  requests: number;
  badJson: number;
  missingMcpHeaders: number;
  timeMs: number;
}

/** The request every generator sends: what mcptap's modern session builds for this step. */
function benchRequest(): { body: string; headers: Record<string, string> } {
  const params = withModernMeta({ name: 'echo', arguments: { text: 'hello' } }, { protocolVersion: VERSION });
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params });
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...mcpHeaders('tools/call', params, { era: 'modern', protocolVersion: VERSION }),
  };
  return { body, headers };
}

const scenarioYaml = (url: string, seconds: number) => `
name: load-bench
target: { url: "${url}" }
era: ${VERSION}
phases:
  - closed: { vus: ${CONNECTIONS}, duration: ${seconds}s }
steps:
  - { tool: echo, arguments: { text: hello } }
`;

async function startServer(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [join(BENCH_FIXTURES, 'jsonrpc-json-server.mjs')], { stdio: ['pipe', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`jsonrpc-json-server.mjs exited ${code}`)));
  });
  return { url: (JSON.parse(line) as { url: string }).url, child };
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.stdin?.end();
  });
}

/** Polls the server's counters while one generator runs; the steady-window rate at the end. */
class ServerProbe {
  private points: ServerStats[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly client: Client) {}

  read(): Promise<ServerStats> {
    return this.client.request({ path: '/stats', method: 'GET' }).then((r) => r.body.json() as Promise<ServerStats>);
  }

  async start(): Promise<void> {
    this.points = [await this.read()];
    this.timer = setInterval(
      () =>
        void this.read().then(
          (p) => this.points.push(p),
          () => undefined,
        ),
      POLL_MS,
    );
  }

  async stop(): Promise<{ rps: number; served: ServerStats }> {
    clearInterval(this.timer);
    const last = await this.read();
    const first = this.points[0]!;
    const served = {
      requests: last.requests - first.requests,
      badJson: last.badJson - first.badJson,
      missingMcpHeaders: last.missingMcpHeaders - first.missingMcpHeaders,
      timeMs: last.timeMs - first.timeMs,
    };
    return { rps: steadyRate([...this.points, last]), served };
  }
}

/** Server-counted rate between the first and last polls inside the steady window. */
function steadyRate(points: ServerStats[]): number {
  const startIdx = points.findIndex((p) => p.requests > points[0]!.requests);
  if (startIdx < 1) return NaN;
  const t0 = points[startIdx - 1]!.timeMs; // traffic began after this poll
  const inWindow = points.filter((p) => p.timeMs >= t0 + SKIP_MS && p.timeMs <= t0 + SECONDS * 1000 - TAIL_MS);
  const a = inWindow[0];
  const b = inWindow[inWindow.length - 1];
  if (!a || !b || b.timeMs - a.timeMs < 1000) return NaN;
  return (b.requests - a.requests) / ((b.timeMs - a.timeMs) / 1000);
}

async function runAutocannon(url: string, req: ReturnType<typeof benchRequest>, seconds: number): Promise<Omit<Measured, 'rps'>> {
  const c0 = process.cpuUsage();
  const r = await autocannon({ url, method: 'POST', headers: req.headers, body: req.body, connections: CONNECTIONS, pipelining: 1, duration: seconds });
  const cpu = process.cpuUsage(c0);
  const n = r.requests.total;
  return {
    ownRps: n / r.duration,
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    cpuUs: (cpu.user + cpu.system) / n,
    requests: n,
    errors: r.errors + r.timeouts + r.non2xx,
  };
}

async function runMcptap(url: string, seconds: number): Promise<Omit<Measured, 'rps'>> {
  const scenario = loadYaml(scenarioYaml(url, seconds), { source: 'load-bench.yaml', baseDir: tmpdir() });
  const c0 = process.cpuUsage();
  const res = await runLoad(scenario);
  const cpu = process.cpuUsage(c0);
  const c = res.overall.counters;
  const phase = res.phases[0]!;
  const lat = res.overall.latency.summary;
  return {
    ownRps: c.requests / ((phase.endUs - phase.startUs) / 1e6),
    p50Ms: lat.p50 / 1000,
    p99Ms: lat.p99 / 1000,
    cpuUs: (cpu.user + cpu.system) / c.requests,
    requests: c.requests,
    errors: c.errors + sum(c.violations) + c.checkFailures,
  };
}

interface BenchRun {
  url: string;
  req: ReturnType<typeof benchRequest>;
  probe: ServerProbe;
  dir: string;
  notes: string[];
  best: Map<Tool, Measured>;
  /** Server-counted req/s of every round, per tool (for the per-round ratios). */
  perRound: Map<Tool, number[]>;
  /** CPU µs per request of every round, per in-process tool. */
  cpuPerRound: Map<Tool, number[]>;
}

/** One generator run with the server probe around it; a reason string when it could not run. */
async function measure(b: BenchRun, tool: Tool, go: () => Promise<Omit<Measured, 'rps'> | string>): Promise<string | undefined> {
  await b.probe.start();
  const r = await go();
  const { rps, served } = await b.probe.stop();
  if (typeof r === 'string') return r;
  if (served.badJson > 0 || served.missingMcpHeaders > 0)
    b.notes.push(`${tool}: the server saw ${served.badJson} bad JSON bodies and ${served.missingMcpHeaders} requests without the MCP headers`);
  (b.perRound.get(tool) ?? b.perRound.set(tool, []).get(tool)!).push(rps);
  if (r.cpuUs !== undefined) (b.cpuPerRound.get(tool) ?? b.cpuPerRound.set(tool, []).get(tool)!).push(r.cpuUs);
  const prev = b.best.get(tool);
  if (!prev || !(rps <= prev.rps)) b.best.set(tool, { ...r, rps });
  return undefined;
}

async function artilleryRow(bin: string, b: BenchRun): Promise<Omit<Measured, 'rps'> | string> {
  const r = await runArtillery(bin, { url: b.url, headers: b.req.headers, body: b.req.body, vus: CONNECTIONS, seconds: SECONDS, dir: b.dir });
  return typeof r === 'string' ? r : { ownRps: r.ownRps, p50Ms: r.p50Ms, p99Ms: r.p99Ms, requests: r.responses, errors: r.errors };
}

export async function runLoadBench(): Promise<string> {
  const log = (l: string) => process.stderr.write(`load bench: ${l}\n`);
  const { url, child } = await startServer();
  const stats = new Client(new URL(url).origin);
  const b: BenchRun = {
    url,
    req: benchRequest(),
    probe: new ServerProbe(stats),
    dir: mkdtempSync(join(tmpdir(), 'mcptap-load-bench-')),
    notes: [],
    best: new Map(),
    perRound: new Map(),
    cpuPerRound: new Map(),
  };
  try {
    const art = await findArtillery(log);
    let artillerySkipped = 'skipped' in art ? art.skipped : undefined;
    log('warm-up (1 s each, not measured)');
    await runAutocannon(url, b.req, 1);
    await runMcptap(url, 1);
    for (let round = 1; round <= ROUNDS; round++) {
      // Alternate who goes first, so that neither always runs right after Artillery or the other.
      const order: Tool[] = round % 2 === 1 ? ['autocannon', 'mcptap'] : ['mcptap', 'autocannon'];
      const withArtillery = !artillerySkipped && 'bin' in art && round <= ARTILLERY_ROUNDS;
      log(`round ${round}/${ROUNDS}: ${order.join(', ')}${withArtillery ? ', Artillery' : ''} (${SECONDS} s each)`);
      for (const tool of order) await measure(b, tool, () => (tool === 'mcptap' ? runMcptap(url, SECONDS) : runAutocannon(url, b.req, SECONDS)));
      if (withArtillery && 'bin' in art) artillerySkipped = await measure(b, 'Artillery', () => artilleryRow(art.bin, b));
    }
    const http = render(b, artillerySkipped);
    const stdio = await runStdioLoadRows(log);
    const open = await runOpenLoadRows(log, url);
    return [
      http,
      '',
      stdio,
      '',
      open,
      '',
      `load average at the end: ${loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')} (1, 5, 15 min)`,
    ].join('\n');
  } finally {
    await stats.close();
    await stopChild(child);
    rmSync(b.dir, { recursive: true, force: true });
  }
}

function render(b: BenchRun, artillerySkipped: string | undefined): string {
  const ac = b.best.get('autocannon')!;
  const tap = b.best.get('mcptap')!;
  const art = b.best.get('Artillery');
  const acRounds = b.perRound.get('autocannon') ?? [];
  const ratios = (b.perRound.get('mcptap') ?? []).map((r, i) => r / acRounds[i]!);
  const perRound = ratios.map((r) => `${r.toFixed(2)}x`).join(' ');
  const med = median(ratios);
  const cpu = (t: Tool) => b.cpuPerRound.get(t) ?? [];
  const cpuRatios = cpu('mcptap').map((c, i) => c / cpu('autocannon')[i]!);
  const f = (n: number | undefined, d = 0) => (n === undefined || Number.isNaN(n) ? '-' : n.toFixed(d));
  const row = (name: string, runs: string, m: Measured): string[] => [
    name,
    runs,
    f(m.rps),
    `${(m.rps / ac.rps).toFixed(2)}x`,
    f(m.ownRps),
    f(m.p50Ms, 2),
    f(m.p99Ms, 2),
    f(m.cpuUs, 1),
    String(m.requests),
    String(m.errors),
  ];
  const rows = [row('autocannon', 'in process', ac), row('mcptap (HTTP driver)', 'in process', tap)];
  const artName = `Artillery ${ARTILLERY_VERSION}`;
  const artRuns = `child, ${Math.max(1, cpus().length - 1)} worker(s)`;
  rows.push(art ? row(artName, artRuns, art) : [artName, 'skipped', '-', '-', '-', '-', '-', '-', '-', '-']);
  const ratio = tap.rps / ac.rps;
  const out = [
    `closed model, POST tools/call (${VERSION}) answered as application/json; ${CONNECTIONS} connections/VUs x ${SECONDS} s per tool; ` +
      `best of ${ROUNDS} interleaved rounds (Artillery: ${ARTILLERY_ROUNDS}); req/s counted by the server over the steady window (+${SKIP_MS / 1000} s .. ${SECONDS - TAIL_MS / 1000} s); ` +
      `${cpus().length} CPUs, load average ${loadavg()[0]!.toFixed(2)}`,
    table(['generator', 'runs', 'req/s', 'vs autocannon', 'own req/s', 'p50 ms', 'p99 ms', 'CPU us/req', 'requests', 'errors'], rows),
    `mcptap / autocannon req/s round by round: ${perRound}; median ${med.toFixed(2)}x, spread ${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)}x ` +
      `(target >= 0.80x in the median round) ${med >= 0.8 ? 'PASS' : 'FAIL'}; best round vs best round ${ratio.toFixed(2)}x`,
    `CPU us/req round by round: autocannon ${cpu('autocannon')
      .map((x) => x.toFixed(1))
      .join(' ')}, mcptap ${cpu('mcptap')
      .map((x) => x.toFixed(1))
      .join(' ')}; ` + `mcptap / autocannon median ${median(cpuRatios).toFixed(2)}x`,
    art ? `mcptap / Artillery: ${(tap.rps / art.rps).toFixed(2)}x` : `mcptap / Artillery: skipped (${artillerySkipped ?? 'no result'})`,
    'CPU us/req: user + system CPU of this process per request (in-process generators only). Latency: autocannon and Artillery time from the request write;',
    'mcptap from when the VU became ready (closed model, no think time: the same moment plus event-loop delay).',
    ...b.notes,
  ];
  return out.join('\n');
}
