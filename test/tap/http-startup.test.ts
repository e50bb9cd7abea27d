/**
 * `mcptap http` start-up (the built CLI, needs `npx tsc -p .`): the listener serves before the
 * recorder and telemetry are up, and a request that arrives meanwhile is still recorded and
 * traced. The reference server is the upstream; a stand-in OTLP receiver takes the spans.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Pool, request } from 'undici';
import { UndiciPool } from '../../src/tap/http-tap.js';
import { RecordingStore } from '../../src/store/recording-store.js';
import { freePort, referenceServerPerSuite } from '../helpers/http-peers.js';
import { MCPTAP } from '../helpers/paths.js';
import { startOtlpReceiver, type OtlpReceiver } from '../telemetry/otlp-receiver.js';

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'startup-test', version: '1' } },
});

describe('mcptap http start-up', () => {
  const reference = referenceServerPerSuite();
  let receiver: OtlpReceiver;
  let dir: string;
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    dir = mkdtempSync(join(tmpdir(), 'mcptap-http-startup-'));
  });
  afterAll(async () => {
    await receiver?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("loads undici's Pool module alone, and it is undici's own Pool", () => {
    expect(UndiciPool).toBe(Pool);
  });

  it('a request sent from the moment it starts is forwarded, then recorded and traced', async () => {
    const port = await freePort();
    const record = join(dir, 'first.db');
    const child = spawn(
      process.execPath,
      [MCPTAP, 'http', '--upstream', reference().url, '--listen', `127.0.0.1:${port}`, '--record', record, '--otlp', receiver.url, '--log-level', 'info'],
      { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' } },
    );
    let stderr = '';
    child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    // As a client started beside the tap would: retried until the listener takes it (bounded: 30 s).
    let answer: { status: number; body: string } | undefined;
    for (let i = 0; i < 6000 && !answer; i++) {
      try {
        const res = await request(`http://127.0.0.1:${port}/mcp`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          body: INITIALIZE,
        });
        answer = { status: res.statusCode, body: await res.body.text() };
      } catch {
        await new Promise((r) => setTimeout(r, 5));
      }
    }
    // Answered while the sinks were still booting: they boot at the first answer, not before.
    expect(answer?.status, stderr).toBe(200);
    expect(answer!.body).toContain('"protocolVersion"');
    child.kill('SIGINT');
    expect(await exited, stderr).toBe(0);

    const store = RecordingStore.open(record);
    try {
      const rows = store.exchanges({ recordingId: store.latestRecordingId()! });
      expect(rows.map((r) => `${r.method}:${r.outcome}`)).toEqual(['initialize:ok']);
    } finally {
      store.close();
    }
    const spans = await receiver.waitForSpans(1, 10_000);
    expect(spans.map((s) => s.name).join(' ')).toContain('initialize');
  });
});
