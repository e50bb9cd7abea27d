/**
 * HTTP tap benchmark: requests per second and added latency of `mcptap http --record`, against the
 * same upstream reached directly, through a bare streaming passthrough proxy on undici (no parsing;
 * the baseline), and through nginx (Debian package) as a reverse proxy, all measured in one run.
 *
 * - 1 connection: sequential requests over one keep-alive connection; median and p99 latency, and
 *   "added" = median through the proxy minus median direct.
 * - saturation: autocannon, 32 connections, for a few seconds; req/s.
 * - every target runs in its own process, all started up front; rounds interleave the targets, so
 *   that load from elsewhere on the machine does not pick a winner; each figure is the median of a
 *   target's rounds, and the targets are judged on each round's own pair, in the median round.
 * The upstream is a fake MCP server answering at once (bench/fixtures/http-echo-server.mjs), so the
 * proxies are what is measured. Requests are 2026-07-28 `tools/call` POSTs with the standard headers.
 * Targets: mcptap >= 0.8x the bare passthrough's throughput; <= 0.3 ms added median at one connection.
 *
 * Also, SSE timing and disconnect propagation (the figures the tap tests check with wide margins):
 * the tap runs in this process on a CLOCK_MONOTONIC clock; test/fixtures/sse-ticker.mjs (upstream
 * and client in one child, same clock) sends an event every 50 ms. Reported: |recorded event time -
 * client receive time| p50/p99 (target p99 < 2 ms), and client abort -> upstream sees the close.
 *
 * MCPTAP_BENCH_BEFORE=/other/build/bin/mcptap.js adds that build's `mcptap http --record` as one
 * more target of every round: each build's per-round ratio to the bare passthrough and added
 * latency, their medians and spreads, compared. The SSE part runs this build's tap in process only.
 * MCPTAP_BENCH_ROUNDS (3) and MCPTAP_BENCH_SECONDS (saturation, 4) shorten a check.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import { Client } from 'undici';
import {
  BEFORE,
  BENCH_FIXTURES,
  MCPTAP,
  ROOT,
  beforeAfterLines,
  median,
  percentile,
  roundRatios,
  stopChild,
  table,
  ECHO_CALL_BODY,
  ECHO_CALL_HEADERS,
} from './bench-util.js';
import { Pipeline } from '../src/pipeline/pipeline.js';
import { startHttpTap } from '../src/tap/http-tap.js';
import type { Clock } from '../src/util/clock.js';
import type { Exchange } from '../src/model/exchange.js';
import { freeLoopbackPort } from '../src/util/free-port.js';
import { RecordingStore } from '../src/store/recording-store.js';

const LATENCY_WARMUP = 500;
const LATENCY_REQUESTS = 3000;
const SATURATION_CONNECTIONS = 32;
const SATURATION_SECONDS = Number(process.env.MCPTAP_BENCH_SECONDS) || 4;
/** Odd, so that the median round is a round (MCPTAP_BENCH_ROUNDS). */
const ROUNDS = Number(process.env.MCPTAP_BENCH_ROUNDS) || 3;
/** The other build's tap, a target of its own (MCPTAP_BENCH_BEFORE). */
const BEFORE_TAP = 'before: mcptap http --record';

const BODY = ECHO_CALL_BODY;
const HEADERS = ECHO_CALL_HEADERS;

interface Target {
  name: string;
  url: string;
  stop(): Promise<void>;
}

interface Measured {
  name: string;
  rps1: number;
  p50: number;
  p99: number;
  rpsSat: number;
  errors: number;
  /** Requests sent to this target over all rounds (both measurements), for what a recording kept. */
  sent: number;
}

const freePort = freeLoopbackPort;

/** A node fixture that prints {"url"} on stdout when it listens. */
async function nodeFixture(name: string, file: string, env: Record<string, string>): Promise<Target> {
  const child = spawn(process.execPath, [join(BENCH_FIXTURES, file)], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`${file} exited ${code}`)));
  });
  return { name, url: (JSON.parse(line) as { url: string }).url, stop: () => stopChild(child, 'SIGTERM') };
}

/** `mcptap http --record` of this build, or of another (`bin`), recording to `db` in `dir`. */
async function mcptap(upstream: string, dir: string, bin = MCPTAP, name = 'mcptap http --record', db = 'bench-http.db'): Promise<Target> {
  const child = spawn(process.execPath, [bin, 'http', '--upstream', upstream, '--listen', '127.0.0.1:0', '--record', join(dir, db)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let err = '';
    child.stderr!.on('data', (b: Buffer) => {
      err += b.toString();
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`mcptap http exited ${code}: ${err}`)));
  });
  return { name, url, stop: () => stopChild(child, 'SIGTERM') };
}

