/**
 * `mcptap mock --on-miss passthrough --record FILE` records what it forwards through the HTTP tap:
 * when that recording lacks forwarded traffic (its indexer SIGKILLed under traffic), the mock says
 * how many bytes and exits 1, as `mcptap http` does; a mock whose recording is whole exits 0 and
 * says nothing of the sort (test/cli/commands/mock.test.ts has that run too). The real reference
 * server upstream, the SDK's client.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { descendants } from '../../bench/crash-kill.js';
import { startReferenceHttpServer, type ReferenceHttpServer } from '../../src/reference/reference-server.js';
import { RecordingStore } from '../../src/store/recording-store.js';
import { startMockHttp } from '../helpers/mock-cli.js';
import { MCPTAP } from '../helpers/paths.js';
import { RawStdioPeer } from '../reference/raw-stdio-peer.js';

const dir = mkdtempSync(join(tmpdir(), 'mcptap-mock-loss-'));
const db = join(dir, 'echo.db');
let upstream: ReferenceHttpServer;

beforeAll(async () => {
  const peer = new RawStdioPeer([], ['stdio', '--record', db, '--', process.execPath, MCPTAP, 'reference', '--stdio']);
  peer.send({ id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } });
  await peer.response(1);
  expect(await peer.close()).toBe(0);
  upstream = await startReferenceHttpServer();
}, 60_000);
afterAll(async () => {
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The mock's recording indexer (a child of its process), once it has opened the recording. */
async function indexerOf(mockPid: number, file: string): Promise<number | undefined> {
  for (let i = 0; i < 1000; i++) {
    const found = descendants(mockPid).find((p) => p.cmd.includes('indexer-process'));
    if (found && RecordingStore.hasRecording(file)) return found.pid;
    await sleep(20);
  }
  return undefined;
}

/** The mock's pid: its stderr does not say it; the newest `mcptap mock` process serving `file`. */
function mockPid(file: string): number {
  const pids = descendants(process.pid).filter((p) => p.cmd.includes(' mock ') && p.cmd.includes(file));
  return pids[pids.length - 1]!.pid;
}

describe.skipIf(process.platform !== 'linux')('mcptap mock --on-miss passthrough --record: a recording that lacks traffic', () => {
  it('the indexer SIGKILLed under traffic: the lost bytes are said and the mock exits 1', async () => {
    const forwarded = join(dir, 'forwarded.db');
    const mock = await startMockHttp(db, ['--on-miss', 'passthrough', '--upstream', upstream.url, '--record', forwarded]);
    const client = new Client({ name: 'loss', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(mock.url)));
    try {
      const indexer = await indexerOf(mockPid(forwarded), forwarded);
      expect(indexer, mock.stderr()).toBeDefined();
      const miss = (i: number) => client.callTool({ name: 'echo', arguments: { text: `miss ${i}` } });
      for (let i = 0; i < 20; i++) await miss(i);
      process.kill(indexer!, 'SIGKILL');
      // Forwarding goes on: these pass unrecorded.
      for (let i = 20; i < 60; i++) await miss(i);
    } finally {
      await client.close();
    }
    const { code, stderr } = await mock.stop();
    expect(stderr).toMatch(/recording indexer exited \(SIGKILL\)/);
    const lost = /recording \S+forwarded\.db lacks (\d+) bytes of the traffic the tap forwarded; exit code 1/.exec(stderr);
    expect(lost, stderr).not.toBeNull();
    expect(Number(lost![1])).toBeGreaterThan(0);
    expect(code, stderr).toBe(1);
    expect(readFileSync(forwarded).length).toBeGreaterThan(0);
  }, 120_000);
});
