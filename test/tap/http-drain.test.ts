/**
 * Stopping `mcptap http` (the built CLI) in front of the reference server: SIGTERM lets the tool
 * calls in flight finish (a rolling restart does not fail them), up to --drain-timeout; past it,
 * or on a second signal, they are cut and recorded as `tap_closed`. The tap exits 0 either way,
 * with the recording complete.
 */
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ReferenceHttpServer } from '../../src/reference/reference-server.js';
import { RecordingStore } from '../../src/store/recording-store.js';
import { MCPTAP } from '../helpers/paths.js';
import { startHttpTapCli, type HttpTapCli } from '../helpers/http-tap-cli.js';
import { referenceServerPerSuite } from '../helpers/http-peers.js';

const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };

interface Tap extends HttpTapCli {
  record: string;
}

async function startTap(upstream: string, flags: string[] = []): Promise<Tap> {
  const record = join(mkdtempSync(join(tmpdir(), 'mcptap-drain-')), 'rec.db');
  return { ...(await startHttpTapCli(upstream, ['--record', record, ...flags])), record };
}

/** A 2026-07-28 `tools/call` of the reference server's delay tool: its answer's text, or the error. */
async function delayCall(url: string, id: number, ms: number): Promise<string> {
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'delay',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'delay', arguments: { ms }, _meta: META } }),
    });
    return `${res.status} ${await res.text()}`;
  } catch (err) {
    return `failed: ${(err as Error).message}`;
  }
}

/** Starts a delay call of `ms` through the tap and waits until the upstream has it (wrapped: awaiting would wait for the answer). */
async function callInFlight(server: ReferenceHttpServer, tap: Tap, id: number, ms: number): Promise<{ answer: Promise<string> }> {
  const before = server.stats().requests;
  const answer = delayCall(tap.url, id, ms);
  await expect.poll(() => server.stats().requests, { timeout: 10_000 }).toBeGreaterThan(before);
  return { answer };
}

function outcomes(record: string): string[] {
  const store = RecordingStore.open(record);
  try {
    return store.exchanges({ recordingId: store.latestRecordingId()! }).map((r) => `${r.method}:${r.outcome}`);
  } finally {
    store.close();
  }
}

describe('mcptap http: stopping with requests in flight', () => {
  const server = referenceServerPerSuite();

  it('SIGTERM lets a call in flight finish: the client gets its answer, the recording says ok', async () => {
    const tap = await startTap(server().url);
    const { answer } = await callInFlight(server(), tap, 1, 1500);
    tap.child.kill('SIGTERM');
    expect(await answer).toMatch(/^200 .*"delayed 1500 ms"/);
    expect(await tap.exited).toBe(0);
    expect(tap.stderr()).toContain('mcptap http: SIGTERM: letting the requests in flight finish (up to 10000 ms; SIGTERM again cuts them)');
    expect(outcomes(tap.record)).toEqual(['tools/call:ok']);
  });

  it('past --drain-timeout the call is cut and recorded as tap_closed; the tap still exits 0', async () => {
    const tap = await startTap(server().url, ['--drain-timeout', '300']);
    const { answer } = await callInFlight(server(), tap, 2, 20_000);
    tap.child.kill('SIGTERM');
    expect(await answer).not.toMatch(/delayed/);
    expect(await tap.exited).toBe(0);
    expect(outcomes(tap.record)).toEqual(['tools/call:transport_error']);
    const store = RecordingStore.open(tap.record);
    try {
      const [row] = store.exchanges({ recordingId: store.latestRecordingId()! });
      expect(row!.transport?.errorClass).toBe('tap_closed');
    } finally {
      store.close();
    }
  });

  it('a bad --drain-timeout or --listen port is refused before the tap listens (exit 2, one line)', async () => {
    for (const [flags, message] of [
      [
        ['--listen', '127.0.0.1:0', '--drain-timeout', 'soon'],
        '--drain-timeout must be a number of ms or a duration such as 5s or 250ms (0 = none), got "soon"',
      ],
      [['--listen', '127.0.0.1:99999'], '--listen port must be 0-65535, got 99999'],
    ] as const) {
      const child = spawn(process.execPath, [MCPTAP, 'http', '--upstream', server().url, ...flags], { stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      child.stderr!.on('data', (b: Buffer) => (err += b.toString()));
      const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
      expect(code).toBe(2);
      expect(err).toBe(`mcptap: ${message}\n`);
    }
  });

  it('a second SIGTERM cuts the drain short', async () => {
    const tap = await startTap(server().url, ['--drain-timeout', '60000']);
    const { answer } = await callInFlight(server(), tap, 3, 20_000);
    tap.child.kill('SIGTERM');
    await expect.poll(() => tap.stderr(), { timeout: 10_000 }).toContain('letting the requests in flight finish');
    tap.child.kill('SIGTERM');
    // Well before the call (20 s) or the drain (60 s) would have ended.
    const exited = await Promise.race([tap.exited, new Promise<'late'>((r) => setTimeout(() => r('late'), 15_000))]);
    expect(exited).toBe(0);
    expect(tap.stderr()).toContain('mcptap http: SIGTERM again: cutting the 1 request in flight\n');
    expect(await answer).not.toMatch(/delayed/);
  });
});
