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
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, existsSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Pool } from 'undici';
import { BENCH_FIXTURES, MCPTAP, stopChild, table, ECHO_CALL_BODY, ECHO_CALL_HEADERS } from './bench-util.js';
import { startReferenceChild } from './hostile-clients.js';
import { countingOtlpProcess } from './otlp-span-count.js';

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

export async function runSoakBench(argv: string[] = []): Promise<string> {
  const { minutes, rate } = soakOptions(argv);
  const durationMs = minutes * 60_000;
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-soak-'));
  const file = join(dir, 'soak.db');
  const probeFile = join(dir, 'probe.jsonl');
  const ref = await startReferenceChild(MCPTAP);
  const otlp = await countingOtlpProcess();
  const tap = spawn(
    process.execPath,
    [
      '--import',
      join(BENCH_FIXTURES, 'soak-probe.mjs'),
      MCPTAP,
      'http',
      '--upstream',
      ref.url,
      '--listen',
      '127.0.0.1:0',
      '--record',
      file,
      '--otlp',
      otlp.url,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, MCPTAP_SOAK_PROBE_FILE: probeFile, MCPTAP_SOAK_PROBE_MS: String(SAMPLE_MS) } },
  );
  let tapErr = '';
  let pool: Pool | undefined;
  try {
    const url = await new Promise<string>((resolve, reject) => {
      tap.stderr!.on('data', (b: Buffer) => {
        tapErr += b.toString();
        const m = /listening on (http:\/\/\S+)/.exec(tapErr);
        if (m) resolve(m[1]!);
      });
      tap.once('exit', (code) => reject(new Error(`mcptap http exited ${code}: ${tapErr}`)));
    });
    const u = new URL(url);
    pool = new Pool(u.origin, { connections: CONNECTIONS, pipelining: 1, keepAliveTimeout: 60_000 });
    const load = { sent: 0, ok: 0, failed: 0, inFlight: 0, maxInFlight: 0 };
    const send = () => {
      load.sent++;
      load.inFlight++;
      load.maxInFlight = Math.max(load.maxInFlight, load.inFlight);
      pool!
        .request({ path: u.pathname, method: 'POST', headers: ECHO_CALL_HEADERS, body: ECHO_CALL_BODY })
        .then(async (r) => {
          await r.body.arrayBuffer();
          r.statusCode === 200 ? load.ok++ : load.failed++;
        })
        .catch(() => load.failed++)
        .finally(() => load.inFlight--);
    };
    const samples: Sample[] = [];
    const t0 = performance.now();
    const sample = () => {
      const { fds, spoolBytes } = fdsAndSpool(tap.pid!);
      const kids = childPids(tap.pid!);
      samples.push({
        s: (performance.now() - t0) / 1000,
        sent: load.sent,
        rssMiB: statusKiB(tap.pid!, 'VmRSS') / 1024,
        indexerRssMiB: kids.reduce((a, k) => a + statusKiB(k, 'VmRSS'), 0) / 1024,
        fds,
        spoolMiB: spoolBytes / 2 ** 20,
      });
    };
    // Steady rate: each 10 ms tick sends what the schedule owes so far (catching up after a stall).
    await new Promise<void>((resolve) => {
      let nextSample = SAMPLE_MS;
      const tick = setInterval(() => {
        const elapsed = performance.now() - t0;
        const due = Math.floor((Math.min(elapsed, durationMs) / 1000) * rate);
        while (load.sent < due) send();
        if (elapsed >= nextSample) {
          sample();
          nextSample += SAMPLE_MS;
        }
        if (elapsed >= durationMs) {
          clearInterval(tick);
          resolve();
        }
      }, 10);
    });
    while (load.inFlight > 0) await new Promise((r) => setTimeout(r, 50));
    const endLoad = loadavg();
    await pool.close();
    pool = undefined;
    const stopT = performance.now();
    await stopChild(tap, 'SIGTERM');
    const stopMs = performance.now() - stopT;
    const tally = await otlp.tally();
    const db = new Database(file, { readonly: true });
    const recorded = (db.prepare('SELECT count(*) AS n FROM exchanges').get() as { n: number }).n;
    const completed = (db.prepare("SELECT count(*) AS n FROM exchanges WHERE state = 'completed'").get() as { n: number }).n;
    db.close();

    const probes = existsSync(probeFile)
      ? readFileSync(probeFile, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Probe)
          .filter((p) => p.pid === tap.pid)
      : [];
    const half = samples.filter((s) => s.s >= durationMs / 2000 - 1);
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
        ? `${pct(pick(half[half.length - 1]!) / pick(half[0]!) - 1)} (fit ${pct(
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
    const rssG = half.length >= 2 ? half[half.length - 1]!.rssMiB / half[0]!.rssMiB - 1 : NaN;
    const lost = load.sent - recorded;
    const spansLost = load.sent - tally.spans.exchange;
    return [
      `mcptap http --record --otlp (bench endpoint, counting spans) in front of mcptap reference --http; ${rate} tools/call echo per second over ${CONNECTIONS} keep-alive connections for ${minutes} min; ` +
        `samples every ${SAMPLE_MS / 1000} s; ${cpus().length} CPUs, load average at the end ${endLoad.map((l) => l.toFixed(2)).join(' ')}`,
      `heap and event-loop delay (p50/p99/max ms over each 10 s) of the tap's main thread, from a preload (bench/fixtures/soak-probe.mjs); RSS is the tap's process (all its threads), the indexer's separately`,
      table(['s', 'sent', 'tap RSS MiB', 'indexer RSS MiB', 'heap used MiB', 'external MiB', 'fds', 'spool MiB', 'loop delay ms'], rows),
      `growth over the second half (last sample vs the one at half time; least-squares fit): tap RSS ${growth((s) => s.rssMiB)} (target < ${TARGET_RSS_GROWTH * 100}%) ${rssG < TARGET_RSS_GROWTH ? 'PASS' : 'FAIL'}; ` +
        `indexer RSS ${growth((s) => s.indexerRssMiB)}; heap used ${heapGrowth}; fds ${growth((s) => s.fds)}`,
      `load: ${load.sent} sent, ${load.ok} answered 200, ${load.failed} failed, at most ${load.maxInFlight} in flight`,
      `recorded: ${recorded} exchanges (${completed} completed) of ${load.sent} sent: ${lost === 0 ? '0 lost PASS' : `${lost} lost FAIL`}`,
      `spans: ${tally.spans.exchange} exchange spans (+${tally.spans.session} session, ${tally.spans.undecoded} undecodable exports) of ${load.sent}: ${spansLost === 0 ? '0 lost PASS' : `${spansLost} missing FAIL`}`,
      `tap stopped (SIGTERM) in ${(stopMs / 1000).toFixed(1)} s; its stderr: ${tapErr.trim().split('\n').slice(1).join(' | ') || '(nothing past the listening line)'}`,
    ].join('\n');
  } finally {
    await pool?.close();
    await stopChild(tap, 'SIGTERM');
    await otlp.stop();
    await ref.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
