// Test helper: records a stdio MCP server through the built `mcptap stdio --record` CLI, driven by a
// child writing NDJSON lines (initialize, notifications/initialized, then each list request), and
// reads the recording back as the TapEvent stream a checker consumes.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TapEvent } from '../../src/model/events.js';
import { RecordingStore } from '../../src/store/recording-store.js';
import { FIXTURES, MCPTAP } from '../helpers/paths.js';

/** Records one session of `server` (a command line) asking each of `methods`; returns the recording file. */
export async function recordSession(db: string, server: string[], methods: string[] = ['tools/list']): Promise<string> {
  const child = spawn(process.execPath, [MCPTAP, 'stdio', '--record', db, '--', ...server], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (b: Buffer) => (out += b));
  child.stderr.on('data', (b: Buffer) => (err += b));
  const send = (msg: object) => child.stdin.write(JSON.stringify({ jsonrpc: '2.0', ...msg }) + '\n');
  const answered = (id: number) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer to ${id}: ${err}`)), 20_000);
      const check = () => {
        if (!out.split('\n').some((l) => l.includes(`"id":${id},`) || l.includes(`"id":${id}}`))) return;
        clearTimeout(timer);
        child.stdout.off('data', check);
        resolve();
      };
      child.stdout.on('data', check);
      check();
    });
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  send({ id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'surface-test', version: '1' } } });
  await answered(1);
  send({ method: 'notifications/initialized' });
  for (const [i, method] of methods.entries()) {
    send({ id: i + 2, method, params: {} });
    await answered(i + 2);
  }
  child.stdin.end();
  const code = await exited;
  if (code !== 0) throw new Error(`mcptap stdio exited ${code}: ${err}`);
  return db;
}

/** Records the scripted raw JSON-RPC server (test/fixtures/scripted-server.mjs) answering from `script`. */
export function recordScripted(dir: string, name: string, script: object, methods?: string[]): Promise<string> {
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify(script));
  return recordSession(join(dir, `${name}.db`), ['node', join(FIXTURES, 'scripted-server.mjs'), file], methods);
}

/** The latest recording of a file as events (read fully: the store is closed on return). */
export function recordedEvents(db: string): TapEvent[] {
  const store = RecordingStore.open(db, { create: false });
  try {
    return [...store.events(store.latestRecordingId()!)];
  } finally {
    store.close();
  }
}
