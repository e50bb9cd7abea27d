/**
 * One SIGKILL of a recording tap under saturating traffic, and what it left: the parts the crash
 * bench (crash-bench.ts) and the crash test (test/tap/crash.test.ts) share.
 *
 * Loss, as measured: the host (this process) stamps each answer as it arrives. After the kill, the
 * recording indexer (which outlives the tap and completes the recording from its spool) is waited
 * for until it exits, within a bound: what it had not indexed by then is "not indexed yet", not lost,
 * and the outcome says so. Then the exchanges in the recording that have their response are
 * compared with the answers the host got before it sent SIGKILL; the loss is the span from the first
 * such answer missing in the recording to the last answer before the kill (0 when none is
 * missing), and the count of answers missing.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Pool } from 'undici';
import { responseOf } from '../src/store/exchange-rows.js';
import type { Row } from '../src/store/row-helpers.js';
import { RecordingStore } from '../src/store/recording-store.js';
import { SQL } from '../src/store/statements.js';
import { listeningUrl } from './bench-util.js';

export interface KillOutcome {
  transport: 'stdio' | 'http';
  killAtMs: number;
  answered: number;
  recorded: number;
  missing: number;
  /** Span of answered traffic missing from the recording (see the header), ms. */
  lossMs: number;
  /** Missing answers that are not at the tail (a hole, not a cut). */
  holes: number;
  opens: boolean;
  integrity: string;
  /** `mcptap ls --json` says the recording is not complete. */
  markedIncomplete: boolean;
  /** How long after the kill the recording was ended by the indexer, ms (NaN: not within the wait). */
  endedAfterMs: number;
  /** How long after the kill the last indexer process exited, ms; NaN when one still ran after the bounded wait (then the loss is not known). */
  indexerExitMs: number;
  /** Indexer processes seen (0: the tap was killed before it spawned one). */
  indexers: number;
  /** Processes of the tap's tree (server, indexer) still alive once the recording was ended. */
  leftProcesses: string[];
  /** Files of this recording left in /dev/shm, the temp dir or beside the recording. */
  leftFiles: string[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every process below `pid` (Linux /proc, through each thread's children list), with its command line. */
export function descendants(pid: number): { pid: number; cmd: string }[] {
  const out: { pid: number; cmd: string }[] = [];
  let tids: string[] = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    let kids: number[] = [];
    try {
      kids = readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
    } catch {
      continue;
    }
    for (const kid of kids) {
      let cmd = '?';
      try {
        cmd = readFileSync(`/proc/${kid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
      } catch {
        /* gone */
      }
      out.push({ pid: kid, cmd }, ...descendants(kid));
    }
  }
  return out;
}

/** Alive and not a zombie. */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Names in /dev/shm, the temp dir and `dir` that belong to the recording `base` (its spool files, SQLite's -wal/-shm/-journal). */
export function leftFiles(dir: string, base: string): string[] {
  const out: string[] = [];
  for (const d of ['/dev/shm', tmpdir(), dir]) {
    let names: string[] = [];
    try {
      names = readdirSync(d);
    } catch {
      continue;
    }
    for (const n of names) if (n !== base && n.includes(base)) out.push(join(d, n));
  }
  return out;
}

/**
 * Waits (bounded by `ms`) until every indexer process has exited, noting when the recording in `db`
 * got its end: [ms until the end, ms until the indexers exited], each NaN when not within the wait.
 */
async function waitIndexed(db: string, ms: number, indexers: number[]): Promise<[number, number]> {
  const t0 = performance.now();
  let ended = NaN;
  for (;;) {
    if (Number.isNaN(ended) && existsSync(db)) {
      try {
        const store = RecordingStore.open(db);
        try {
          if (store.listRecordings()[0]?.endedUs !== undefined) ended = performance.now() - t0;
        } finally {
          store.close();
        }
      } catch {
        /* being created */
      }
    }
    if (!indexers.some(alive)) return [ended, performance.now() - t0];
    if (performance.now() - t0 >= ms) return [ended, NaN];
    await sleep(50);
  }
}

/** What `mcptap ls --json FILE` says: complete or not (undefined when it fails). */
function lsComplete(mcptap: string, db: string): Promise<boolean | undefined> {
  return new Promise((resolve) => {
    const ls = spawn(process.execPath, [mcptap, 'ls', '--json', db], { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    ls.stdout.on('data', (b: Buffer) => (out += b.toString()));
    ls.on('exit', (code) => {
      if (code !== 0) return resolve(undefined);
      try {
        const j = JSON.parse(out) as { recordings: { complete: boolean }[] };
        resolve(j.recordings.every((r) => r.complete));
      } catch {
        resolve(undefined);
      }
    });
  });
}

/**
 * JSON-RPC ids (numbers) of the exchanges the recording holds with their response: the store's own
 * row query and response reader (`responseOf`, as `exchanges()` reads it), without building whole
 * exchanges (request, progress, every field), which took 20 times as long over the 100,000s a
 * saturated tap records.
 */
function recordedIds(db: string): Set<number> | undefined {
  if (!existsSync(db)) return undefined;
  const store = RecordingStore.open(db);
  let recordings: number[];
  try {
    recordings = store.listRecordings().map((r) => r.id);
  } finally {
    store.close();
  }
  const d = new Database(db, { readonly: true });
  try {
    const ids = new Set<number>();
    const rows = d.prepare(`${SQL.exchangeSelect} WHERE e.recording_id = ?`);
    for (const id of recordings) for (const r of rows.iterate(id) as Iterable<Row>) if (responseOf(r) !== undefined) ids.add(Number(r.id_text));
    return ids;
  } finally {
    d.close();
  }
}

/** A host driving a tap: `send()` keeps `window` requests in flight; answer times by id. */
export interface Driver {
  answeredAt: Map<number, number>;
  /** Resolves when the first answer is stamped. */
  firstAnswer: Promise<void>;
  stop(): void;
}

/** stdio: `mcptap stdio --record DB -- node echo-server.mjs` (200 B answers), 64 requests in flight. */
export function driveStdio(mcptap: string, server: string[], db: string, env: NodeJS.ProcessEnv, flags: string[] = []): { tap: ChildProcess; driver: Driver } {
  const tap = spawn(process.execPath, [mcptap, 'stdio', '--record', db, ...flags, '--', ...server], { stdio: ['pipe', 'pipe', 'pipe'], env });
  tap.stderr!.on('data', () => {});
  const answeredAt = new Map<number, number>();
  let answered!: () => void;
  const firstAnswer = new Promise<void>((r) => (answered = r));
  let next = 1;
  let stopped = false;
  const sendMore = () => {
    if (stopped) return;
    let batch = '';
    while (next - answeredAt.size <= 64) batch += `{"jsonrpc":"2.0","id":${next++},"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}\n`;
    if (batch) tap.stdin!.write(batch);
  };
  let rest = '';
  tap.stdout!.on('data', (b: Buffer) => {
    const now = performance.now();
    const lines = (rest + b.toString()).split('\n');
    rest = lines.pop()!;
    for (const l of lines) {
      const m = /"id":(\d+)/.exec(l);
      if (m) answeredAt.set(Number(m[1]), now);
    }
    if (answeredAt.size > 0) answered();
    sendMore();
  });
  tap.stdin!.on('error', () => {});
  sendMore();
  return { tap, driver: { answeredAt, firstAnswer, stop: () => (stopped = true) } };
}

/** HTTP: `mcptap http --record DB` in front of `upstream`, 8 keep-alive connections, 4 requests each in flight. */
async function driveHttp(mcptap: string, upstream: string, db: string, env: NodeJS.ProcessEnv): Promise<{ tap: ChildProcess; driver: Driver }> {
  const tap = spawn(process.execPath, [mcptap, 'http', '--upstream', upstream, '--listen', '127.0.0.1:0', '--record', db], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env,
  });
  const url = await listeningUrl(tap);
  tap.stderr!.resume();
  const { origin, pathname } = new URL(url);
  const pool = new Pool(origin, { connections: 8, pipelining: 1 });
  const answeredAt = new Map<number, number>();
  let answered!: () => void;
  const firstAnswer = new Promise<void>((r) => (answered = r));
  let next = 1;
  let stopped = false;
  const one = async (): Promise<void> => {
    while (!stopped) {
      const id = next++;
      const body = JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } });
      try {
        const res = await pool.request({
          method: 'POST',
          path: pathname,
          body,
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        });
        await res.body.text();
        if (!stopped && res.statusCode === 200) {
          answeredAt.set(id, performance.now());
          answered();
        }
      } catch {
        return; // the tap is gone
      }
    }
  };
  for (let i = 0; i < 32; i++) void one();
  return {
    tap,
    driver: {
      answeredAt,
      firstAnswer,
      stop: () => {
        stopped = true;
        void pool.destroy();
      },
    },
  };
}

export interface KillRun {
  transport: 'stdio' | 'http';
  mcptap: string;
  /** stdio: the server's argv; http: the upstream URL. */
  server: string[] | string;
  dir: string;
  name: string;
  /** When to kill, ms after the tap's start (or after the moment `from` names). */
  killAtMs: number;
  /**
   * Count `killAtMs` from when the recording file exists (the indexer is up), or from when the host
   * got its first answer, instead of from the tap's start; waited for at most 60 s.
   */
  from?: 'file' | 'first-answer';
  env?: NodeJS.ProcessEnv;
  /** How long to wait for the indexer to complete the recording and exit after the kill (ms; default 120 s). */
  indexerWaitMs?: number;
}

/** Starts a recording tap, drives it, SIGKILLs it `killAtMs` after its start, and checks what is left. */
export async function killOnce(run: KillRun): Promise<KillOutcome> {
  const db = join(run.dir, run.name);
  const env = run.env ?? process.env;
  const t0 = performance.now();
  const { tap, driver } =
    run.transport === 'stdio' ? driveStdio(run.mcptap, run.server as string[], db, env) : await driveHttp(run.mcptap, run.server as string, db, env);
  const exited = new Promise<void>((r) => tap.once('exit', () => r()));
  // Sample the tree until the kill: the indexer starts late, the server early.
  const tree = new Map<number, string>();
  const sample = () => {
    for (const p of descendants(tap.pid!)) tree.set(p.pid, p.cmd);
  };
  if (run.from === 'file') while (!existsSync(db) && performance.now() - t0 < 60_000) await sleep(20);
  if (run.from === 'first-answer') await Promise.race([driver.firstAnswer, sleep(60_000)]);
  const killAt = (run.from ? performance.now() : t0) + run.killAtMs;
  while (performance.now() < killAt) {
    sample();
    await sleep(Math.min(20, Math.max(0, killAt - performance.now())));
  }
  sample();
  const killedAt = performance.now();
  tap.kill('SIGKILL');
  driver.stop();
  const answered = [...driver.answeredAt].filter(([, t]) => t <= killedAt);
  await exited;
  const indexers = [...tree].filter(([, cmd]) => cmd.includes('indexer')).map(([pid]) => pid);
  const [endedAfterMs, indexerExitMs] = await waitIndexed(db, run.indexerWaitMs ?? 120_000, indexers);
  // The server's and indexer's exits follow the recording's end by a moment.
  const until = performance.now() + 5000;
  while ([...tree.keys()].some(alive) && performance.now() < until) await sleep(50);
  const leftProcesses = [...tree].filter(([pid]) => alive(pid)).map(([pid, cmd]) => `${pid} ${cmd}`);
  let opens = false;
  let integrity = 'no file';
  if (existsSync(db)) {
    try {
      const d = new Database(db, { readonly: true });
      integrity = String(d.pragma('integrity_check', { simple: true }));
      d.close();
      opens = true;
    } catch (err) {
      integrity = (err as Error).message;
    }
  }
  const ids = opens ? (recordedIds(db) ?? new Set<number>()) : new Set<number>();
  const missing = answered.filter(([id]) => !ids.has(id)).sort((a, b) => a[1] - b[1]);
  const lastAnswer = answered.reduce((m, [, t]) => Math.max(m, t), 0);
  const lossMs = missing.length ? lastAnswer - missing[0]![1] : 0;
  const firstMissingAt = missing[0]?.[1] ?? Infinity;
  const holes = answered.filter(([id, t]) => t > firstMissingAt && ids.has(id)).length;
  const complete = opens ? await lsComplete(run.mcptap, db) : undefined;
  return {
    transport: run.transport,
    killAtMs: killedAt - t0,
    answered: answered.length,
    recorded: ids.size,
    missing: missing.length,
    lossMs,
    holes,
    opens,
    integrity,
    markedIncomplete: complete === false,
    endedAfterMs,
    indexerExitMs,
    indexers: indexers.length,
    leftProcesses,
    leftFiles: leftFiles(run.dir, run.name),
  };
}
