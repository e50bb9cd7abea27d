/**
 * The mock negotiates `initialize`'s protocolVersion as a server would (issue 31, smaller items): a
 * client asking an older version it knows gets that version, one asking a newer or unknown one gets
 * the recorded version. Real peers: the SDK 1.x notes server recorded through `mcptap stdio --record`
 * by an SDK 1.x client asking 2025-03-26, then mocked to SDK clients asking other versions.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { MCPTAP } from '../helpers/paths.js';
import { notesCommand } from '../helpers/notes-peer.js';

/** A stdio transport whose client asks `version` in initialize and keeps the version the server answered. */
class AskingTransport extends StdioClientTransport {
  negotiated: string | undefined;
  constructor(
    args: string[],
    private readonly version: string,
  ) {
    super({ command: process.execPath, args, stderr: 'pipe' });
  }
  override send(message: JSONRPCMessage): Promise<void> {
    if ('method' in message && message.method === 'initialize') message = { ...message, params: { ...message.params, protocolVersion: this.version } };
    return super.send(message);
  }
  /** Called by the SDK client with the server's answer (HTTP transports use it for the header). */
  setProtocolVersion(v: string): void {
    this.negotiated = v;
  }
}

/** Connects a client asking `version` through `args`, calls search, and says which version it got. */
async function session(args: string[], version: string): Promise<string | undefined> {
  const transport = new AskingTransport(args, version);
  const client = new Client({ name: 'notes-user', version: '1.0.0' });
  await client.connect(transport);
  try {
    expect((await client.callTool({ name: 'search', arguments: { query: 'milk' } })).isError).toBeFalsy();
  } finally {
    await client.close();
  }
  return transport.negotiated;
}

let db: string;

beforeAll(async () => {
  db = join(mkdtempSync(join(tmpdir(), 'mcptap-mock-version-')), 'notes.db');
  // The notes server accepts 2025-03-26: the recording's initialize answers it.
  expect(await session([MCPTAP, 'stdio', '--record', db, '--', ...notesCommand()], '2025-03-26')).toBe('2025-03-26');
}, 60_000);

describe('mock initialize version negotiation (recorded 2025-03-26)', () => {
  it('answers an older version the client asks when mcptap knows it', async () => {
    expect(await session([MCPTAP, 'mock', db, '--stdio'], '2024-11-05')).toBe('2024-11-05');
  }, 30_000);

  it('answers the recorded version to a newer or unknown one', async () => {
    expect(await session([MCPTAP, 'mock', db, '--stdio'], '2025-11-25')).toBe('2025-03-26');
    expect(await session([MCPTAP, 'mock', db, '--stdio'], '2024-10-07')).toBe('2025-03-26');
  }, 30_000);
});
