/**
 * Soak: `mcptap http --record FILE --otlp URL` in front of `mcptap reference --http`, driven at a
 * steady rate of `tools/call echo` for a configurable time (default 10 minutes:
 * `npm run bench -- soak --minutes 2`, or MCPTAP_SOAK_MINUTES; the rate with --rate or
 * MCPTAP_SOAK_RATE, requests per second). Every 10 s it samples the tap: RSS (tap and its indexer
 * process, /proc), open file descriptors (/proc/PID/fd), spool use (disk blocks of the spool's
 * unlinked file, through /proc/PID/fd), and the main thread's heap and event-loop delay, which the
 * tap does not expose: a preload (bench/fixtures/soak-probe.mjs, `node --import`) writes them.
 * Reported: the samples, growth over the second half (last sample vs the one at half time, and a
 * least-squares fit), and completeness: exchanges in the recording once the tap has exited, and
 * exchange spans the bench's OTLP endpoint received, each vs requests sent.
 *
 * MCPTAP_BENCH_BEFORE=/other/build/bin/mcptap.js runs that build's tap beside this one's, both at
 * once for the whole run, in front of the same reference server, each at the full rate with its own
 * OTLP endpoint: the report of each, then their figures side by side.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, existsSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Pool } from 'undici';
import { BEFORE, BENCH_FIXTURES, MCPTAP, stopChild, table, ECHO_CALL_BODY, ECHO_CALL_HEADERS } from './bench-util.js';
import { startReferenceChild } from './hostile-clients.js';
import { countingOtlpProcess, type CountingOtlpProcess } from './otlp-span-count.js';

const SAMPLE_MS = 10_000;
const CONNECTIONS = 8;
const TARGET_RSS_GROWTH = 0.05;

/** Minutes and rate from `--minutes N` / `--rate N` after `soak` on the command line, or the env. */
export function soakOptions(argv: string[]): { minutes: number; rate: number } {
  const arg = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  return {
    minutes: Number(arg('minutes') ?? process.env.MCPTAP_SOAK_MINUTES ?? 10),
    rate: Number(arg('rate') ?? process.env.MCPTAP_SOAK_RATE ?? 200),
  };
}

function statusKiB(pid: number, field: string): number {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : NaN;
  } catch {
    return NaN;
  }
}

function childPids(pid: number): number[] {
  const out: number[] = [];
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        out.push(...readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ').filter(Boolean).map(Number));
      } catch {
        /* thread gone */
      }
    }
  } catch {
    /* process gone */
  }
  return out;
}