/** nginx as a reverse proxy with upstream keep-alive and buffering off; undefined when not installed. */
async function nginx(upstream: string, dir: string): Promise<Target | undefined> {
  const bin = ['/usr/sbin/nginx', '/usr/bin/nginx', '/usr/local/sbin/nginx'].find((p) => spawnSync(p, ['-v']).status === 0);
  if (!bin) return undefined;
  const port = await freePort();
  const prefix = join(dir, 'nginx');
  mkdirSync(join(prefix, 'logs'), { recursive: true });
  const up = new URL(upstream);
  const conf = `
master_process off;
worker_processes 1;
daemon off;
error_log ${prefix}/logs/error.log warn;
pid ${prefix}/nginx.pid;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${prefix}/body;
  proxy_temp_path ${prefix}/proxy;
  fastcgi_temp_path ${prefix}/fastcgi;
  uwsgi_temp_path ${prefix}/uwsgi;
  scgi_temp_path ${prefix}/scgi;
  upstream mcp { server ${up.host}; keepalive 64; }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://mcp;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
      proxy_request_buffering off;
    }
  }
}`;
  const confPath = join(prefix, 'nginx.conf');
  writeFileSync(confPath, conf);
  const child = spawn(bin, ['-p', prefix, '-c', confPath], { stdio: ['ignore', 'ignore', 'inherit'] });
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null) throw new Error(`nginx exited ${child.exitCode}`);
    const ok = await fetch(`http://127.0.0.1:${port}${up.pathname}`, { method: 'POST', headers: HEADERS, body: BODY }).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return { name: 'nginx', url: `http://127.0.0.1:${port}${up.pathname}`, stop: () => stopChild(child, 'SIGTERM') };
}

/** Sequential requests over one keep-alive connection: per-request latency (ms) and req/s. */
async function oneConnection(t: Target): Promise<{ rps: number; p50: number; p99: number }> {
  const u = new URL(t.url);
  const client = new Client(u.origin, { pipelining: 1, keepAliveTimeout: 60_000 });
  const lat: number[] = [];
  try {
    for (let i = 0; i < LATENCY_WARMUP + LATENCY_REQUESTS; i++) {
      const s = process.hrtime.bigint();
      const r = await client.request({ path: u.pathname, method: 'POST', headers: HEADERS, body: BODY });
      await r.body.arrayBuffer();
      if (i >= LATENCY_WARMUP) lat.push(Number(process.hrtime.bigint() - s) / 1e6);
    }
  } finally {
    await client.close();
  }
  return { rps: LATENCY_REQUESTS / (lat.reduce((a, b) => a + b, 0) / 1000), p50: median(lat), p99: percentile(lat, 99) };
}

async function saturation(t: Target): Promise<{ rps: number; errors: number; sent: number }> {
  const r = await autocannon({
    url: t.url,
    method: 'POST',
    headers: HEADERS,
    body: BODY,
    connections: SATURATION_CONNECTIONS,
    pipelining: 1,
    duration: SATURATION_SECONDS,
  });
  return { rps: r.requests.average, errors: r.errors + r.non2xx + r.timeouts, sent: r.requests.sent };
}

/** One round of one target. */
interface Round {
  rps1: number;
  p50: number;
  p99: number;
  rpsSat: number;
}

/**
 * ROUNDS rounds; in each, every target in turn (so a burst of load from elsewhere on the machine
 * hits all of them alike). Each target's row is the median of its rounds; `rounds` keeps them all.
 */
async function measureAll(targets: Target[]): Promise<{ measured: Measured[]; rounds: Map<string, Round[]> }> {
  const rounds = new Map<string, Round[]>(targets.map((t) => [t.name, []]));
  const totals = new Map<string, { errors: number; sent: number }>(targets.map((t) => [t.name, { errors: 0, sent: 0 }]));
  for (let round = 0; round < ROUNDS; round++) {
    // With another build in the rounds, every other round runs backwards: neither build always follows the other.
    for (const t of BEFORE && round % 2 ? [...targets].reverse() : targets) {
      const one = await oneConnection(t);
      const sat = await saturation(t);
      rounds.get(t.name)!.push({ rps1: one.rps, p50: one.p50, p99: one.p99, rpsSat: sat.rps });
      const n = totals.get(t.name)!;
      n.errors += sat.errors;
      n.sent += LATENCY_WARMUP + LATENCY_REQUESTS + sat.sent;
    }
  }
  const measured = targets.map((t) => {
    const rs = rounds.get(t.name)!;
    const mid = (f: (r: Round) => number) => median(rs.map(f));
    return { name: t.name, rps1: mid((r) => r.rps1), p50: mid((r) => r.p50), p99: mid((r) => r.p99), rpsSat: mid((r) => r.rpsSat), ...totals.get(t.name)! };
  });
  return { measured, rounds };
}

