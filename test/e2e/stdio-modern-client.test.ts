/**
 * The 2026-07-28 era through the stdio tap: the SDK 2.x client (version negotiation `auto`) against
 * the bundled reference server, directly and through `mcptap stdio --record`. Results must match and
 * the recording must carry the era and protocol version of every exchange.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MCPTAP } from '../helpers/paths.js';
import { RecordingStore } from '../../src/store/recording-store.js';
import { modernCallSet } from '../helpers/modern-call-set.js';

async function runCalls(command: string, args: string[]) {
  const client = new Client({ name: 'mcptap-e2e-modern', version: '2.0.0' }, { versionNegotiation: { mode: 'auto' } });
  await client.connect(new StdioClientTransport({ command, args, stderr: 'pipe' }));
  try {
    return await modernCallSet(client);
  } finally {
    await client.close();
  }
}

describe('stdio tap with the SDK 2.x client (2026-07-28)', () => {
  const db = join(mkdtempSync(join(tmpdir(), 'mcptap-modern-')), 'modern.db');
  let direct: Awaited<ReturnType<typeof runCalls>>;
  let tapped: Awaited<ReturnType<typeof runCalls>>;

  beforeAll(async () => {
    direct = await runCalls(process.execPath, [MCPTAP, 'reference', '--stdio']);
    tapped = await runCalls(process.execPath, [MCPTAP, 'stdio', '--record', db, '--', process.execPath, MCPTAP, 'reference', '--stdio']);
  });

  it('gives the client what the direct run gives', () => {
    expect(direct.version).toBe('2026-07-28');
    // The SDK client drops a progress notification that arrives in the same read as the result, so
    // how many it reports depends on chunking; the recording below counts what the server sent.
    const { progressSeen: _a, ...d } = direct;
    const { progressSeen: _b, ...t } = tapped;
    expect(t).toEqual(d);
    expect(direct.rpcError).toBe(-32099);
  });

  it('records the 2026-07-28 era and version on every exchange', () => {
    const store = RecordingStore.open(db);
    try {
      // The auto client probes on a short-lived process first, so there are two recordings.
      const all = store.listRecordings().flatMap((r) => store.exchanges({ recordingId: r.id }));
      expect(all.find((e) => e.method === 'server/discover')?.era).toBe('modern');
      const calls = all.filter((e) => e.method === 'tools/call');
      expect(calls.map((e) => [e.target, e.outcome, e.era, e.protocolVersion])).toEqual([
        ['echo', 'ok', 'modern', '2026-07-28'],
        ['progress', 'ok', 'modern', '2026-07-28'],
        ['fail', 'tool_error', 'modern', '2026-07-28'],
        ['rpc-error', 'jsonrpc_error', 'modern', '2026-07-28'],
      ]);
      expect(calls.find((e) => e.target === 'progress')!.progress).toHaveLength(3);
      expect(calls.find((e) => e.target === 'rpc-error')!.errorCode).toBe(-32099);
      expect(all.every((e) => e.method === 'server/discover' || e.era === 'modern')).toBe(true);
    } finally {
      store.close();
    }
  });
});