/** Open fds of `pid`, and the bytes on disk (or tmpfs) of its spool files (unlinked, found by name). */
function fdsAndSpool(pid: number): { fds: number; spoolBytes: number } {
  let fds = 0;
  let spoolBytes = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    fds++;
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`).includes('.spool-')) spoolBytes += statSync(`/proc/${pid}/fd/${fd}`).blocks * 512;
    } catch {
      /* closed meanwhile */
    }
  }
  return { fds, spoolBytes };
}

interface Sample {
  s: number;
  sent: number;
  rssMiB: number;
  indexerRssMiB: number;
  fds: number;
  spoolMiB: number;
}

interface Probe {
  pid: number;
  t: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  eldP50Ms: number;
  eldP99Ms: number;
  eldMaxMs: number;
}

/** Relative growth per the least-squares line through (x, y), from its value at x[0] to x[last]. */
function fitGrowth(x: number[], y: number[]): number {
  const n = x.length;
  const mx = x.reduce((a, b) => a + b, 0) / n;
  const my = y.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < n; i++) {
    sxy += (x[i]! - mx) * (y[i]! - my);
    sxx += (x[i]! - mx) ** 2;
  }
  const slope = sxx ? sxy / sxx : 0;
  const at = (v: number) => my + slope * (v - mx);
  return at(x[n - 1]!) / at(x[0]!) - 1;
}

const pct = (g: number) => `${g >= 0 ? '+' : ''}${(g * 100).toFixed(1)}%`;

/** One tap of the soak: its process, its load, its samples. */
interface SoakTap {
  /** `this build` or `before`. */
  build: string;
  tap: ChildProcess;
  otlp: CountingOtlpProcess;
  file: string;
  probeFile: string;
  err: string;
  /** The tap's MCP path, and a pool of CONNECTIONS to it. */
  path: string;
  pool?: Pool;
  load: { sent: number; ok: number; failed: number; inFlight: number; maxInFlight: number };
  samples: Sample[];
}

/** `mcptap http --record --otlp` of build `bin` with the probe preloaded, up and listening, and its load's pool. */
async function startSoakTap(build: string, bin: string, upstream: string, dir: string): Promise<SoakTap> {
  const name = build === 'before' ? 'soak-before' : 'soak';
  const file = join(dir, `${name}.db`);
  const probeFile = join(dir, `${name}-probe.jsonl`);
  const otlp = await countingOtlpProcess();
  const tap = spawn(
    process.execPath,
    ['--import', join(BENCH_FIXTURES, 'soak-probe.mjs'), bin, 'http', '--upstream', upstream, '--listen', '127.0.0.1:0', '--record', file, '--otlp', otlp.url],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, MCPTAP_SOAK_PROBE_FILE: probeFile, MCPTAP_SOAK_PROBE_MS: String(SAMPLE_MS) } },
  );
  const t: SoakTap = { build, tap, otlp, file, probeFile, err: '', path: '/', load: { sent: 0, ok: 0, failed: 0, inFlight: 0, maxInFlight: 0 }, samples: [] };
  const url = await new Promise<string>((resolve, reject) => {
    tap.stderr!.on('data', (b: Buffer) => {
      t.err += b.toString();
      const m = /listening on (http:\/\/\S+)/.exec(t.err);
      if (m) resolve(m[1]!);
    });
    tap.once('exit', (code) => reject(new Error(`mcptap http (${build}) exited ${code}: ${t.err}`)));
  }).catch(async (err: unknown) => {
    await otlp.stop();
    throw err;
  });
  const u = new URL(url);
  t.path = u.pathname;
  t.pool = new Pool(u.origin, { connections: CONNECTIONS, pipelining: 1, keepAliveTimeout: 60_000 });
  return t;
}

/** One request to a tap, counted in its load. */
function send(t: SoakTap): void {
  const load = t.load;
  load.sent++;
  load.inFlight++;
  load.maxInFlight = Math.max(load.maxInFlight, load.inFlight);
  t.pool!.request({ path: t.path, method: 'POST', headers: ECHO_CALL_HEADERS, body: ECHO_CALL_BODY })
    .then(async (r) => {
      await r.body.arrayBuffer();
      r.statusCode === 200 ? load.ok++ : load.failed++;
    })
    .catch(() => load.failed++)
    .finally(() => load.inFlight--);
}

/** A sample of the tap's process, its indexer, its fds and spool. */
function sample(t: SoakTap, s: number): void {
  const pid = t.tap.pid!;
  const { fds, spoolBytes } = fdsAndSpool(pid);
  const kids = childPids(pid);
  t.samples.push({
    s,
    sent: t.load.sent,
    rssMiB: statusKiB(pid, 'VmRSS') / 1024,
    indexerRssMiB: kids.reduce((a, k) => a + statusKiB(k, 'VmRSS'), 0) / 1024,
    fds,
    spoolMiB: spoolBytes / 2 ** 20,
  });
}

/** What a stopped tap's recording and OTLP endpoint got: the completeness figures. */
async function completeness(t: SoakTap) {
  const tally = await t.otlp.tally();
  const db = new Database(t.file, { readonly: true });
  const recorded = (db.prepare('SELECT count(*) AS n FROM exchanges').get() as { n: number }).n;
  const completed = (db.prepare("SELECT count(*) AS n FROM exchanges WHERE state = 'completed'").get() as { n: number }).n;
  db.close();
  return { tally, recorded, completed, lost: t.load.sent - recorded, spansLost: t.load.sent - tally.spans.exchange };
}

type Completeness = Awaited<ReturnType<typeof completeness>>;

/** The main thread's probe lines of the tap. */
function probesOf(t: SoakTap): Probe[] {
  return existsSync(t.probeFile)
    ? readFileSync(t.probeFile, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Probe)
        .filter((p) => p.pid === t.tap.pid)
    : [];
}

/** The samples at or after half time (the growth figures' span). */
const secondHalf = (t: SoakTap, durationMs: number) => t.samples.filter((s) => s.s >= durationMs / 2000 - 1);

/** Relative change from the half-time sample to the last, NaN with fewer than two. */
function halfGrowth(half: Sample[], pick: (s: Sample) => number): number {
  return half.length >= 2 ? pick(half[half.length - 1]!) / pick(half[0]!) - 1 : NaN;
}

/** One tap's report: its samples, growth over the second half, load and completeness. */
function report(t: SoakTap, c: Completeness, durationMs: number, stopMs: number): string[] {
  const { samples, load } = t;
  const probes = probesOf(t);
  const half = secondHalf(t, durationMs);
  const rows = samples.map((s, i) => {
    const p = probes[i];
    return [
      s.s.toFixed(0),
      String(s.sent),
      s.rssMiB.toFixed(1),
      s.indexerRssMiB.toFixed(1),
      p ? (p.heapUsed / 2 ** 20).toFixed(1) : '-',
      p ? (p.external / 2 ** 20).toFixed(1) : '-',
      String(s.fds),
      s.spoolMiB.toFixed(1),
      p ? `${p.eldP50Ms.toFixed(1)}/${p.eldP99Ms.toFixed(1)}/${p.eldMaxMs.toFixed(0)}` : '-',
    ];
  });
  const growth = (pick: (s: Sample) => number) =>
    half.length >= 2
      ? `${pct(halfGrowth(half, pick))} (fit ${pct(
          fitGrowth(
            half.map((s) => s.s),
            half.map(pick),
          ),
        )})`
      : 'n/a';
  const halfProbes = probes.slice(Math.max(0, samples.length - half.length));
  const heapGrowth =
    halfProbes.length >= 2
      ? `${pct(halfProbes[halfProbes.length - 1]!.heapUsed / halfProbes[0]!.heapUsed - 1)} (fit ${pct(
          fitGrowth(
            halfProbes.map((p) => p.t),
            halfProbes.map((p) => p.heapUsed),
          ),
        )})`
      : 'n/a';
  const rssG = halfGrowth(half, (s) => s.rssMiB);
  const { tally, recorded, completed, lost, spansLost } = c;
  return [
    table(['s', 'sent', 'tap RSS MiB', 'indexer RSS MiB', 'heap used MiB', 'external MiB', 'fds', 'spool MiB', 'loop delay ms'], rows),
    `growth over the second half (last sample vs the one at half time; least-squares fit): tap RSS ${growth((s) => s.rssMiB)} (target < ${TARGET_RSS_GROWTH * 100}%) ${rssG < TARGET_RSS_GROWTH ? 'PASS' : 'FAIL'}; ` +
      `indexer RSS ${growth((s) => s.indexerRssMiB)}; heap used ${heapGrowth}; fds ${growth((s) => s.fds)}`,
    `load: ${load.sent} sent, ${load.ok} answered 200, ${load.failed} failed, at most ${load.maxInFlight} in flight`,
    `recorded: ${recorded} exchanges (${completed} completed) of ${load.sent} sent: ${lost === 0 ? '0 lost PASS' : `${lost} lost FAIL`}`,
    `spans: ${tally.spans.exchange} exchange spans (+${tally.spans.session} session, ${tally.spans.undecoded} undecodable exports) of ${load.sent}: ${spansLost === 0 ? '0 lost PASS' : `${spansLost} missing FAIL`}`,
    `tap stopped (SIGTERM) in ${(stopMs / 1000).toFixed(1)} s; its stderr: ${t.err.trim().split('\n').slice(1).join(' | ') || '(nothing past the listening line)'}`,
  ];
}

/** Both builds' figures, a row each. */
function sideBySide(taps: SoakTap[], done: Completeness[], durationMs: number): string {
  const rows = taps.map((t, i) => {
    const c = done[i]!;
    const rss = t.samples.map((s) => s.rssMiB);
    const half = secondHalf(t, durationMs);
    return [
      t.build,
      String(t.load.sent),
      String(c.recorded),
      String(c.tally.spans.exchange),
      String(c.lost),
      String(c.spansLost),
      rss.length ? rss[0]!.toFixed(1) : '-',
      rss.length ? rss[rss.length - 1]!.toFixed(1) : '-',
      rss.length ? Math.max(...rss).toFixed(1) : '-',
      pct(halfGrowth(half, (s) => s.rssMiB)),
      t.samples.length ? Math.max(...t.samples.map((s) => s.indexerRssMiB)).toFixed(1) : '-',
    ];
  });
  return table(
    ['build', 'sent', 'recorded', 'exported spans', 'lost', 'spans lost', 'RSS first', 'RSS last', 'RSS max', 'RSS 2nd half', 'indexer RSS max'],
    rows,
  );
}

export async function runSoakBench(argv: string[] = []): Promise<string> {
  const { minutes, rate } = soakOptions(argv);
  const durationMs = minutes * 60_000;
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-soak-'));
  const ref = await startReferenceChild(MCPTAP);
  // Both builds at once for the whole run rather than alternating halves: a soak's figures are growth over
  // time, and at this fixed rate (far from saturation) both see the same minutes of a noisy 2-core machine.
  const builds: [string, string][] = [['this build', MCPTAP], ...(BEFORE ? [['before', BEFORE] as [string, string]] : [])];
  const taps: SoakTap[] = [];
  try {
    for (const [build, bin] of builds) taps.push(await startSoakTap(build, bin, ref.url, dir));
    const t0 = performance.now();
    // Steady rate: each 10 ms tick sends what the schedule owes so far (catching up after a stall).
    await new Promise<void>((resolve) => {
      let nextSample = SAMPLE_MS;
      const tick = setInterval(() => {
        const elapsed = performance.now() - t0;
        const due = Math.floor((Math.min(elapsed, durationMs) / 1000) * rate);
        for (const t of taps) while (t.load.sent < due) send(t);
        if (elapsed >= nextSample) {
          for (const t of taps) sample(t, (performance.now() - t0) / 1000);
          nextSample += SAMPLE_MS;
        }
        if (elapsed >= durationMs) {
          clearInterval(tick);
          resolve();
        }
      }, 10);
    });
    while (taps.some((t) => t.load.inFlight > 0)) await new Promise((r) => setTimeout(r, 50));
    const endLoad = loadavg();
    const done: Completeness[] = [];
    const stopMs: number[] = [];
    for (const t of taps) {
      await t.pool!.close();
      t.pool = undefined;
      const stopT = performance.now();
      await stopChild(t.tap, 'SIGTERM');
      stopMs.push(performance.now() - stopT);
      done.push(await completeness(t));
    }
    const out = [
      `mcptap http --record --otlp (bench endpoint, counting spans) in front of mcptap reference --http; ${rate} tools/call echo per second over ${CONNECTIONS} keep-alive connections for ${minutes} min; ` +
        `samples every ${SAMPLE_MS / 1000} s; ${cpus().length} CPUs, load average at the end ${endLoad.map((l) => l.toFixed(2)).join(' ')}`,
      `heap and event-loop delay (p50/p99/max ms over each 10 s) of the tap's main thread, from a preload (bench/fixtures/soak-probe.mjs); RSS is the tap's process (all its threads), the indexer's separately`,
    ];
    if (!BEFORE) return [...out, ...report(taps[0]!, done[0]!, durationMs, stopMs[0]!)].join('\n');
    out.push(`with the MCPTAP_BENCH_BEFORE build (${BEFORE}) at once, each tap at ${rate}/s with its own OTLP endpoint, in front of the same reference server`);
    for (const [i, t] of taps.entries()) out.push(`${t.build}:`, ...report(t, done[i]!, durationMs, stopMs[i]!));
    out.push('side by side (RSS MiB of the tap process; the 2nd half: last sample vs the one at half time):', sideBySide(taps, done, durationMs));
    return out.join('\n');
  } finally {
    for (const t of taps) {
      await t.pool?.close();
      await stopChild(t.tap, 'SIGTERM');
      await t.otlp.stop();
    }
    await ref.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
