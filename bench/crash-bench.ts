/**
 * Crash durability (`npm run bench -- crash`): the recording tap SIGKILLed at random moments
 * under saturating traffic, 20 times over stdio (`mcptap stdio --record` in front of a 200 B echo
 * server) and 20 over HTTP (`mcptap http --record` in front of an echo upstream), a third of the
 * kills in the first second from the tap's start. Per kill: the indexer is waited for until it has
 * completed the recording and exited (bounded: `--indexer-wait S`, default 120 s; a kill whose
 * indexer ran longer is reported as not indexed yet, its loss unknown), then the file opens and
 * passes `PRAGMA integrity_check`, `mcptap ls` marks it incomplete, what answered traffic it lacks
 * (crash-kill.ts says how that is measured), and no process or file is left behind. A tap killed
 * before it answered anything may leave no file (nothing to record): counted apart. `--kills N` sets
 * the count per transport; `--after-file` counts the kill moments from when the recording file
 * exists instead, `--after-first-answer` from the host's first answer.
 *
 * MCPTAP_BENCH_BEFORE=/other/build/bin/mcptap.js kills that build's tap too, alternating with this
 * one's at the same kill moments (which goes first alternates too): `--kills N` gives N kills per
 * transport for each build, 4N in all. Each build's results are reported, then side by side.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { BEFORE, BENCH_FIXTURES, MCPTAP, median, percentile, table } from './bench-util.js';
import { killOnce, type KillOutcome, type KillRun } from './crash-kill.js';
import { churnSummary, stdioChurn } from './stdio-churn.js';

const TARGET_LOSS_MS = 100;

/** Kill moments: a third in the first second (from 50 ms), the rest up to 5 s, in random order. */
function killTimes(n: number): number[] {
  const early = Math.ceil(n / 3);
  return Array.from({ length: n }, (_, i) => (i < early ? 50 + Math.random() * 950 : 1000 + Math.random() * 4000)).sort(() => Math.random() - 0.5);
}

const ms = (v: number) => (Number.isNaN(v) ? '-' : v.toFixed(0));

function startEchoUpstream(): Promise<{ url: string; stop(): void }> {
  const child = spawn(process.execPath, [join(BENCH_FIXTURES, 'http-echo-server.mjs')], { stdio: ['pipe', 'pipe', 'inherit'] });
  return new Promise((resolve) => {
    child.stdout.once('data', (b: Buffer) => resolve({ url: (JSON.parse(b.toString()) as { url: string }).url, stop: () => child.stdin.end() }));
  });
}

/** One transport's kills of one build, summed up. */
function figures(of: KillOutcome[]) {
  // Nothing answered and no file: killed before it had anything to record.
  const empty = of.filter((o) => o.answered === 0 && !o.opens).length;
  const ok = of.filter((o) => o.opens && o.integrity === 'ok' && o.markedIncomplete).length;
  const unknown = of.filter((o) => o.indexers > 0 && Number.isNaN(o.indexerExitMs)).length;
  const known = of.filter((o) => !(o.indexers > 0 && Number.isNaN(o.indexerExitMs)));
  const loss = known.map((o) => o.lossMs);
  const within = known.filter((o) => o.lossMs <= TARGET_LOSS_MS).length;
  const left = of.reduce((n, o) => n + o.leftProcesses.length + o.leftFiles.length, 0);
  const exits = of.map((o) => o.indexerExitMs).filter((v) => !Number.isNaN(v));
  return { empty, ok, unknown, known, loss, within, left, exits, pass: ok === of.length - empty && within === of.length && left === 0 };
}

export function summarize(outcomes: KillOutcome[]): string {
  const rows = outcomes.map((o, i) => [
    String(i + 1),
    o.transport,
    (o.killAtMs / 1000).toFixed(2),
    String(o.answered),
    String(o.missing),
    o.lossMs.toFixed(1),
    String(o.holes),
    o.opens ? 'yes' : 'NO',
    o.integrity,
    o.markedIncomplete ? 'yes' : 'NO',
    ms(o.endedAfterMs),
    o.indexers === 0 ? 'none' : Number.isNaN(o.indexerExitMs) ? 'RUNNING' : ms(o.indexerExitMs),
    String(o.leftProcesses.length),
    String(o.leftFiles.length),
  ]);
  const out = [
    table(
      ['#', 'via', 'kill s', 'answered', 'missing', 'loss ms', 'holes', 'opens', 'integrity', 'incomplete', 'ended ms', 'indexer exit ms', 'procs', 'files'],
      rows,
    ),
  ];
  for (const t of ['stdio', 'http'] as const) {
    const of = outcomes.filter((o) => o.transport === t);
    if (!of.length) continue;
    const { empty, ok, unknown, known, loss, within, left, exits, pass } = figures(of);
    out.push(
      `${t}: ${ok}/${of.length - empty} files open, pass integrity_check and are marked incomplete` +
        `${empty ? ` (${empty} more killed before any answer, no file)` : ''}; ` +
        `loss within ${TARGET_LOSS_MS} ms: ${within}/${known.length} (median ${median(loss).toFixed(1)} ms, p90 ${percentile(loss, 90).toFixed(1)}, max ${Math.max(...loss).toFixed(1)})` +
        `${unknown ? `; ${unknown} not indexed within the wait (loss unknown)` : ''}; ` +
        `indexer exited ${exits.length ? `${median(exits).toFixed(0)} ms (median), ${Math.max(...exits).toFixed(0)} ms (max) after the kill` : '-'}; left behind: ${left} ` +
        `${pass ? 'PASS' : 'FAIL'}`,
    );
    for (const o of of) for (const l of [...o.leftProcesses, ...o.leftFiles]) out.push(`  left: ${l}`);
  }
  return out.join('\n');
}

