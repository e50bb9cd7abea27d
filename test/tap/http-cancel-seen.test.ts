/**
 * The HTTP tap sees cancellations in live traffic and records what followed them, against the
 * reference server: who cancelled and how (`notifications/cancelled` from an SDK 1.x client on
 * legacy HTTP; a 2026-07-28 client closing its stream), whether the server kept working
 * (progress after the cancel) and when the stream ended. Work goes on only when the server
 * ignores the cancel (`honorCancel: false`), so the two are told apart by the recording alone.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startReferenceHttpServer, type ReferenceHttpServer } from '../../src/reference/reference-http-server.js';
import { HttpChannel } from '../../src/client/mcp-channel.js';
import { McpSession } from '../../src/client/mcp-session.js';
import { RecordingStore } from '../../src/store/recording-store.js';
import type { StoredExchange } from '../../src/store/types.js';
import { startHttpTapCli, type HttpTapCli } from '../helpers/http-tap-cli.js';

let server: ReferenceHttpServer;
let dir: string;
beforeAll(async () => {
  server = await startReferenceHttpServer();
  dir = mkdtempSync(path.join(tmpdir(), 'mcptap-cancel-seen-'));
});
afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs `drive` through a recording tap, stops the tap, and returns the recorded tools/call exchanges. */
async function recorded(name: string, drive: (url: string) => Promise<void>): Promise<StoredExchange[]> {
  const file = path.join(dir, `${name}.db`);
  const tap: HttpTapCli = await startHttpTapCli(server.url, ['--record', file]);
  try {
    await drive(tap.url);
  } finally {
    tap.child.kill('SIGINT');
    await tap.exited;
  }
  const store = RecordingStore.open(file);
  try {
    return store.exchanges({ method: 'tools/call' });
  } finally {
    store.close();
  }
}

/**
 * SDK 1.x: a progress call of 8 steps 100 ms apart, aborted after its second progress notification
 * (it sends notifications/cancelled): an ignoring server sends 6 more.
 */
async function legacyCancel(url: string, honorCancel: boolean): Promise<void> {
  const client = new Client({ name: 'cancel-seen', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const ac = new AbortController();
  let seen = 0;
  await client
    .callTool({ name: 'progress', arguments: { steps: 8, intervalMs: 100, honorCancel } }, undefined, {
      signal: ac.signal,
      onprogress: () => {
        if (++seen === 2) ac.abort('user moved on');
      },
    })
    .catch(() => undefined);
  // Long enough for an ignoring server to finish its steps (bounded: the run's own length).
  await new Promise((r) => setTimeout(r, 1500));
  await client.close();
}

describe('the HTTP tap records what followed a cancellation', () => {
  it('legacy notifications/cancelled, ignored: progress went on after it, the response still came', async () => {
    const [ex] = await recorded('legacy-ignored', (url) => legacyCancel(url, false));
    expect(ex!.cancel).toMatchObject({ by: 'c2s' });
    const a = ex!.transport!.afterCancel!;
    expect(a.mechanism).toBe('notification');
    expect(a.progressAfter).toBeGreaterThanOrEqual(4);
    expect(a.workAfterUs).toBeGreaterThan(0);
  }, 30_000);

  it('legacy notifications/cancelled, honoured: no progress after it, the stream ended', async () => {
    const [ex] = await recorded('legacy-honoured', (url) => legacyCancel(url, true));
    expect(ex!.cancel).toMatchObject({ by: 'c2s' });
    const a = ex!.transport!.afterCancel!;
    expect(a.mechanism).toBe('notification');
    // Steps already on their way while the cancel crossed the tap and reached the server may still
    // arrive (on a loaded machine that crossing took over 80 ms); never most of the 6 left.
    expect(a.progressAfter).toBeLessThanOrEqual(2);
    expect(a.streamEndAfterUs).toBeDefined();
  }, 30_000);

  it('2026-07-28: the client closing its stream is seen as a stream_closed cancel', async () => {
    const [ex] = await recorded('modern-closed', async (url) => {
      // mcptap's own client: aborting its request closes the stream, the 2026-07-28 way to cancel.
      const channel = new HttpChannel({ url, timeoutMs: 20_000 });
      const ac = new AbortController();
      await new McpSession(channel, { era: 'modern' })
        .request(
          'tools/call',
          { name: 'progress', arguments: { steps: 6, intervalMs: 40 }, _meta: { progressToken: 'p1' } },
          { signal: ac.signal, onMessage: () => ac.abort() },
        )
        .catch(() => undefined);
      await new Promise((r) => setTimeout(r, 300));
      await channel.close();
    });
    expect(ex!.outcome).toBe('cancelled');
    expect(ex!.cancel).toMatchObject({ by: 'disconnect' });
    expect(ex!.transport!.afterCancel).toMatchObject({ mechanism: 'stream_closed', progressAfter: 0 });
  }, 30_000);
});
