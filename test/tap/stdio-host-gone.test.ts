/**
 * A host that closes its end of the stdio tap's stdout mid-call (it crashed, or a client called
 * `process.exit` from a progress callback) has left, as if its stdin had ended: the tap stops the
 * server, closes the recording and exits as then, and the recording is not called incomplete. Both
 * ways: a tap that is SIGKILLed mid-call still leaves a recording marked INCOMPLETE. Real processes:
 * the built CLI in front of the SDK notes server (summarize sends progress), loopback pipes.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { RecordingStore } from '../../src/store/recording-store.js';
import { waitFor } from '../helpers/group-signal-run.js';
import { exitOf } from '../helpers/signal-child.js';
import { FIXTURES, MCPTAP, ROOT } from '../helpers/paths.js';

const dir = mkdtempSync(join(tmpdir(), 'mcptap-host-gone-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const NOTES = join(FIXTURES, 'notes-server.mjs');
/** The built CLI; a tap's indexer still completing the recording is waited for up to 60 s (a loaded machine). */
const mcptap = (...args: string[]) =>
  spawnSync(process.execPath, [MCPTAP, ...args], { encoding: 'utf8', timeout: 90_000, env: { ...process.env, MCPTAP_INDEXER_WAIT_MS: '60000' } });
const journals = (name: string) => readdirSync(dir).filter((f) => f.startsWith(`.${name}.tap-`));
const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
const CALL = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'summarize', arguments: { seconds: 2 }, _meta: { progressToken: 't' } } };

/** The tap in front of the notes server, a raw host on its pipes; resolves once the call's first progress has reached the host. */
async function tapMidCall(name: string): Promise<{ db: string; tap: ChildProcess; exited: Promise<number | null>; stderr: () => string }> {
  const db = join(dir, name);
  const tap = spawn(process.execPath, [MCPTAP, 'stdio', '--record', db, '--', process.execPath, NOTES], { stdio: ['pipe', 'pipe', 'pipe'] });
  const exited = exitOf(tap);
  let out = '';
  let stderr = '';
  tap.stdout!.on('data', (b: Buffer) => (out += b.toString()));
  tap.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
  tap.stdin!.on('error', () => {});
  const send = (m: object) => tap.stdin!.write(`${JSON.stringify(m)}\n`);
  send(INIT);
  expect(await waitFor(() => out.includes('"id":1'), 30_000), stderr).toBe(true);
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  send(CALL);
  expect(await waitFor(() => out.includes('notifications/progress'), 30_000), stderr).toBe(true);
  return { db, tap, exited, stderr: () => stderr };
}

function calls(db: string) {
  const store = RecordingStore.open(db);
  try {
    return { recordings: store.listRecordings(), exchanges: store.exchanges({ limit: 100 }) };
  } finally {
    store.close();
  }
}

describe.skipIf(process.platform !== 'linux')('a host that closes the stdio tap’s stdout mid-call', () => {
  it('has left: the tap stops the server and closes the recording, which is complete', async () => {
    const t = await tapMidCall('out-closed.db');
    // The host's read end goes; its stdin stays open (a host that died with a pipe still held elsewhere).
    t.tap.stdout!.destroy();
    expect(await t.exited, t.stderr()).toBe(0);
    // Right after the exit: nothing claimed lost, nothing left for a later command to say.
    const ls = mcptap('ls', t.db);
    expect(ls.status, ls.stderr).toBe(0);
    expect(ls.stderr).toBe('');
    expect(ls.stdout).not.toMatch(/INCOMPLETE/);
    expect(journals('out-closed.db')).toEqual([]);
    const check = mcptap('check', t.db);
    expect(`${check.stdout}${check.stderr}`).not.toMatch(/incomplete-recording/);
    const { recordings, exchanges } = calls(t.db);
    expect(recordings[0]!.endedUs).toBeDefined();
    expect(exchanges.map((e) => e.method)).toEqual(['initialize', 'tools/call']);
    t.tap.stdin!.end();
  }, 120_000);

  it('a client that exits from a progress callback: the same', async () => {
    const db = join(dir, 'client-exit.db');
    const client = `
      import { Client } from '@modelcontextprotocol/sdk/client/index.js';
      import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
      const client = new Client({ name: 'abort-client', version: '0.0.1' });
      await client.connect(new StdioClientTransport({ command: process.execPath, args: ${JSON.stringify([MCPTAP, 'stdio', '--record', db, '--', process.execPath, NOTES])} }));
      await client.callTool({ name: 'summarize', arguments: { seconds: 2 } }, undefined, { onprogress: () => process.exit(3) });`;
    const run = spawn(process.execPath, ['--input-type=module', '-e', client], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    run.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
    expect(await exitOf(run), stderr).toBe(3);
    // The tap outlives its client: it is done once its journal is gone (its indexer completed the recording).
    expect(await waitFor(() => journals('client-exit.db').length === 0 && RecordingStore.hasRecording(db), 60_000)).toBe(true);
    const ls = mcptap('ls', db);
    expect(ls.status, ls.stderr).toBe(0);
    expect(ls.stdout).not.toMatch(/INCOMPLETE/);
    expect(calls(db).recordings[0]!.endedUs).toBeDefined();
  }, 120_000);

  it('both ways: a tap SIGKILLed mid-call still leaves a recording marked INCOMPLETE', async () => {
    const t = await tapMidCall('killed.db');
    t.tap.kill('SIGKILL');
    expect(await t.exited).toBeNull();
    // Its indexer completes the recording from the spool (ls waits for it), and says the tap never closed it.
    const ls = mcptap('ls', t.db);
    expect(ls.status, ls.stderr).toBe(0);
    expect(ls.stdout).toMatch(/INCOMPLETE: the tap ended without closing the recording \(killed or crashed\)/);
    expect(journals('killed.db')).toEqual([]);
  }, 120_000);
});
