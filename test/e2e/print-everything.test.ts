/**
 * `mcptap stdio --print` with server-everything: a line per completed exchange on stderr, and the
 * tap's stdout byte for byte what the server wrote (the same input sent to the bare server gives
 * the same bytes). Without --print no such line appears.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, MCPTAP } from '../helpers/paths.js';

const EVERYTHING = join(BIN, 'mcp-server-everything');

const INPUT = [
  { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } },
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { message: 'printed' } } },
  { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'get-sum', arguments: { a: 'x' } } },
  { jsonrpc: '2.0', id: 4, method: 'no/such-method', params: {} },
];

/** Sends INPUT line by line, each request after the previous answer; ends stdin after the last answer. */
async function run(argv: string[]): Promise<{ stdout: Buffer; stderr: string }> {
  const child = spawn(process.execPath, argv, { stdio: ['pipe', 'pipe', 'pipe'] });
  const out: Buffer[] = [];
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  let answered = 0;
  let wake = () => {};
  child.stdout.on('data', (d: Buffer) => {
    out.push(d);
    answered = Buffer.concat(out)
      .toString()
      .split('\n')
      .filter((l) => /"id":\d/.test(l)).length;
    wake();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let requests = 0;
  for (const msg of INPUT) {
    child.stdin.write(`${JSON.stringify(msg)}\n`);
    if (!('id' in msg)) continue;
    requests++;
    while (answered < requests) await new Promise<void>((resolve) => (wake = resolve));
  }
  child.stdin.end();
  await exited;
  return { stdout: Buffer.concat(out), stderr };
}

describe('mcptap stdio --print', () => {
  it('prints a line per completed exchange on stderr; stdout stays the server’s bytes', async () => {
    const bare = await run([EVERYTHING, 'stdio']);
    const printed = await run([MCPTAP, 'stdio', '--print', '--', EVERYTHING, 'stdio']);
    expect(printed.stdout.equals(bare.stdout)).toBe(true);
    expect(printed.stdout.toString()).not.toMatch(/tools\/call echo/);
    const lines = printed.stderr.split('\n').filter((l) => /^\d\d:\d\d:\d\d\.\d{3} /.test(l));
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/^\S+ \S+ initialize ok \d/);
    expect(lines[1]).toMatch(/ tools\/call echo ok \d/);
    expect(lines[2]).toMatch(/ tools\/call get-sum tool_error \d/);
    expect(lines[3]).toMatch(/ no\/such-method jsonrpc_error -32601 \d/);
    // Not a terminal: no colour.
    expect(printed.stderr).not.toContain('\x1b[');
  }, 60_000);

  it('prints nothing of the kind without --print', async () => {
    const quiet = await run([MCPTAP, 'stdio', '--', EVERYTHING, 'stdio']);
    expect(quiet.stderr).not.toMatch(/tools\/call echo ok/);
    expect(quiet.stdout.toString()).toMatch(/"id":2/);
  }, 60_000);
});