export async function runHttpBench(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-http-bench-'));
  const notes: string[] = [];
  const started: Target[] = [];
  try {
    const upstream = await nodeFixture('direct', 'http-echo-server.mjs', {});
    started.push(upstream);
    started.push(await nodeFixture('bare undici passthrough', 'bare-http-proxy.mjs', { UPSTREAM: upstream.url }));
    const nx = await nginx(upstream.url, dir);
    if (nx) started.push(nx);
    else notes.push('nginx: skipped (binary not found; apt-get install -y nginx)');
    const taps = [await mcptap(upstream.url, dir)];
    if (BEFORE) taps.push(await mcptap(upstream.url, dir, BEFORE, BEFORE_TAP, 'bench-http-before.db'));
    started.push(...taps);
    const { measured, rounds } = await measureAll(started);
    // What the recordings kept: a rate bought by dropping most of the recording would be no win.
    for (const [i, tap] of taps.entries()) {
      started.splice(started.indexOf(tap), 1);
      await tap.stop();
      const sent = measured.find((m) => m.name === tap.name)!.sent;
      notes.push(keptNote(i ? 'before: mcptap --record' : 'mcptap --record', join(dir, i ? 'bench-http-before.db' : 'bench-http.db'), sent));
    }
    return [render(measured, rounds, notes), await sseTiming()].join('\n\n');
  } finally {
    for (const t of started.reverse()) await t.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What a stopped tap's recording kept of `sent` requests. */
function keptNote(what: string, db: string, sent: number): string {
  const store = RecordingStore.open(db);
  try {
    const r = store.listRecordings()[0]!;
    return `${what}: the recording kept ${r.exchanges} of ${sent} exchanges (${r.droppedQueue + r.droppedWrite} events dropped by the recorder)`;
  } finally {
    store.close();
  }
}

function render(results: Measured[], rounds: Map<string, Round[]>, notes: string[]): string {
  const direct = results.find((r) => r.name === 'direct')!;
  const bare = results.find((r) => r.name.startsWith('bare'));
  const tap = results.find((r) => r.name.startsWith('mcptap'));
  const before = results.find((r) => r.name === BEFORE_TAP);
  const rows = results.map((r) => [
    r.name,
    r.rps1.toFixed(0),
    r.p50.toFixed(3),
    r.p99.toFixed(3),
    r === direct ? '-' : `+${(r.p50 - direct.p50).toFixed(3)}`,
    r.rpsSat.toFixed(0),
    bare && r !== direct ? `${(r.rpsSat / bare.rpsSat).toFixed(2)}x` : '-',
    String(r.errors),
  ]);
  const out = [
    `POST tools/call (2026-07-28 headers), fake upstream answering at once; 1 connection: ${LATENCY_REQUESTS} sequential requests; ` +
      `saturation: ${SATURATION_CONNECTIONS} connections x ${SATURATION_SECONDS} s (autocannon); median of ${ROUNDS} interleaved rounds; ${cpus().length} CPUs, load average ${loadavg()[0]!.toFixed(2)}`,
    table(['target', 'req/s @1', 'p50 ms @1', 'p99 ms @1', 'added p50 ms', `req/s @${SATURATION_CONNECTIONS}`, 'vs bare', 'errors'], rows),
  ];
  if (tap && bare) {
    // Judged round by round: each round's tap against the same round's baseline, then the median round.
    const pair = (base: Measured, f: (t: Round, b: Round) => number, of: Measured = tap) =>
      rounds.get(of.name)!.map((t, i) => f(t, rounds.get(base.name)![i]!));
    const ratios = pair(bare, (t, b) => t.rpsSat / b.rpsSat);
    const addedMs = pair(direct, (t, d) => t.p50 - d.p50);
    const ratio = median(ratios);
    const added = median(addedMs);
    out.push(`mcptap --record throughput vs bare passthrough, median round: ${ratio.toFixed(2)}x (target >= 0.8x) ${ratio >= 0.8 ? 'PASS' : 'FAIL'}`);
    out.push(roundRatios(ratios));
    out.push(`mcptap --record added median latency at 1 connection, median round: ${added.toFixed(3)} ms (target <= 0.3 ms) ${added <= 0.3 ? 'PASS' : 'FAIL'}`);
    out.push(`  each round's added median latency: ${addedMs.map((x) => x.toFixed(3)).join(', ')} ms`);
    out.push(`(bare passthrough itself adds ${(bare.p50 - direct.p50).toFixed(3)} ms)`);
    if (before) {
      out.push(`against the MCPTAP_BENCH_BEFORE build (${BEFORE}), in the same rounds:`);
      out.push(
        ...beforeAfterLines(
          '--record throughput vs bare passthrough',
          ratios,
          pair(bare, (t, b) => t.rpsSat / b.rpsSat, before),
          { higher: true },
        ),
      );
      const beforeAdded = pair(direct, (t, d) => t.p50 - d.p50, before);
      out.push(...beforeAfterLines('--record added median latency @1', addedMs, beforeAdded, { higher: false, digits: 3, unit: ' ms' }));
    }
  }
  return [...out, ...notes].join('\n');
}

const monotonic: Clock = { nowUs: () => Number(process.hrtime.bigint() / 1000n) };

/** SSE event timing and disconnect propagation through an in-process tap (see the file comment). */
async function sseTiming(): Promise<string> {
  const child = spawn(process.execPath, [join(ROOT, 'test', 'fixtures', 'sse-ticker.mjs')], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! });
  const waiting: Array<(l: string) => void> = [];
  lines.on('line', (l) => waiting.shift()?.(l));
  const next = () => new Promise<string>((resolve) => waiting.push(resolve));
  const ask = async <T>(cmd: object): Promise<T> => {
    const p = next();
    child.stdin!.write(JSON.stringify(cmd) + '\n');
    return JSON.parse(await p) as T;
  };
  const { upstream } = JSON.parse(await next()) as { upstream: string };
  const pipeline = new Pipeline({ clock: monotonic });
  const frames = new Map<string, number[]>();
  const done = new Map<unknown, Exchange>();
  pipeline.subscribe((e) => {
    if (e.type === 'frame' && e.frame.channel === 'sse' && e.exchangeKey)
      (frames.get(e.exchangeKey) ?? frames.set(e.exchangeKey, []).get(e.exchangeKey)!).push(e.frame.timeUs);
    if (e.type === 'exchange-completed') done.set(e.exchange.id, e.exchange);
  });
  const tap = await startHttpTap({ upstream, port: 0, pipeline, clock: monotonic });
  try {
    await ask({ cmd: 'stream', url: tap.url, streams: 1, events: 5, interval: 5 });
    const r = await ask<{ ids: number[]; sent: Record<number, number[]>; recv: Record<number, number[]> }>({
      cmd: 'stream',
      url: tap.url,
      streams: 3,
      events: 40,
      interval: 50,
    });
    const diffs: number[] = [];
    let inOrder = true;
    for (const id of r.ids) {
      const recorded = frames.get(done.get(id)?.key ?? '') ?? [];
      r.recv[id]!.forEach((t, i) => recorded[i] !== undefined && diffs.push(Math.abs(t - recorded[i]!) / 1000));
      r.sent[id]!.forEach((t, i) => i > 0 && r.recv[id]![i - 1]! >= t && (inOrder = false));
    }
    await ask({ cmd: 'abort', url: tap.url, after: 1, interval: 5 });
    const aborts: number[] = [];
    for (let i = 0; i < 10; i++) {
      const a = await ask<{ abortedUs: number; closedUs: number | null }>({ cmd: 'abort', url: tap.url, after: 3, interval: 20 });
      if (a.closedUs !== null) aborts.push((a.closedUs - a.abortedUs) / 1000);
    }
    const p99 = percentile(diffs, 99);
    return [
      `SSE through the tap (3 streams x 40 events, one per 50 ms): |recorded event time - client receive time| p50 ${median(diffs).toFixed(3)} ms, p99 ${p99.toFixed(3)} ms (target < 2 ms) ${p99 < 2 ? 'PASS' : 'FAIL'}; every event reached the client before the next was sent: ${inOrder}`,
      `client abort -> upstream sees the close (${aborts.length} runs): median ${median(aborts).toFixed(3)} ms, max ${Math.max(...aborts).toFixed(3)} ms (target < 10 ms) ${median(aborts) < 10 ? 'PASS' : 'FAIL'}`,
    ].join('\n');
  } finally {
    child.stdin!.end();
    await tap.close();
    await pipeline.close();
    await stopChild(child, 'SIGTERM');
  }
}
