/**
 * `mcptap export` against the live export of the same tap, with real peers: the SDK 1.x client
 * talks to server-everything through `mcptap stdio --record --otlp`; the live spans land in one
 * OTLP receiver in this test. Then `mcptap export` sends the recording to a second receiver, and
 * the two span sets must be identical: ids, parents, names, attributes, events, status and the
 * original timestamps. Also: exit 4 for a bad file, exit 5 for an unreachable collector.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CallToolResultSchema, EmptyResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { BIN, MCPTAP } from '../helpers/paths.js';
import { connectThroughTap, unusedPort } from '../helpers/tap-client.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../telemetry/otlp-receiver.js';
import { CALLER_SPAN, CALLER_TRACE } from '../helpers/everything-call-set.js';

const EVERYTHING = join(BIN, 'mcp-server-everything');
const OTLP_JSON = { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' };

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Async on purpose: the OTLP receivers live in this process and must keep answering. */
function runExport(args: string[], env: Record<string, string> = OTLP_JSON): Promise<Run> {
  const child = spawn(process.execPath, [MCPTAP, 'export', ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise((resolve) => child.once('close', (code) => (clearTimeout(timer), resolve({ code, stdout, stderr }))));
}

const byId = (spans: ReceivedSpan[]) => [...spans].sort((a, b) => (a.spanId < b.spanId ? -1 : 1));

describe('mcptap export reproduces the live spans', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-export-'));
  const db = join(dir, 'live.db');
  let live: OtlpReceiver;
  let exported: OtlpReceiver;
  let exportRun: Run;

  beforeAll(async () => {
    live = await startOtlpReceiver();
    exported = await startOtlpReceiver();
    const tapped = await connectThroughTap(['--record', db, '--otlp', live.url], [EVERYTHING, 'stdio'], { ...OTLP_JSON, OTEL_METRIC_EXPORT_INTERVAL: '60000' });
    const { client } = tapped;
    await client.listTools();
    await client.callTool({ name: 'echo', arguments: { message: 'hi' }, _meta: { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` } });
    // The caller does not sample this one: no span, live or exported.
    await client.callTool({ name: 'echo', arguments: { message: 'unsampled' }, _meta: { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-00` } });
    await client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } }, CallToolResultSchema, { onprogress: () => {} });
    await client.callTool({ name: 'get-sum', arguments: { a: 'not a number' } });
    await client.request({ method: 'no/such-method', params: {} }, EmptyResultSchema).catch(() => undefined);
    await tapped.close();
    await live.waitForSpans(7, 10_000);
    exportRun = await runExport([db, '--otlp', exported.url]);
  });

  afterAll(async () => {
    await live?.close();
    await exported?.close();
  });

  it('exits 0 and says what it sent', () => {
    expect(exportRun.stderr).toBe('');
    expect(exportRun.code).toBe(0);
    expect(exportRun.stdout).toMatch(
      /exported recording 1: 7 of 8 spans \(7 exchanges, 1 sessions\) to http:\/\/127\.0\.0\.1:\d+\/v1\/traces; span ids as exported live; 1 not exported, as live: their caller's trace context says not sampled/,
    );
  });

  it('exports exactly the live spans: same ids, parents, names, attributes, events, status, times', () => {
    expect(live.spans).toHaveLength(7);
    expect(byId(exported.spans)).toEqual(byId(live.spans));
  });

  it('keeps the trace linkage from _meta.traceparent and the original timestamps', () => {
    const echo = exported.spans.find((s) => s.name === 'tools/call echo')!;
    expect(echo).toMatchObject({ traceId: CALLER_TRACE, parentSpanId: CALLER_SPAN });
    const session = exported.spans.find((s) => s.name === 'mcp.session')!;
    const start = session.startTimeUnixNano;
    for (const s of exported.spans) {
      expect(s.startTimeUnixNano).toBeGreaterThanOrEqual(start);
      expect(s.endTimeUnixNano).toBeLessThanOrEqual(session.endTimeUnixNano);
    }
    // Original times: the session began before the export was even started.
    expect(Number(start / 1_000_000n)).toBeLessThan(Date.now() - 100);
    expect(exported.spans.find((s) => s.name === 'tools/call trigger-long-running-operation')!.events.filter((e) => e.name === 'mcptap.progress')).toHaveLength(
      3,
    );
  });

  it('gives the same ids when the same recording is exported twice', async () => {
    const again = await startOtlpReceiver();
    try {
      expect((await runExport([db, '--otlp', again.url, '--recording', '1', '--no-progress'])).code).toBe(0);
      expect(byId(again.spans).map((s) => [s.traceId, s.spanId])).toEqual(byId(live.spans).map((s) => [s.traceId, s.spanId]));
    } finally {
      await again.close();
    }
  });

  it('exits 4 for a missing file, a file that is not a recording, and a recording it does not hold', async () => {
    const notDb = join(dir, 'notes.txt');
    writeFileSync(notDb, 'not a database\n');
    const runs = await Promise.all([[join(dir, 'missing.db')], [notDb], [db, '--recording', '9']].map((args) => runExport([...args, '--otlp', exported.url])));
    for (const r of runs) {
      expect([r.code, r.stdout]).toEqual([4, '']);
      expect(r.stderr).toMatch(/^mcptap: /);
    }
    expect(runs.map((r) => r.stderr.trim())).toEqual([
      expect.stringContaining('no such recording file'),
      expect.stringContaining('is not an mcptap recording'),
      expect.stringContaining('has no recording 9 (it has 1)'),
    ]);
  });

  it('exits 5 and says so when the collector cannot be reached', async () => {
    const port = await unusedPort();
    const r = await runExport([db, '--otlp', `http://127.0.0.1:${port}`, '--timeout', '800']);
    expect(r.code).toBe(5);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(
      /export to http:\/\/127\.0\.0\.1:\d+\/v1\/traces failed: the collector could not be reached or refused the spans \(0 delivered, 7 lost/,
    );
  });

  it('a collector slower than the batch timeout but within --timeout: delivered, and no "Timeout" said', async () => {
    // An in-process fake: a collector that answers every export after 1.5 s (no real one is slow on demand).
    const slow = createServer((req, res) => {
      req.resume();
      req.on('end', () => setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'), 1500));
    });
    await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(slow.address() as AddressInfo).port}`;
      // The batch processor's own timeout (1 s here) was left below --timeout: it said 'Timeout' for an export that succeeded.
      const r = await runExport([db, '--otlp', url, '--timeout', '5000'], { ...OTLP_JSON, OTEL_BSP_EXPORT_TIMEOUT: '1000' });
      expect(r.code).toBe(0);
      expect(r.stderr).not.toMatch(/timeout/i);
      expect(r.stdout).toMatch(/exported recording 1: 7 of 8 spans/);
    } finally {
      slow.close();
    }
  });

  it('exits 5 when the collector refuses the spans', async () => {
    exported.failNext = 100;
    try {
      const r = await runExport([db, '--otlp', exported.url]);
      expect(r.code).toBe(5);
      expect(r.stderr).toMatch(/failed: .*\(0 delivered, 7 lost/);
    } finally {
      exported.failNext = 0;
    }
  });
});
