/**
 * Live `--check` overhead: `mcptap http --record --check RULES` at saturation against the same tap
 * without `--check`, in the same run (issue 32: at most 10% fewer requests per second, median round).
 * Both taps run all along in their own processes in front of one fake upstream that answers at once
 * (bench/fixtures/http-echo-server.mjs), so the taps are what is measured. Each tap is warmed up
 * first (V8 tiers up the checkers' code); then ROUNDS rounds, each loading both taps in turn (the
 * order alternating) with autocannon, CONNECTIONS connections for SECONDS s; a round's ratio is
 * its own check/off rate, and the verdict takes the median round, with the spread. Also each tap's
 * CPU per answered request over the round and its drain (utime + stime from /proc, the tap and its
 * indexer, where the recorder's pipeline runs the check): the check may cost CPU more than rate. At the end the check
 * tap's recording must hold one `check` anomaly, the count assertion's, counting every exchange recorded.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import { RecordingStore } from '../src/store/recording-store.js';
import { BENCH_FIXTURES, treeCpuUs, listeningUrl, MCPTAP, median, roundRatios, stopChild, table, ECHO_CALL_BODY, ECHO_CALL_HEADERS } from './bench-util.js';

const CONNECTIONS = 32;
const SECONDS = Number(process.env.MCPTAP_BENCH_SECONDS) || 4;
/** Odd, so that the median round is a round. */
const ROUNDS = Number(process.env.MCPTAP_BENCH_ROUNDS) || 5;
const WARMUP_SECONDS = Number(process.env.MCPTAP_BENCH_WARMUP_S ?? 5);
/** Issue 32: live --check costs at most 10% of throughput. */
const TARGET_RATIO = 0.9;
/**
 * The default rules, an assertion judged on every call (what a CI rules file adds), and one that
 * fails once, at the tap's end, with the number of calls it saw: proof that the check ran on them.
 */
const RULES = `rules:
  surface/annotations-missing: off
assertions:
  - name: calls succeed
    select: { method: tools/call }
    expect: ['/result/isError != true']
  - name: calls counted
    select: { method: tools/call }
    expect: ['count < 0']
`;

interface Tap {
  name: string;
  url: string;
  db: string;
  child: ChildProcess;
  /** What it said on stderr (the check's summary at its end). */
  lines: string[];
}

