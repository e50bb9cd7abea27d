/**
 * Records a session with the scripted raw server (test/fixtures/scripted-server.mjs) through the built
 * `mcptap stdio --record`: a raw client sends initialize, initialized and each request, one at a time,
 * waiting for each answer, so breaches scripted into the server reach the wire and the recording.
 */
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { FIXTURES, MCPTAP } from '../helpers/paths.js';

export async function recordScripted(
  dir: string,
  name: string,
  script: object,
  requests: { method: string; params?: object }[],
  version = '2025-06-18',
  tapFlags: string[] = [],
): Promise<string> {
  const scriptFile = join(dir, `${name}.json`);
  const db = join(dir, `${name}.db`);
  writeFileSync(scriptFile, JSON.stringify(script));
  const child = spawn(
    process.execPath,
    [MCPTAP, 'stdio', '--record', db, ...tapFlags, '--', process.execPath, join(FIXTURES, 'scripted-server.mjs'), scriptFile],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  const waiting = new Map<number, () => void>();
  createInterface({ input: child.stdout }).on('line', (line) => {
    const id = (JSON.parse(line) as { id?: number }).id;
    if (id !== undefined) waiting.get(id)?.();
  });
  let next = 1;
  const call = (method: string, params?: object) =>
    new Promise<void>((resolve) => {
      const id = next++;
      waiting.set(id, resolve);
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, ...(params && { params }) })}\n`);
    });
  await call('initialize', { protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw-client', version: '1.0.0' } });
  child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  for (const r of requests) await call(r.method, r.params);
  const exited = new Promise((resolve) => child.on('exit', resolve));
  child.stdin.end();
  await exited;
  return db;
}

/** A read-only `search` tool, its answer when all goes well, and a session listing, calling it and pinging. */
export const SEARCH_TOOL = {
  name: 'search',
  description: 'find',
  inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
  annotations: { readOnlyHint: true },
};
export const SEARCH_OK = { content: [{ type: 'text', text: 'found' }], isError: false };
export const SEARCH_REQUESTS = [{ method: 'tools/list' }, { method: 'tools/call', params: { name: 'search', arguments: { q: 'x' } } }, { method: 'ping' }];

/** Records that session with a server listing `tool` and answering its call with `call`. */
export function recordSearch(dir: string, name: string, tool: object, call: object, tapFlags: string[] = []): Promise<string> {
  return recordScripted(dir, name, { results: { 'tools/list': { tools: [tool] } }, calls: { search: call } }, SEARCH_REQUESTS, undefined, tapFlags);
}

export function mcptap(...args: string[]): { code: number | null; out: string; err: string } {
  const r = spawnSync(process.execPath, [MCPTAP, ...args], { encoding: 'utf8', timeout: 30_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}
