/**
 * A signal during the mock's start-up (issue 31, smaller items: `timeout` and systemd signal at any
 * moment) ends in the shell's exit code (143, 130) and leaves its `--record` file complete: the mock
 * catches stop signals from the first line of its command on. Real peers, loopback only: a recording
 * of the SDK 1.x notes server, mocked with `--on-miss passthrough --record` to that server over HTTP,
 * signalled at moments from spawn on: while Node still loads, and on the mock's own start-up lines
 * (`--log-level debug`: opening the recording, then its --record tap started), each within 20 s.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCPTAP } from '../helpers/paths.js';
import { notesCommand, startNotesHttp, type NotesHttp } from '../helpers/notes-peer.js';
import { stdioTransport } from '../replay/replay-helpers.js';
import { exitOf } from '../helpers/signal-child.js';

let dir: string;
let db: string;
let upstream: NotesHttp;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mcptap-mock-signals-'));
  db = join(dir, 'notes.db');
  const client = new Client({ name: 'notes-user', version: '1.0.0' });
  await client.connect(stdioTransport([MCPTAP, 'stdio', '--record', db, '--', ...notesCommand()]));
  await client.callTool({ name: 'search', arguments: { query: 'milk' } }).finally(() => client.close());
  upstream = await startNotesHttp();
}, 60_000);

afterAll(async () => {
  await upstream?.stop();
});

interface Run {
  /** What a shell reads as the exit status: the code, or 128 + the signal's number for a death by it. */
  status: number;
  served: boolean;
  stderr: string;
  record: string;
}

/**
 * Spawns the mock and sends `sig` at `moment`: that many ms after spawn, when its stderr first
 * matches the pattern, or once it serves (undefined).
 */
async function signalled(sig: 'SIGTERM' | 'SIGINT', moment: number | RegExp | undefined, n: number): Promise<Run> {
  const record = join(dir, `misses-${n}.db`);
  const args = [
    MCPTAP,
    'mock',
    db,
    '--http',
    '127.0.0.1:0',
    '--on-miss',
    'passthrough',
    '--upstream',
    upstream.url,
    '--record',
    record,
    '--log-level',
    'debug',
  ];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const exited = exitOf(child);
  let stderr = '';
  let sent = false;
  const send = (): void => {
    if (!sent) ((sent = true), child.kill(sig));
  };
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    stderr += c;
    if (moment === undefined ? stderr.includes('serving ') : moment instanceof RegExp && moment.test(stderr)) send();
  });
  if (typeof moment === 'number') setTimeout(send, moment);
  const bound = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const code = await exited;
  clearTimeout(bound);
  const status = code ?? 128 + { SIGTERM: 15, SIGINT: 2, SIGKILL: 9 }[child.signalCode as 'SIGTERM' | 'SIGINT' | 'SIGKILL'];
  return { status, served: stderr.includes('serving '), stderr, record };
}

/** `mcptap ls --json FILE`'s recordings: each complete or not. */
async function complete(file: string): Promise<boolean[]> {
  const child = spawn(process.execPath, [MCPTAP, 'ls', file, '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
  expect(await exitOf(child)).toBe(0);
  const parsed = JSON.parse(out) as { recordings: { complete: boolean }[] };
  return parsed.recordings.map((r) => r.complete);
}

describe('mock stopped by a signal during start-up', () => {
  it('exits 143/130 and leaves its --record file complete, at every moment tried', async () => {
    // Node still loading (the default action: no file begun), the mock opening its recording, and
    // its --record tap started (the file begun; it may serve before the signal lands): each signal
    // at each moment.
    const moments: [string, number | RegExp][] = [
      ['at spawn', 0],
      ['opening the recording', /mcptap debug: opening /],
      ['--record tap started', /mcptap debug: recording what it forwards to /],
    ];
    const caught: string[] = [];
    let n = 0;
    for (const [name, moment] of moments) {
      for (const sig of ['SIGTERM', 'SIGINT'] as const) {
        const r = await signalled(sig, moment, n++);
        const why = `${sig} ${name}: ${r.stderr}`;
        expect(r.status, why).toBe(r.served ? 0 : sig === 'SIGTERM' ? 143 : 130);
        // Whatever the moment, a recording the mock began is never left INCOMPLETE.
        if (existsSync(r.record)) for (const c of await complete(r.record)) expect(c, why).toBe(true);
        if (r.stderr.includes('before serving: stopped')) caught.push(`${sig} ${name}`);
      }
    }
    // Moments fell in the mock's own start-up (not only Node's), or the check says nothing.
    expect(caught.length, caught.join(', ')).toBeGreaterThan(0);
  }, 120_000);

  it('once serving, a signal still ends it with 0 and its counts', async () => {
    const r = await signalled('SIGTERM', undefined, 99);
    expect(r.served).toBe(true);
    expect(r.status).toBe(0);
    expect(r.stderr).toMatch(/requests answered from the recording/);
  }, 30_000);
});