async function startTap(name: string, upstream: string, db: string, extra: string[]): Promise<Tap> {
  const child = spawn(process.execPath, [MCPTAP, 'http', '--upstream', upstream, '--listen', '127.0.0.1:0', '--record', db, ...extra], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const url = await listeningUrl(child);
  const lines: string[] = [];
  createInterface({ input: child.stderr! }).on('line', (l) => lines.length < 100 && lines.push(l));
  return { name, url, db, child, lines };
}

async function startUpstream(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [join(BENCH_FIXTURES, 'http-echo-server.mjs')], { stdio: ['pipe', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.once('data', (b: Buffer) => resolve((JSON.parse(b.toString().split('\n')[0]!) as { url: string }).url));
    child.once('exit', (code) => reject(new Error(`http-echo-server exited ${code}`)));
  });
  return { url, child };
}

/**
 * Waits until the tap and its indexer stop using CPU (two 100 ms steps under 3 ms each; 30 s at
 * most): with --record the check runs in the recorder's pipeline, in the niced indexer process,
 * which may finish a round's backlog after the load stops. That CPU belongs to the round, and left
 * running it would slow the other tap's next round. Returns how long it took (ms).
 */
async function settle(t: Tap): Promise<number> {
  const t0 = performance.now();
  let last = treeCpuUs(t.child.pid);
  let quiet = 0;
  while (quiet < 2 && performance.now() - t0 < 30_000) {
    await new Promise((r) => setTimeout(r, 100));
    const now = treeCpuUs(t.child.pid);
    quiet = now - last < 3_000 ? quiet + 1 : 0;
    last = now;
  }
  return Math.max(0, performance.now() - t0 - 200);
}

async function load(t: Tap, seconds: number): Promise<{ rps: number; requests: number; errors: number; cpuUs: number; drainMs: number }> {
  const cpu0 = treeCpuUs(t.child.pid);
  const r = await autocannon({
    url: t.url,
    method: 'POST',
    headers: ECHO_CALL_HEADERS,
    body: ECHO_CALL_BODY,
    connections: CONNECTIONS,
    pipelining: 1,
    duration: seconds,
  });
  const drainMs = await settle(t);
  const n = Math.max(1, r.requests.total);
  return { rps: r.requests.average, requests: r.requests.total, errors: r.errors + r.non2xx + r.timeouts, cpuUs: (treeCpuUs(t.child.pid) - cpu0) / n, drainMs };
}

export async function runCheckLiveBench(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-check-live-'));
  const rules = join(dir, 'rules.yaml');
  writeFileSync(rules, RULES);
  const upstream = await startUpstream();
  const taps: Tap[] = [];
  try {
    taps.push(await startTap('mcptap http --record', upstream.url, join(dir, 'off.db'), []));
    taps.push(await startTap('mcptap http --record --check', upstream.url, join(dir, 'check.db'), ['--check', rules]));
    for (const t of taps) await load(t, WARMUP_SECONDS);
    const rounds = new Map<string, { rps: number; cpuUs: number; drainMs: number }[]>(taps.map((t) => [t.name, []]));
    let errors = 0;
    for (let round = 0; round < ROUNDS; round++) {
      for (const t of round % 2 === 0 ? taps : [...taps].reverse()) {
        const r = await load(t, SECONDS);
        errors += r.errors;
        rounds.get(t.name)!.push({ rps: r.rps, cpuUs: r.cpuUs, drainMs: r.drainMs });
      }
    }
    const [off, on] = taps.map((t) => rounds.get(t.name)!);
    const ratios = on!.map((r, i) => r.rps / off![i]!.rps);
    const verdict = median(ratios);
    for (const t of taps) await stopChild(t.child, 'SIGTERM');
    const store = RecordingStore.open(taps[1]!.db);
    let recorded = 0;
    let findings: string[] = [];
    try {
      const id = store.latestRecordingId()!;
      recorded = store.summary(id).exchanges;
      findings = store
        .anomalies(id)
        .filter((a) => a.kind === 'check')
        .map((a) => a.detail);
    } finally {
      store.close();
    }
    const rows = taps.map((t) => {
      const rs = rounds.get(t.name)!;
      return [t.name, median(rs.map((r) => r.rps)).toFixed(0), median(rs.map((r) => r.cpuUs)).toFixed(0), Math.max(...rs.map((r) => r.drainMs)).toFixed(0)];
    });
    const pass = verdict >= TARGET_RATIO && errors === 0 && recorded > 0 && findings.length === 1 && findings[0]!.includes(`count was ${recorded},`);
    return [
      `${cpus().length} CPUs, load average ${loadavg()[0]!.toFixed(2)}; ${ROUNDS} interleaved rounds of ${SECONDS} s, ${CONNECTIONS} connections, after ${WARMUP_SECONDS} s of warm-up each`,
      table(['tap', 'req/s (median round)', 'CPU µs/request, tap + indexer, with the drain (median)', 'longest drain ms'], rows),
      roundRatios(ratios, 'check/off rate'),
      `  spread of the ratio: ${Math.min(...ratios).toFixed(2)} to ${Math.max(...ratios).toFixed(2)}; CPU per request check/off (median round): ${median(on!.map((r, i) => r.cpuUs / off![i]!.cpuUs)).toFixed(2)}x`,
      `  the check tap recorded ${recorded.toLocaleString('en')} exchanges and ${findings.length} check finding(s) (expected 1, the count of them all): ${findings.join(' | ').slice(0, 300)}`,
      `  ${errors} request error(s)`,
      `target: --check >= ${TARGET_RATIO}x the rate without it, median round: ${pass ? 'PASS' : 'FAIL'} (${verdict.toFixed(2)}x)`,
    ].join('\n');
  } finally {
    for (const t of taps) await stopChild(t.child, 'SIGTERM');
    await stopChild(upstream.child, 'SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}
