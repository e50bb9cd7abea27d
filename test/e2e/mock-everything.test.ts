/**
 * `mcptap mock` with real peers, legacy era: a session of the SDK 1.x client with server-everything
 * is recorded through `mcptap stdio --record`; the same client then gets deep-equal results from
 * `mcptap mock` on stdio and on Streamable HTTP, progress included, and a JSON-RPC error naming
 * the key and the nearest recorded request for a call the recording does not hold.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, MCPTAP } from '../helpers/paths.js';
import { startMockHttp, type MockChild } from '../helpers/mock-cli.js';
import { RawStdioPeer } from '../reference/raw-stdio-peer.js';
import { RecordingStore } from '../../src/store/recording-store.js';
import { MOCK_MISS_CODE } from '../../src/mock/mock-responder.js';

const EVERYTHING = join(BIN, 'mcp-server-everything');
// Progress every 0.4 s: a cancellation sent after the first one has time to arrive before the response.
const LONG_RUNNING = { name: 'trigger-long-running-operation', arguments: { duration: 1.2, steps: 3 } };

interface CallSet {
  tools: unknown;
  echo: unknown;
  sum: unknown;
  longRunning: unknown;
  progress: number[];
  badArgs: unknown;
}

async function runCalls(transport: Transport): Promise<CallSet> {
  const client = new Client({ name: 'mcptap-e2e', version: '1.0.0' });
  await client.connect(transport);
  try {
    const tools = await client.listTools();
    const echo = await client.callTool({ name: 'echo', arguments: { message: 'héllo 🎉' } });
    const sum = await client.callTool({ name: 'get-sum', arguments: { a: 2, b: 40 } });
    const progress: number[] = [];
    const longRunning = await client.callTool(LONG_RUNNING, CallToolResultSchema, { onprogress: (p) => progress.push(p.progress) });
    const badArgs = await client.callTool({ name: 'get-sum', arguments: { a: 'not a number' } });
    return { tools, echo, sum, longRunning, progress, badArgs };
  } finally {
    await client.close();
  }
}

/** A call the recording does not hold: the error the client gets. */
async function missOn(transport: Transport): Promise<{ code: number; message: string; data: unknown }> {
  const client = new Client({ name: 'mcptap-e2e', version: '1.0.0' });
  await client.connect(transport);
  try {
    return await client.callTool({ name: 'echo', arguments: { message: 'not recorded' } }).then(
      () => ({ code: 0, message: 'answered', data: undefined }),
      (e: { code: number; message: string; data: unknown }) => ({ code: e.code, message: e.message, data: e.data }),
    );
  } finally {
    await client.close();
  }
}

const stdioMock = (db: string, ...flags: string[]) =>
  new StdioClientTransport({ command: process.execPath, args: [MCPTAP, 'mock', db, '--stdio', ...flags], stderr: 'pipe' });

/** Without the progress values: the SDK 1.x client drops a notification read in the same chunk as the result. */
const withoutProgress = ({ progress: _p, ...rest }: CallSet) => rest;