/** Each build's kills side by side, a row per transport and build. */
function sideBySide(builds: Map<string, KillOutcome[]>): string {
  const rows: string[][] = [];
  for (const t of ['stdio', 'http'] as const)
    for (const [build, outcomes] of builds) {
      const of = outcomes.filter((o) => o.transport === t);
      if (!of.length) continue;
      const f = figures(of);
      rows.push([
        t,
        build,
        String(of.length),
        `${f.ok}/${of.length - f.empty}`,
        String(f.empty),
        `${f.within}/${f.known.length}`,
        f.loss.length ? median(f.loss).toFixed(1) : '-',
        f.loss.length ? Math.max(...f.loss).toFixed(1) : '-',
        String(f.unknown),
        String(f.left),
        f.pass ? 'PASS' : 'FAIL',
      ]);
    }
  return table(
    [
      'via',
      'build',
      'kills',
      'open+intact+incomplete',
      'no file',
      `loss <= ${TARGET_LOSS_MS} ms`,
      'loss median ms',
      'loss max ms',
      'not indexed',
      'left',
      'verdict',
    ],
    rows,
  );
}

export async function runCrashBench(argv: string[]): Promise<string> {
  const i = argv.indexOf('--kills');
  const kills = i >= 0 ? Number(argv[i + 1]) : 20;
  // Kill moments count from the tap's start, or from when the recording file exists, or from the host's first answer.
  const from: KillRun['from'] = argv.includes('--after-file') ? 'file' : argv.includes('--after-first-answer') ? 'first-answer' : undefined;
  const w = argv.indexOf('--indexer-wait');
  const indexerWaitMs = w >= 0 ? Number(argv[w + 1]) * 1000 : 120_000;
  const run = { mcptap: MCPTAP, indexerWaitMs, ...(from ? { from } : {}) } as const;
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-crash-'));
  // This build, and the MCPTAP_BENCH_BEFORE build: each with its kills, alternating at the same moments.
  const bins: [string, string][] = [['this build', MCPTAP], ...(BEFORE ? [['before', BEFORE] as [string, string]] : [])];
  const builds = new Map<string, KillOutcome[]>(bins.map(([b]) => [b, []]));
  const load0 = loadavg()[0]!;
  const upstream = await startEchoUpstream();
  try {
    const server = [process.execPath, join(BENCH_FIXTURES, 'echo-server.mjs')];
    for (const transport of ['stdio', 'http'] as const) {
      for (const [n, at] of killTimes(kills).entries()) {
        for (const [build, mcptap] of n % 2 ? [...bins].reverse() : bins) {
          const name = `crash-${transport}-${n}${mcptap === MCPTAP ? '' : '-before'}.db`;
          const target = transport === 'stdio' ? server : upstream.url;
          builds.get(build)!.push(await killOnce({ ...run, mcptap, transport, server: target, dir, name, killAtMs: at }));
          const who = BEFORE ? `${build} ` : '';
          process.stderr.write(`crash: ${who}${transport} ${n + 1}/${kills} ${JSON.stringify(builds.get(build)!.at(-1))}\n`);
        }
      }
    }
  } finally {
    upstream.stop();
    rmSync(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 250 }); // an indexer may still be completing a recording there
  }
  const moments = { file: 'when the recording file appeared', 'first-answer': "the host's first answer", none: "the tap's start" }[from ?? 'none'];
  const tail = `kill moments from ${moments}; indexer waited for up to ${indexerWaitMs / 1000} s per kill; load average ${load0.toFixed(1)} -> ${loadavg()[0]!.toFixed(1)} on the run's start and end`;
  if (!BEFORE) return `${summarize(builds.get('this build')!)}\n${tail}`;
  return [
    `this build (${MCPTAP}):`,
    summarize(builds.get('this build')!),
    `before, the MCPTAP_BENCH_BEFORE build (${BEFORE}), killed at the same moments, alternating with this build:`,
    summarize(builds.get('before')!),
    `side by side, ${kills} kills per transport for each build:`,
    sideBySide(builds),
    tail,
  ].join('\n');
}

/**
 * `npm run bench -- churn [--cycles N] [--parallel P]`: N (default 1,000) start/stop cycles of
 * `mcptap stdio --record`, P at a time (default 1; stdio-churn.ts).
 */
export async function runChurnBench(argv: string[]): Promise<string> {
  const i = argv.indexOf('--cycles');
  const cycles = i >= 0 ? Number(argv[i + 1]) : 1000;
  const p = argv.indexOf('--parallel');
  const parallel = p >= 0 ? Number(argv[p + 1]) : 1;
  if (!Number.isInteger(cycles) || cycles < 1 || !Number.isInteger(parallel) || parallel < 1) throw new Error('--cycles and --parallel take positive integers');
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-churn-'));
  const load0 = loadavg()[0]!;
  try {
    const server = [process.execPath, join(BENCH_FIXTURES, 'echo-server.mjs')];
    const progress = (n: number) => n % 50 === 0 && process.stderr.write(`churn: ${n}/${cycles}\n`);
    const r = await stdioChurn(MCPTAP, server, join(dir, 'churn.db'), cycles, progress, parallel);
    return `${churnSummary(r)}\nload average ${load0.toFixed(1)} -> ${loadavg()[0]!.toFixed(1)} on the run's start and end`;
  } finally {
    rmSync(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 250 }); // an indexer may still be completing a recording there
  }
}
