/**
 * Drives the scripted raw JSON-RPC server through the built `mcptap stdio --record` CLI with a
 * plain NDJSON client (no SDK validation in the way: bad arguments reach the wire), then runs a
 * checker over the recording's TapEvent stream, as the check engine will.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Checker, CheckerFactory, RuleSettings } from '../../src/check/checker.js';
import type { Finding } from '../../src/check/finding.js';
import { RecordingStore } from '../../src/store/recording-store.js';
import { FIXTURES, MCPTAP } from '../helpers/paths.js';

export const SCRIPTED_SERVER = join(FIXTURES, 'scripted-server.mjs');

/** A request of the client: method and params (ids are numbered in order). */
export type Step = [method: string, params?: Record<string, unknown>];

/**
 * Records one stdio session: initialize, notifications/initialized, then each step, one at a time
 * (each answered before the next is sent). Returns the recording's path.
 */
export async function recordSession(dir: string, name: string, script: object, steps: Step[]): Promise<string> {
  const scriptFile = join(dir, `${name}.json`);
  const db = join(dir, `${name}.db`);
  writeFileSync(scriptFile, JSON.stringify(script));
  const tap = spawn(process.execPath, [MCPTAP, 'stdio', '--record', db, '--', process.execPath, SCRIPTED_SERVER, scriptFile], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  tap.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const exited = new Promise<number | null>((resolve) => tap.once('exit', (code) => resolve(code)));
  const waiting = new Map<number, () => void>();
  createInterface({ input: tap.stdout }).on('line', (line) => {
    const msg = JSON.parse(line) as { id?: number; method?: string };
    if (msg.method === undefined && msg.id !== undefined) waiting.get(msg.id)?.();
  });
  let id = 0;
  const request = (method: string, params?: Record<string, unknown>) =>
    new Promise<void>((resolve, reject) => {
      const mine = ++id;
      const timer = setTimeout(() => reject(new Error(`no answer to ${method} (#${mine}); tap stderr: ${stderr}`)), 10_000);
      waiting.set(mine, () => {
        clearTimeout(timer);
        resolve();
      });
      tap.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: mine, method, ...(params && { params }) }) + '\n');
    });
  await request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'ndjson-client', version: '1' } });
  tap.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
  for (const [method, params] of steps) await request(method, params);
  tap.stdin.end();
  const code = await exited;
  if (code !== 0) throw new Error(`tap exited ${code}: ${stderr}`);
  return db;
}

/** Resolves once the latest recording in `db` has ended (the tap finished it), bounded: 15 s. */
export async function recordingEnded(db: string): Promise<void> {
  for (let i = 0; i < 150; i++) {
    if (RecordingStore.hasRecording(db)) {
      const store = RecordingStore.open(db);
      try {
        const id = store.latestRecordingId();
        if (id !== undefined && store.getRecording(id)?.endedUs !== undefined) return;
      } finally {
        store.close();
      }
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`recording ${db} never ended`);
}

/** Runs a checker over every event of the latest recording in `db` (the engine's loop, in small). */
export function check(db: string, factory: CheckerFactory, settings: RuleSettings = new Map()): Finding[] {
  const store = RecordingStore.open(db);
  try {
    const checker: Checker = factory(settings);
    const findings: Finding[] = [];
    const emit = (f: Finding) => findings.push(f);
    for (const event of store.events(store.latestRecordingId()!)) checker.onEvent(event, emit);
    checker.finish(emit);
    return findings;
  } finally {
    store.close();
  }
}
