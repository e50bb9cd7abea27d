/**
 * Crash durability (`npm run bench -- crash`): the recording tap SIGKILLed at random moments
 * under saturating traffic, 20 times over stdio (`mcptap stdio --record` in front of a 200 B echo
 * server) and 20 over HTTP (`mcptap http --record` in front of an echo upstream), a third of the
 * kills in the first second. Per kill: the file opens and passes `PRAGMA integrity_check`, `mcptap
 * ls` marks it incomplete, what answered traffic it lacks (crash-kill.ts says how that is
 * measured), and that no process or file is left behind. `--kills N` sets the count per transport;
 * `--after-file` counts the kill moments from when the recording file exists instead.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { BENCH_FIXTURES, MCPTAP, median, percentile, table } from './bench-util.js';
import { killOnce, type KillOutcome } from './crash-kill.js';
import { churnSummary, stdioChurn } from './stdio-churn.js';

const TARGET_LOSS_MS = 100;

/** Kill moments: a third in the first second (from 150 ms), the rest up to 5 s, in random order. */
function killTimes(n: number): number[] {
  const early = Math.ceil(n / 3);
  return Array.from({ length: n }, (_, i) => (i < early ? 150 + Math.random() * 850 : 1000 + Math.random() * 4000)).sort(() => Math.random() - 0.5);
}

function startEchoUpstream(): Promise<{ url: string; stop(): void }> {
  const child = spawn(process.execPath, [join(BENCH_FIXTURES, 'http-echo-server.mjs')], { stdio: ['pipe', 'pipe', 'inherit'] });
  return new Promise((resolve) => {
    child.stdout.once('data', (b: Buffer) => resolve({ url: (JSON.parse(b.toString()) as { url: string }).url, stop: () => child.stdin.end() }));
  });
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
    Number.isNaN(o.endedAfterMs) ? '-' : o.endedAfterMs.toFixed(0),
    String(o.leftProcesses.length),
    String(o.leftFiles.length),
  ]);
  const out = [
    table(['#', 'via', 'kill s', 'answered', 'missing', 'loss ms', 'holes', 'opens', 'integrity', 'incomplete', 'ended ms', 'procs', 'files'], rows),
  ];
  for (const t of ['stdio', 'http'] as const) {
    const of = outcomes.filter((o) => o.transport === t);
    if (!of.length) continue;
    const loss = of.map((o) => o.lossMs);
    const ok = of.filter((o) => o.opens && o.integrity === 'ok' && o.markedIncomplete).length;
    const within = of.filter((o) => o.lossMs <= TARGET_LOSS_MS).length;
    const left = of.reduce((n, o) => n + o.leftProcesses.length + o.leftFiles.length, 0);
    out.push(
      `${t}: ${ok}/${of.length} open, pass integrity_check and are marked incomplete; loss within ${TARGET_LOSS_MS} ms: ${within}/${of.length} ` +
        `(median ${median(loss).toFixed(1)} ms, p90 ${percentile(loss, 90).toFixed(1)}, max ${Math.max(...loss).toFixed(1)}); left behind: ${left} ` +
        `${ok === of.length && within === of.length && left === 0 ? 'PASS' : 'FAIL'}`,
    );
    for (const o of of) for (const l of [...o.leftProcesses, ...o.leftFiles]) out.push(`  left: ${l}`);
  }
  return out.join('\n');
}

export async function runCrashBench(argv: string[]): Promise<string> {
  const i = argv.indexOf('--kills');
  const kills = i >= 0 ? Number(argv[i + 1]) : 20;
  // `--after-file`: kill moments count from when the recording file exists (the indexer is up),
  // not from the tap's start: what the spool protects, apart from the start-up window before it.
  const afterFile = argv.includes('--after-file');
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-crash-'));
  const outcomes: KillOutcome[] = [];
  const load0 = loadavg()[0]!;
  const upstream = await startEchoUpstream();
  try {
    const server = [process.execPath, join(BENCH_FIXTURES, 'echo-server.mjs')];
    for (const [n, at] of killTimes(kills).entries()) {
      outcomes.push(await killOnce({ transport: 'stdio', mcptap: MCPTAP, server, dir, name: `crash-stdio-${n}.db`, killAtMs: at, afterFile }));
      process.stderr.write(`crash: stdio ${n + 1}/${kills}\n`);
    }
    for (const [n, at] of killTimes(kills).entries()) {
      outcomes.push(await killOnce({ transport: 'http', mcptap: MCPTAP, server: upstream.url, dir, name: `crash-http-${n}.db`, killAtMs: at, afterFile }));
      process.stderr.write(`crash: http ${n + 1}/${kills}\n`);
    }
  } finally {
    upstream.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const from = afterFile ? 'kill moments from when the recording file appeared' : "kill moments from the tap's start";
  return `${summarize(outcomes)}\n${from}; load average ${load0.toFixed(1)} -> ${loadavg()[0]!.toFixed(1)} on the run's start and end`;
}

/** `npm run bench -- churn [--cycles N]`: N (default 1,000) start/stop cycles of `mcptap stdio --record` (stdio-churn.ts). */
export async function runChurnBench(argv: string[]): Promise<string> {
  const i = argv.indexOf('--cycles');
  const cycles = i >= 0 ? Number(argv[i + 1]) : 1000;
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-churn-'));
  const load0 = loadavg()[0]!;
  try {
    const server = [process.execPath, join(BENCH_FIXTURES, 'echo-server.mjs')];
    const r = await stdioChurn(MCPTAP, server, join(dir, 'churn.db'), cycles, (n) => n % 50 === 0 && process.stderr.write(`churn: ${n}/${cycles}\n`));
    return `${churnSummary(r)}\nload average ${load0.toFixed(1)} -> ${loadavg()[0]!.toFixed(1)} on the run's start and end`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
