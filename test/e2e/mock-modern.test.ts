/**
 * `mcptap mock` with real peers, 2026-07-28 era: the SDK 2.x client's session with `mcptap
 * reference` is recorded through `mcptap stdio --record`; the same client (version negotiation
 * `auto`: it probes with server/discover) then gets deep-equal results from `mcptap mock` on stdio
 * and on Streamable HTTP (stateless, the `_meta` envelope on every request).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MCPTAP } from '../helpers/paths.js';
import { startMockHttp, type MockChild } from '../helpers/mock-cli.js';
import { MOCK_MISS_CODE } from '../../src/mock/mock-responder.js';
import { modernCallSet } from '../helpers/modern-call-set.js';

type ModernTransport = ConstructorParameters<typeof StdioClientTransport>[0] | URL;

/** The call set; with `miss`, also a call the recording does not hold (made only against the mock). */
async function runCalls(target: ModernTransport, miss = false) {
  const client = new Client({ name: 'mcptap-e2e-modern', version: '2.0.0' }, { versionNegotiation: { mode: 'auto' } });
  await client.connect(target instanceof URL ? new StreamableHTTPClientTransport(target) : new StdioClientTransport(target));
  try {
    const calls = await modernCallSet(client, 300);
    if (!miss) return { ...calls, miss: undefined };
    const error = await client.callTool({ name: 'echo', arguments: { text: 'never recorded' } }).then(
      () => ({ code: 0, message: '' }),
      (e: { code: number; message: string }) => ({ code: e.code, message: e.message }),
    );
    return { ...calls, miss: error };
  } finally {
    await client.close();
  }
}

describe('mcptap mock with the SDK 2.x client (2026-07-28)', () => {
  const db = join(mkdtempSync(join(tmpdir(), 'mcptap-mock-modern-')), 'modern.db');
  let recorded: Awaited<ReturnType<typeof runCalls>>;
  let http: MockChild;

  beforeAll(async () => {
    recorded = await runCalls({
      command: process.execPath,
      args: [MCPTAP, 'stdio', '--record', db, '--', process.execPath, MCPTAP, 'reference', '--stdio'],
      stderr: 'pipe',
    });
    // Recorded pace with 0.3 s between progress notifications: the SDK client drops progress read in
    // the same chunk as the result, and the recorded gaps keep the first ones apart from it.
    http = await startMockHttp(db, ['--pace', 'recorded']);
  });
  afterAll(async () => {
    await http?.stop();
  });

  /** The SDK client drops progress read in the same chunk as the result: compared apart. */
  const comparable = ({ progressSeen: _p, miss: _m, ...rest }: typeof recorded) => rest;

  it('answers the stdio client with the recorded results', async () => {
    expect(recorded.version).toBe('2026-07-28');
    const mocked = await runCalls({ command: process.execPath, args: [MCPTAP, 'mock', db, '--stdio', '--pace', 'recorded'], stderr: 'pipe' }, true);
    expect(comparable(mocked)).toEqual(comparable(recorded));
    expect(mocked.rpcError).toBe(-32099);
    expect(mocked.progressSeen.slice(0, 2)).toEqual([1, 2]);
    expect(mocked.miss!.code).toBe(MOCK_MISS_CODE);
    expect(mocked.miss!.message).toContain('tools/call {"arguments":{"text":"never recorded"},"name":"echo"}');
    expect(mocked.miss!.message).toContain('differs at /params/arguments/text');
  });

  it('answers the Streamable HTTP client with the recorded results, statelessly', async () => {
    const mocked = await runCalls(new URL(http.url), true);
    expect(comparable(mocked)).toEqual(comparable(recorded));
    expect(mocked.progressSeen.slice(0, 2)).toEqual([1, 2]);
    expect(mocked.miss!.code).toBe(MOCK_MISS_CODE);
  });
});
