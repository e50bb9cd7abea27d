/**
 * One run of a recording tap (the built CLI) in a process group of its own, driven by a paced
 * client (initialize, then a tools/call every 10 ms) against test/fixtures/logging-server.mjs, and
 * signalled as a terminal, `timeout` or systemd would: `kill(-pgid, sig)` at `atMs` after the spawn.
 * Reports which request ids the server logged as answered and which of them the recording lacks.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RecordingStore } from '../../src/store/recording-store.js';
import { FIXTURES, MCPTAP } from './paths.js';

export interface GroupSignalRun {
  transport: 'stdio' | 'http';
  /** When to signal: ms after the spawn, or after the server logged its first answer. */
  atMs: number;
  from?: 'spawn' | 'first-answer';
  /** Sent in order to the whole group, `gapMs` apart. */
  signals: NodeJS.Signals[];
  gapMs?: number;
  dir: string;
  name: string;
}

export interface GroupSignalOutcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Request ids the server answered. */
  logged: number;
  /** Of those, the ones the recording lacks. */
  missing: string[];
  fileExists: boolean;
  stderr: string;
}

const LOGGER = join(FIXTURES, 'logging-server.mjs');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { n: id } } });
const init = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
};

/** Whether any process of group `pgid` is left. */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Polls `cond` every 20 ms until it holds or `boundMs` passed. */
export async function waitFor(cond: () => boolean, boundMs: number): Promise<boolean> {
  for (const end = Date.now() + boundMs; Date.now() < end; await sleep(20)) if (cond()) return true;
  return cond();
}

/** A complete recording (ended), read; undefined while there is none. */
function recordedIds(db: string): Set<string> | undefined {
  if (!existsSync(db)) return undefined;
  try {
    const store = RecordingStore.open(db);
    try {
      const recs = store.listRecordings();
      if (recs.length === 0 || recs[0]!.endedUs === undefined) return undefined;
      return new Set(store.exchanges({ limit: 1_000_000 }).map((e) => JSON.stringify(e.id)));
    } finally {
      store.close();
    }
  } catch {
    return undefined;
  }
}

export async function runGroupSignal(o: GroupSignalRun): Promise<GroupSignalOutcome> {
  const db = join(o.dir, `${o.name}.db`);
  const log = join(o.dir, `${o.name}.log`);
  let upstream: ChildProcess | undefined;
  let args = ['stdio', '--record', db, '--', process.execPath, LOGGER, log];
  if (o.transport === 'http') {
    upstream = spawn(process.execPath, [LOGGER, log, '--http'], { stdio: ['pipe', 'pipe', 'inherit'] });
    const url = await new Promise<string>((r) => upstream!.stdout!.once('data', (b: Buffer) => r((JSON.parse(b.toString()) as { url: string }).url)));
    args = ['http', '--upstream', url, '--listen', '127.0.0.1:0', '--record', db];
  }
  // A session (and process group) of its own, as `setsid` makes it.
  const tap = spawn(process.execPath, [MCPTAP, ...args], { detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
  const pgid = tap.pid!;
  let stderr = '';
  tap.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
  tap.stdout!.resume();
  tap.stdin!.on('error', () => {});
  const exited = new Promise<[number | null, NodeJS.Signals | null]>((r) => tap.once('exit', (code, sig) => r([code, sig])));
  let n = 0;
  let url: string | undefined;
  const send = (m: object) => {
    if (o.transport === 'stdio') return void tap.stdin!.write(`${JSON.stringify(m)}\n`);
    url ??= /listening on (http:\/\/\S+)/.exec(stderr)?.[1];
    if (!url) return;
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    fetch(url, { method: 'POST', headers, body: JSON.stringify(m), signal: AbortSignal.timeout(3000) }).then(
      (r) => r.body?.cancel(),
      () => {},
    );
  };
  let initSent = false;
  const pace = setInterval(() => {
    if (!initSent) {
      send(init);
      initSent = o.transport === 'stdio' || url !== undefined;
    } else send(call(++n));
  }, 10);
  if (o.transport === 'stdio') {
    send(init);
    initSent = true;
  }
  if (o.from === 'first-answer') await waitFor(() => existsSync(log) && readFileSync(log, 'utf8').length > 0, 20_000);
  await sleep(o.atMs);
  for (const [i, sig] of o.signals.entries()) {
    if (i > 0) await sleep(o.gapMs ?? 30);
    try {
      process.kill(-pgid, sig);
    } catch {
      // the group is gone already
    }
  }
  let timer: NodeJS.Timeout | undefined;
  const [code, signal] = await Promise.race([exited, new Promise<[null, null]>((r) => (timer = setTimeout(() => r([null, null]), 20_000)))]);
  clearTimeout(timer);
  clearInterval(pace);
  if (groupAlive(pgid) && !(await waitFor(() => !groupAlive(pgid), 15_000))) process.kill(-pgid, 'SIGKILL');
  upstream?.stdin!.end();
  const logged = existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : [];
  // An indexer that completes the recording in the background (out of the group's reach) may outlive
  // the tap, on a busy machine by seconds: what it has not indexed within the bound counts as missing.
  let ids: Set<string> | undefined;
  if (logged.length > 0) await waitFor(() => (ids = recordedIds(db)) !== undefined && logged.every((id) => ids!.has(id)), 30_000);
  const missing = logged.filter((id) => !ids?.has(id));
  return { code, signal, logged: logged.length, missing, fileExists: existsSync(db), stderr };
}
