/**
 * Start/stop churn of `mcptap stdio --record`: `cycles` times, a tap is started in front of a
 * server, one call goes through it, its stdin is closed (the server exits, the tap closes its
 * recording and exits). Every tap records into the same file. Before and after: this process's
 * open descriptors and heap, the processes below it, and the entries of /dev/shm and the temp
 * directory that name the recording (the spool's, SQLite's). `concurrency` cycles run at once,
 * each lane one cycle after another into a file of its own (`db` with `-laneN`): lanes sharing one
 * file would measure SQLite's write lock, not start and stop. Shared by `npm run bench -- churn`
 * and test/tap/stdio-churn.test.ts.
 */
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname } from 'node:path';
import { RecordingStore } from '../src/store/recording-store.js';
import { descendants, leftFiles } from './crash-kill.js';

export interface ChurnResult {
  cycles: number;
  /** Cycles run at once. */
  concurrency: number;
  /** Wall time of the whole run, ms. */
  wallMs: number;
  answered: number;
  /** Taps that exited 0. */
  cleanExits: number;
  /** Recordings in the file, and how many are complete (ended, not marked incomplete). */
  recordings: number;
  complete: number;
  fds: { before: number; after: number };
  heapMiB: { before: number; after: number };
  /** Entries in /dev/shm and the temp dir: before, and after. */
  shmAndTmp: { before: number; after: number };
  /** Processes below this one left after the last cycle, and the recording's files left beside it. */
  leftProcesses: string[];
  leftFiles: string[];
  /** Wall time per cycle, ms (median is the caller's business). */
  cycleMs: number[];
}

const entries = () => readdirSync('/dev/shm').length + readdirSync(tmpdir()).length;
const fds = () => readdirSync('/proc/self/fd').length;
const heapMiB = () => {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed / 2 ** 20;
};

/** One cycle: start the tap, one call, stdin closed; resolves with the tap's exit code and whether the call was answered. */
function cycle(mcptap: string, server: string[], db: string, id: number): Promise<{ code: number | null; answered: boolean }> {
  const tap = spawn(process.execPath, [mcptap, 'stdio', '--record', db, '--', ...server], { stdio: ['pipe', 'pipe', 'inherit'] });
  let answered = false;
  tap.stdout.on('data', (b: Buffer) => {
    if (!answered && b.includes(`"id":${id}`)) {
      answered = true;
      tap.stdin.end();
    }
  });
  tap.stdin.on('error', () => {});
  tap.stdin.write(`{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}\n`);
  return new Promise((resolve) => tap.once('exit', (code) => resolve({ code, answered })));
}

export async function stdioChurn(
  mcptap: string,
  server: string[],
  db: string,
  cycles: number,
  onCycle?: (n: number) => void,
  concurrency = 1,
): Promise<ChurnResult> {
  const before = { fds: fds(), heap: heapMiB(), entries: entries() };
  // The churn's own processes (taps, their servers and indexers); not others the caller has below
  // it, such as a test process's shared browser.
  const ours = () => descendants(process.pid).filter((p) => [mcptap, server.join(' '), 'indexer-process'].some((s) => p.cmd.includes(s)));
  let answered = 0;
  let cleanExits = 0;
  let started = 0;
  let done = 0;
  const cycleMs: number[] = [];
  const t0 = performance.now();
  const lanes = Math.max(1, Math.min(concurrency, cycles));
  const dbs = Array.from({ length: lanes }, (_, i) => (lanes === 1 ? db : db.replace(/(\.db)?$/, `-lane${i}$1`)));
  const lane = async (file: string): Promise<void> => {
    while (started < cycles) {
      const n = ++started;
      const t = performance.now();
      const r = await cycle(mcptap, server, file, n);
      cycleMs.push(performance.now() - t);
      if (r.answered) answered++;
      if (r.code === 0) cleanExits++;
      onCycle?.(++done);
    }
  };
  await Promise.all(dbs.map(lane));
  const wallMs = performance.now() - t0;
  // The last indexer may outlive its tap by a moment (it completes the recording, then exits).
  for (let i = 0; i < 100 && ours().length > 0; i++) await new Promise((r) => setTimeout(r, 50));
  let recordings = 0;
  let complete = 0;
  for (const file of dbs) {
    const store = RecordingStore.open(file);
    try {
      for (const r of store.listRecordings()) {
        recordings++;
        if (r.endedUs !== undefined && r.meta?.incomplete === undefined) complete++;
      }
    } finally {
      store.close();
    }
  }
  return {
    cycles,
    concurrency,
    wallMs,
    answered,
    cleanExits,
    recordings,
    complete,
    fds: { before: before.fds, after: fds() },
    heapMiB: { before: before.heap, after: heapMiB() },
    shmAndTmp: { before: before.entries, after: entries() },
    leftProcesses: ours().map((p) => `${p.pid} ${p.cmd}`),
    leftFiles: dbs.flatMap((f) => leftFiles(dirname(f), basename(f))).filter((f) => !f.endsWith('-wal') && !f.endsWith('-shm')),
    cycleMs,
  };
}

export function churnSummary(r: ChurnResult): string {
  const sorted = [...r.cycleMs].sort((a, b) => a - b);
  const med = sorted[Math.floor(sorted.length / 2)] ?? NaN;
  const ok =
    r.answered === r.cycles &&
    r.cleanExits === r.cycles &&
    r.complete === r.cycles &&
    r.fds.after <= r.fds.before + 2 &&
    r.leftProcesses.length === 0 &&
    r.leftFiles.length === 0;
  return [
    `${r.cycles} start/stop cycles of mcptap stdio --record (one call each, ${r.concurrency} at a time, a recording file per lane, ${(r.wallMs / 1000).toFixed(0)} s):`,
    `  answered ${r.answered}, exit 0 ${r.cleanExits}, recordings ${r.recordings} (complete ${r.complete})`,
    `  this process: fds ${r.fds.before} -> ${r.fds.after}, heap after GC ${r.heapMiB.before.toFixed(1)} -> ${r.heapMiB.after.toFixed(1)} MiB`,
    `  /dev/shm + temp dir entries (machine-wide, other work included): ${r.shmAndTmp.before} -> ${r.shmAndTmp.after}`,
    `  left behind: ${r.leftProcesses.length} processes, ${r.leftFiles.length} files of the recording (spool)`,
    `  cycle time median ${med.toFixed(0)} ms, max ${(sorted.at(-1) ?? NaN).toFixed(0)} ms`,
    `  ${ok ? 'PASS' : 'FAIL'}`,
    ...r.leftProcesses.map((p) => `  left: ${p}`),
    ...r.leftFiles.map((f) => `  left: ${f}`),
  ].join('\n');
}
