import { spawnSync, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const here = dirname(fileURLToPath(import.meta.url));
/** Works from bench/ (tsx) and dist/bench/ (compiled). */
export const ROOT = here.includes(`${join('dist', 'bench')}`) ? join(here, '..', '..') : join(here, '..');
export const MCPTAP = join(ROOT, 'bin', 'mcptap.js');
export const BENCH_FIXTURES = join(ROOT, 'bench', 'fixtures');

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

export const median = (v: number[]) => percentile(v, 50);

export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** One 2026-07-28 `tools/call echo` request, as the HTTP benchmarks post it. */
export const ECHO_CALL_BODY = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: {
    name: 'echo',
    arguments: { text: 'hello' },
    _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} },
  },
});

/** The headers a 2026-07-28 client sends with {@link ECHO_CALL_BODY}. */
export const ECHO_CALL_HEADERS: Record<string, string> = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'tools/call',
  'mcp-name': 'echo',
};

/** Clock ticks per second of /proc's CPU times. */
export const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim()) || 100;

/** utime + stime of a process (all its threads), µs (Linux /proc); NaN elsewhere or once it is gone. */
export function cpuUs(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1e6) / CLK_TCK;
  } catch {
    return NaN;
  }
}

/**
 * Ends a child process and waits for it: its stdin is closed (and `signal` sent, when given); one
 * still running after `graceMs` (5 s) is killed.
 */
export function stopChild(child: ChildProcess, signal?: NodeJS.Signals, graceMs = 5000): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.stdin?.end();
    if (signal) child.kill(signal);
  });
}

/**
 * CPU (user + system, µs) used so far by process `pid` and every process below it (Linux /proc;
 * NaN elsewhere). Children are found through each thread's `children` list, so a child spawned by
 * a worker thread counts too. A process that has exited is no longer counted: read it while the
 * tree runs.
 */
export function treeCpuUs(pid: number | undefined): number {
  let us = cpuUs(pid);
  if (Number.isNaN(us)) return NaN;
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      let kids = '';
      try {
        kids = readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8');
      } catch {
        continue;
      }
      for (const kid of kids.split(' ').filter(Boolean)) {
        const k = treeCpuUs(Number(kid));
        if (!Number.isNaN(k)) us += k;
      }
    }
    return us;
  } catch {
    return NaN;
  }
}

/** Each round's own ratio of a run and their median (the verdict's figure), for the line under the verdict. */
export function roundRatios(ratios: number[], what = 'own ratio'): string {
  return `  each round's ${what}: ${ratios.map((x) => x.toFixed(2)).join(', ')} (median ${median(ratios).toFixed(2)}x)`;
}

/** The URL a starting `mcptap http` (or any child saying `listening on URL` on stderr) listens on; rejects if it exits first. */
export function listeningUrl(child: ChildProcess, what = 'mcptap http'): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let err = '';
    child.stderr!.on('data', (b: Buffer) => {
      err += b.toString();
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`${what} exited ${code}: ${err}`)));
  });
}

/** A process's peak RSS so far (VmHWM from /proc), KiB; 0 once it is gone. */
export function hwmKiB(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** Another build's bin/mcptap.js (MCPTAP_BENCH_BEFORE): benches that read it run that build's tap in the same run. */
export const BEFORE = process.env.MCPTAP_BENCH_BEFORE || undefined;

/** Median, spread (min-max) and each round's value, for a line of a build's figures. */
function roundFigures(values: number[], digits: number): string {
  const f = (x: number) => x.toFixed(digits);
  return `${values.map(f).join(', ')} (median ${f(median(values))}, spread ${f(Math.min(...values))}..${f(Math.max(...values))})`;
}

/**
 * Lines comparing this build with the MCPTAP_BENCH_BEFORE build on one figure taken each round
 * (a ratio to the round's baseline, or an added latency): each build's rounds, median and spread,
 * then its median against the other's spread. `higher`: whether a higher value is better.
 */
export function beforeAfterLines(what: string, after: number[], before: number[], opts: { higher: boolean; digits?: number; unit?: string }): string[] {
  const digits = opts.digits ?? 2;
  const unit = opts.unit ?? 'x';
  const [a, b] = [median(after), median(before)];
  const edge = opts.higher ? Math.min(...before) : Math.max(...before);
  const ok = opts.higher ? a >= edge : a <= edge;
  return [
    `  ${what}, this build, each round: ${roundFigures(after, digits)}`,
    `  ${what}, before,     each round: ${roundFigures(before, digits)}`,
    `  ${what}, medians: this build ${a.toFixed(digits)}${unit} vs before ${b.toFixed(digits)}${unit} (${a - b >= 0 ? '+' : ''}${(a - b).toFixed(digits)}); ` +
      `within the before's spread or better: ${ok ? 'yes' : 'NO'}`,
  ];
}
