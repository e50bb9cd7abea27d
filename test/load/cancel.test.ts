/**
 * Cancel steps against real peers, with the verdict the load engine reaches:
 * - the reference server in honour mode: honoured, with the stop delay's p50/p99; in ignore mode
 *   (`--ignore-cancel`): ignored; both eras, both transports. Its `in-flight` tool is the probe
 *   (the server's own word per call) and, over HTTP, is asked again after the run: honoured work
 *   is gone, ignored work is still running;
 * - server-everything's `trigger-long-running-operation`, whose progress goes on after
 *   `notifications/cancelled`: ignored, with how long the work went on, over stdio and HTTP.
 * Figures are printed (they go to docs/cancellation.md), never asserted against a time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpChannel } from '../../src/client/mcp-channel.js';
import { McpSession } from '../../src/client/mcp-session.js';
import type { CancelGroupResult } from '../../src/load/results/cancel-stats.js';
import { renderSummary } from '../../src/load/report/text-report.js';
import { runLoad } from '../../src/load/run/run-load.js';
import { startReferenceHttpServer, type ReferenceHttpServer } from '../../src/reference/reference-server.js';
import { EVERYTHING_BIN, startEverythingHttp, type RunningPeer } from '../client/peers.js';
import { scenario } from './scenario-fixtures.js';

const ms = (us: number) => `${(us / 1000).toFixed(1)}ms`;

function describeGroup(label: string, g: CancelGroupResult): string {
  const s = g.verdict === 'honoured' ? g.stopDelay.summary : g.workAfter.summary;
  return `${label}: ${g.verdict} ${g.verdict === 'honoured' ? 'stop delay' : 'work after the cancel'} p50 ${ms(s.p50)} p99 ${ms(s.p99)} (${g.cancelled} cancelled, ${g.mechanisms.join(',')})`;
}

const progressStep = (probe: boolean) => `
steps:
  - tool: progress
    arguments: { steps: 40, intervalMs: 20 }
    cancel: { afterProgress: 2, observe: 300ms${probe ? ', probe: in-flight' : ''} }`;

async function inFlightNow(url: string): Promise<number> {
  const channel = new HttpChannel({ url });
  try {
    const s = new McpSession(channel, { era: 'modern' });
    const r = await s.request('tools/call', { name: 'in-flight', arguments: {} });
    return (r.response!.result as { structuredContent: { inFlight: number } }).structuredContent.inFlight;
  } finally {
    await channel.close();
  }
}

// The three groups below run at once: they share no server. Within the first, one test at a time:
// its in-flight checks count every call on the server.
describe.concurrent('cancel steps: the reference server over HTTP', () => {
  let honour: ReferenceHttpServer;
  let ignore: ReferenceHttpServer;
  beforeAll(async () => {
    honour = await startReferenceHttpServer({ port: 0 });
    ignore = await startReferenceHttpServer({ port: 0, honorCancel: false });
  });
  afterAll(async () => {
    await honour?.close();
    await ignore?.close();
  });

  for (const era of ['legacy', 'modern'] as const) {
    it.sequential(`${era} era: honour mode is honoured with a stop delay; ignore mode is ignored; in-flight agrees`, async () => {
      const phases = `\nera: ${era}\ntimeout: 10s\nphases:\n  - closed: { vus: 2, iterations: 4 }\n`;
      const h = await runLoad(
        scenario(`target: { url: "${honour.url}" }${phases}${progressStep(true)}\nthresholds: { "tool:progress": ["cancel: honoured"] }`),
      );
      const hg = h.cancel!.progress!;
      expect(hg).toMatchObject({ verdict: 'honoured', cancelled: 8, honoured: 8, ignored: 0, finalResults: 0 });
      expect(hg.mechanisms).toEqual([era === 'modern' ? 'close' : 'notifications/cancelled']);
      expect(hg.stopDelay.summary.count).toBe(8);
      expect(hg.evidence.every((e) => e.includes('probe: work stopped'))).toBe(true);
      expect(h.thresholds).toMatchObject([{ ok: true, observedText: 'honoured (8 of 8 cancelled)' }]);
      expect(renderSummary(h)).toMatch(/progress: HONOURED: stop delay p50 \S+ p99 \S+/);
      // The requests table leaves the cancelled calls out, and says so.
      expect(renderSummary(h)).toContain('  + 8 cancelled calls (progress 8): not above, see cancellation\n');
      // No work left behind (every call stopped well before the run's end).
      expect(await inFlightNow(honour.url)).toBe(0);

      const i = await runLoad(
        scenario(`target: { url: "${ignore.url}" }${phases}${progressStep(true)}\nthresholds: { "tool:progress": ["cancel: honoured"] }`),
      );
      const ig = i.cancel!.progress!;
      expect(ig).toMatchObject({ verdict: 'ignored', cancelled: 8, ignored: 8 });
      expect(ig.workAfter.summary.count).toBe(8);
      expect(ig.evidence.every((e) => e.includes('probe: still running'))).toBe(true);
      // Legacy: the progress kept coming on the open stream; modern: the closed stream hid it.
      if (era === 'legacy') expect(ig.progressAfterCancel).toBeGreaterThan(0);
      else expect(ig.progressAfterCancel).toBe(0);
      expect(i.thresholds).toMatchObject([{ ok: false, observedText: 'ignored (8 of 8 cancelled)' }]);
      expect(renderSummary(i)).toMatch(/progress: IGNORED: work went on after the cancel in 8 of 8: for at least p50/);
      // The last calls' work (800 ms each, cancelled after ~40 ms and watched for 300 ms) still runs.
      expect(await inFlightNow(ignore.url)).toBeGreaterThan(0);
      console.log(`reference HTTP ${describeGroup(`${era} honour`, hg)}; ${describeGroup(`${era} ignore`, ig)}`);
    });
  }

  it.sequential('without a probe, closing the 2026-07-28 stream shows nothing: the verdict is unknown', async () => {
    const r = await runLoad(scenario(`target: { url: "${ignore.url}" }\nera: modern\nphases:\n  - closed: { vus: 1, iterations: 2 }\n${progressStep(false)}`));
    expect(r.cancel!.progress).toMatchObject({ verdict: 'unknown', cancelled: 2, unknown: 2 });
    expect(r.cancel!.progress!.nextRequest.summary.count).toBe(2);
  });
});

// A server process per run.
describe.concurrent('cancel steps: the reference server over stdio', () => {
  for (const era of ['legacy', 'modern'] as const) {
    it(`${era} era: honoured in honour mode, ignored with ignoreCancel, the in-flight probe agreeing`, async () => {
      const body = (ignoreCancel: boolean) =>
        `target: { reference: { transport: stdio, ignoreCancel: ${ignoreCancel} } }\nera: ${era}\ntimeout: 10s\nphases:\n  - closed: { vus: 2, iterations: 4 }\n${progressStep(true)}`;
      const h = (await runLoad(scenario(body(false)))).cancel!.progress!;
      expect(h).toMatchObject({ verdict: 'honoured', cancelled: 8, honoured: 8, mechanisms: ['notifications/cancelled'], finalResults: 0 });
      expect(h.stopDelay.summary.count).toBe(8);
      expect(h.evidence.every((e) => e.includes('probe: work stopped'))).toBe(true);
      const i = (await runLoad(scenario(body(true)))).cancel!.progress!;
      expect(i).toMatchObject({ verdict: 'ignored', cancelled: 8, ignored: 8 });
      expect(i.progressAfterCancel).toBeGreaterThan(0);
      expect(i.evidence.every((e) => /progress notification\(s\) after the cancel.*probe: still running/.test(e))).toBe(true);
      console.log(`reference stdio ${describeGroup(`${era} honour`, h)}; ${describeGroup(`${era} ignore`, i)}`);
    });
  }
});

// A server process per run over stdio; over HTTP, a session of its own.
describe.concurrent("cancel steps: server-everything's trigger-long-running-operation", () => {
  let peer: RunningPeer;
  beforeAll(async () => {
    peer = await startEverythingHttp();
  });
  afterAll(async () => {
    await peer?.close();
  });

  const steps = `
timeout: 20s
phases:
  - closed: { vus: 1, iterations: 2 }
steps:
  - tool: trigger-long-running-operation
    arguments: { duration: 2, steps: 10 }
    cancel: { afterProgress: 1, observe: 2s }
thresholds:
  tool:trigger-long-running-operation: [ "cancel: honoured" ]
`;

  for (const transport of ['stdio', 'http'] as const) {
    it(`${transport}: ignored, its progress going on after notifications/cancelled`, async () => {
      const target = transport === 'stdio' ? `{ command: "${EVERYTHING_BIN}", args: [stdio] }` : `{ url: "${peer.url}" }`;
      const r = await runLoad(scenario(`target: ${target}${steps}`));
      const g = r.cancel!['trigger-long-running-operation']!;
      expect(r.era).toBe('legacy');
      expect(g).toMatchObject({ verdict: 'ignored', cancelled: 2, ignored: 2, mechanisms: ['notifications/cancelled'] });
      // 10 steps over 2 s, cancelled after the first: the later ones come anyway.
      expect(g.progressAfterCancel).toBeGreaterThanOrEqual(2 * 5);
      expect(g.workAfter.summary.count).toBe(2);
      expect(g.evidence[0]).toMatch(/ignored: notifications\/cancelled: \d+ progress notification\(s\) after the cancel, the last \S+ after it/);
      expect(r.thresholds[0]).toMatchObject({ ok: false });
      console.log(`server-everything ${transport}: ${describeGroup('trigger-long-running-operation', g)}`);
    });
  }
});