describe('mcptap mock with server-everything and the SDK 1.x client', () => {
  const db = join(mkdtempSync(join(tmpdir(), 'mcptap-mock-')), 'everything.db');
  let recorded: CallSet;
  let recordedProgress: number;
  let http: MockChild;

  beforeAll(async () => {
    recorded = await runCalls(
      new StdioClientTransport({ command: process.execPath, args: [MCPTAP, 'stdio', '--record', db, '--', EVERYTHING, 'stdio'], stderr: 'pipe' }),
    );
    const store = RecordingStore.open(db);
    try {
      recordedProgress = store.exchanges({ method: 'tools/call', target: LONG_RUNNING.name })[0]!.progress.length;
    } finally {
      store.close();
    }
    // Recorded pace: the SDK 1.x client drops progress read in the same chunk as the result, and the
    // recorded gaps (0.4 s) keep the first notifications apart from it even on a busy machine.
    http = await startMockHttp(db, ['--pace', 'recorded']);
  });
  afterAll(async () => {
    await http?.stop();
  });

  it('answers the stdio client with the recorded results, progress included', async () => {
    expect(recordedProgress).toBe(3);
    const mocked = await runCalls(stdioMock(db, '--pace', 'recorded'));
    expect(withoutProgress(mocked)).toEqual(withoutProgress(recorded));
    expect((mocked.badArgs as { isError?: boolean }).isError).toBe(true);
    expect(mocked.progress.slice(0, 2)).toEqual([1, 2]);
  });

  it('answers the Streamable HTTP client with the recorded results, progress included', async () => {
    const mocked = await runCalls(new StreamableHTTPClientTransport(new URL(http.url)));
    expect(withoutProgress(mocked)).toEqual(withoutProgress(recorded));
    expect(mocked.progress.slice(0, 2)).toEqual([1, 2]);
  });

  it('answers a call the recording does not hold with an error naming its key and the nearest one', async () => {
    for (const transport of [stdioMock(db), new StreamableHTTPClientTransport(new URL(http.url))]) {
      const miss = await missOn(transport);
      expect(miss.code).toBe(MOCK_MISS_CODE);
      expect(miss.message).toContain('tools/call {"arguments":{"message":"not recorded"},"name":"echo"}');
      expect(miss.message).toContain('nearest: tools/call {"arguments":{"message":"héllo 🎉"},"name":"echo"}');
      expect(miss.data).toMatchObject({ nearest: { path: '/params/arguments/message', recorded: 'héllo 🎉', requested: 'not recorded' } });
    }
  });

  it('with --pace recorded sends every recorded progress notification before the response, on stdout only JSON-RPC', async () => {
    const peer = new RawStdioPeer([], ['mock', db, '--stdio', '--pace', 'recorded']);
    try {
      peer.send({ id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } });
      await peer.response(1);
      peer.send({ method: 'notifications/initialized' });
      peer.send({ id: 'long', method: 'tools/call', params: { ...LONG_RUNNING, _meta: { progressToken: 'mine' } } });
      await peer.response('long', 10_000);
      const after = peer.lines.slice(1);
      expect(after.map((m) => m.method ?? `response ${String(m.id)}`)).toEqual([
        ...Array<string>(recordedProgress).fill('notifications/progress'),
        'response long',
      ]);
      expect(after.slice(0, -1).map((m) => (m.params as { progressToken: unknown; progress: number }).progressToken)).toEqual(
        Array<string>(recordedProgress).fill('mine'),
      );
    } finally {
      expect(await peer.close()).toBe(0);
    }
    expect(peer.stderr.join('')).toMatch(/mcptap mock: 2 requests answered from the recording, 0 missed/);
  });

  it('stops an answer on notifications/cancelled', async () => {
    const peer = new RawStdioPeer([], ['mock', db, '--stdio', '--pace', 'recorded']);
    try {
      peer.send({ id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } });
      await peer.response(1);
      peer.send({ id: 'long', method: 'tools/call', params: { ...LONG_RUNNING, _meta: { progressToken: 'mine' } } });
      await peer.waitFor((m) => m.method === 'notifications/progress');
      peer.send({ method: 'notifications/cancelled', params: { requestId: 'long', reason: 'test' } });
    } finally {
      // On the end of stdin the mock waits for the answers still going out: a cancelled one is not.
      expect(await peer.close()).toBe(0);
    }
    expect(peer.lines.filter((m) => m.id === 'long')).toEqual([]);
  });

  it('says how many requests hit and missed when stopped', async () => {
    const { code, stderr } = await http.stop();
    expect(code).toBe(0);
    // The HTTP call set (initialize + 5 calls) and the miss's session (initialize + the miss).
    expect(stderr).toMatch(/mcptap mock: 7 requests answered from the recording, 1 missed/);
  });
});
