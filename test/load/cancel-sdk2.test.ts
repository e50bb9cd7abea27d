/**
 * What closing a 2026-07-28 SSE stream does to a running tool handler of the SDK 2.x server
 * (`@modelcontextprotocol/server` McpServer behind `createMcpHandler`), measured with the load
 * engine's cancel step and, server side, the handler's own record of every call:
 * - does `ctx.mcpReq.signal` fire, and how long after the client closed the stream;
 * - does the work stop by itself (it does not: a handler that does not look at the signal runs to
 *   its end), and what a progress notification sent after the close does (`notify` rejects, so a
 *   handler that lets that error escape stops at its next progress, by accident).
 * The handler answers the load engine's probe (`work-status`, the reference server's `in-flight`
 * shape), so the verdict comes from the server's own word. Real peer: the SDK 2.x server.
 * Figures go to docs/cancellation.md.
 */
import http from 'node:http';
import type net from 'node:net';
import * as z from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { runLoad } from '../../src/load/run/run-load.js';
import { scenario } from './scenario-fixtures.js';

interface Work {
  startedAtMs: number;
  lastWorkAtMs: number;
  endedAtMs?: number;
  abortedAtMs?: number;
  units: number;
  unitsAfterAbort: number;
  notifyErrorsAfterAbort: number;
  notifiesAfterAbort: number;
}

const works = new Map<string, Work>();

function factory(): McpServer {
  const s = new McpServer({ name: 'sdk2-cancel', version: '1.0.0' });
  s.registerTool(
    'work',
    { inputSchema: z.object({ steps: z.number(), intervalMs: z.number(), watchSignal: z.boolean() }) },
    async ({ steps, intervalMs, watchSignal }, ctx) => {
      const token = String(ctx.mcpReq._meta?.progressToken);
      const w: Work = { startedAtMs: Date.now(), lastWorkAtMs: Date.now(), units: 0, unitsAfterAbort: 0, notifyErrorsAfterAbort: 0, notifiesAfterAbort: 0 };
      works.set(token, w);
      ctx.mcpReq.signal.addEventListener('abort', () => (w.abortedAtMs = Date.now()), { once: true });
      for (let i = 1; i <= steps; i++) {
        if (watchSignal && ctx.mcpReq.signal.aborted) break;
        await new Promise((r) => setTimeout(r, intervalMs));
        if (watchSignal && ctx.mcpReq.signal.aborted) break;
        w.units++;
        w.lastWorkAtMs = Date.now();
        const afterAbort = w.abortedAtMs !== undefined;
        if (afterAbort) w.unitsAfterAbort++;
        try {
          await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: steps } });
          if (afterAbort) w.notifiesAfterAbort++;
        } catch {
          if (afterAbort) w.notifyErrorsAfterAbort++;
        }
      }
      w.endedAtMs = Date.now();
      return { content: [{ type: 'text', text: `worked ${w.units} of ${steps}` }] };
    },
  );
  s.registerTool('work-status', { inputSchema: z.object({ progressToken: z.string() }) }, async ({ progressToken }) => {
    const w = works.get(progressToken);
    const body = w ? { found: true, running: w.endedAtMs === undefined, lastWorkAtMs: w.lastWorkAtMs, endedAtMs: w.endedAtMs } : { found: false };
    return { content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body };
  });
  return s;
}

let url = '';
let server: http.Server;
let handler: ReturnType<typeof createMcpHandler>;

beforeAll(async () => {
  handler = createMcpHandler(factory);
  const node = toNodeHandler(handler);
  server = http.createServer((req, res) => void node(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/mcp`;
});

afterAll(async () => {
  await handler?.close();
  server?.closeAllConnections();
  await new Promise<void>((resolve) => server?.close(() => resolve()));
});

function run(watchSignal: boolean) {
  works.clear();
  return runLoad(
    scenario(`
target: { url: "${url}" }
era: modern
timeout: 10s
phases:
  - closed: { vus: 2, iterations: 5 }
steps:
  - tool: work
    arguments: { steps: 30, intervalMs: 20, watchSignal: ${watchSignal} }
    cancel: { afterProgress: 2, observe: 300ms, probe: work-status }
thresholds:
  tool:work:
    - cancel: ${watchSignal ? 'honoured' : 'ignored'}
`),
  );
}

const p = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length - 1) * q))]!;

describe('SDK 2.x server: closing the 2026-07-28 stream of a running tool call', () => {
  it('fires ctx.mcpReq.signal; a handler that ignores it runs to its end, every progress notify after the close throwing', async () => {
    const r = await run(false);
    const g = r.cancel!.work!;
    expect(g).toMatchObject({ verdict: 'ignored', cancelled: 10, ignored: 10, mechanisms: ['close'] });
    expect(r.thresholds.every((t) => t.ok)).toBe(true);
    const all = [...works.values()];
    expect(all).toHaveLength(10);
    // The last calls' handlers are still running when the run ends (that is the point): let them finish.
    for (let i = 0; i < 100 && all.some((w) => w.endedAtMs === undefined); i++) await new Promise((r) => setTimeout(r, 50));
    // The signal fired for every call, once the client closed the stream...
    expect(all.every((w) => w.abortedAtMs !== undefined)).toBe(true);
    // ...and the work went on: all 30 steps, some after the abort, where every progress notify threw
    // (the handler caught it: the SDK does not stop a handler that does not look at its signal).
    expect(all.every((w) => w.units === 30 && w.unitsAfterAbort > 0)).toBe(true);
    expect(all.every((w) => w.notifyErrorsAfterAbort === w.unitsAfterAbort && w.notifiesAfterAbort === 0)).toBe(true);
    const afterAbort = all.map((w) => w.endedAtMs! - w.abortedAtMs!);
    const notifyErrors = all.reduce((a, w) => a + w.notifyErrorsAfterAbort, 0);
    const notifies = all.reduce((a, w) => a + w.notifiesAfterAbort, 0);
    console.log(
      `SDK 2.x, handler ignoring the signal: work after the abort p50 ${p(afterAbort, 0.5)}ms max ${p(afterAbort, 1)}ms; ` +
        `progress after the abort: ${notifies} resolved, ${notifyErrors} threw; verdict ${g.verdict}, work after the cancel p50 ${g.workAfter.summary.p50}us`,
    );
  });

  it('a handler that watches the signal stops within a step: honoured, with the stop delay', async () => {
    const r = await run(true);
    const g = r.cancel!.work!;
    expect(g).toMatchObject({ verdict: 'honoured', cancelled: 10, honoured: 10 });
    expect(g.stopDelay.summary.count).toBe(10);
    const all = [...works.values()];
    expect(all.every((w) => w.abortedAtMs !== undefined && w.units < 30 && w.unitsAfterAbort === 0)).toBe(true);
    const abortDelay = all.map((w) => w.endedAtMs! - w.abortedAtMs!);
    console.log(
      `SDK 2.x, handler watching the signal: handler end after the abort p50 ${p(abortDelay, 0.5)}ms max ${p(abortDelay, 1)}ms; ` +
        `engine stop delay p50 ${g.stopDelay.summary.p50}us p99 ${g.stopDelay.summary.p99}us`,
    );
  });
});
