/**
 * A client may pipeline requests right after initialize: messages sent before its answer are held per
 * connection and checked against the version it negotiates, not counted as never negotiated.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { protocolSchemaChecker } from '../../src/check/rules/protocol-schema-rule.js';
import { FIXTURES, MCPTAP } from '../helpers/paths.js';
import { check, recordingEnded } from './tool-contracts-tap.js';

const dir = mkdtempSync(join(tmpdir(), 'mcptap-pipelined-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const TOOL = { name: 'search', inputSchema: { type: 'object', properties: { q: { type: 'string' } } } };

/** Writes initialize, tools/list and tools/call in one write, waits for the three answers. */
async function recordPipelined(): Promise<string> {
  const scriptFile = join(dir, 'script.json');
  const db = join(dir, 'pipelined.db');
  // isError must be a boolean: a result-schema breach in the answer to the pipelined call.
  writeFileSync(scriptFile, JSON.stringify({ results: { 'tools/list': { tools: [TOOL] } }, calls: { search: { content: [], isError: 'true' } } }));
  const child = spawn(process.execPath, [MCPTAP, 'stdio', '--record', db, '--', process.execPath, join(FIXTURES, 'scripted-server.mjs'), scriptFile], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const answered = new Promise<void>((resolve) => {
    let n = 0;
    createInterface({ input: child.stdout }).on('line', () => ++n === 3 && resolve());
  });
  const msgs = [
    { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', id: 2, method: 'tools/list' },
    { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'search', arguments: { q: 'x' } } },
  ];
  child.stdin.write(msgs.map((m) => JSON.stringify(m) + '\n').join(''));
  await answered;
  const exited = new Promise((resolve) => child.on('exit', resolve));
  child.stdin.end();
  await exited;
  await recordingEnded(db);
  return db;
}

describe('messages pipelined before the initialize answer', () => {
  it('are checked against the negotiated version', async () => {
    const findings = check(await recordPipelined(), protocolSchemaChecker);
    expect(findings.map((f) => [f.ruleId, f.where.jsonRpcId, f.pointer, f.specVersion])).toEqual([
      ['protocol/result-schema', 3, '/result/isError', '2025-06-18'],
    ]);
  }, 60_000);
});
