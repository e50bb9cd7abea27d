/**
 * Exact counts against real servers: a mix with a known share of isError results, JSON-RPC errors
 * and (2026-07-28) a step whose Mcp-Method header contradicts its body. Every counter must equal
 * the number injected; the header step is HTTP 400 AND JSON-RPC -32020, never a tool error.
 * The weighted mix is deterministic (smooth round-robin), so shares are exact.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runLoad } from '../../src/load/run/run-load.js';
import { EVERYTHING_BIN, startEverythingHttp, type RunningPeer } from '../client/peers.js';
import { scenario } from './scenario-fixtures.js';

const legacyMix = `
steps:
  - { name: echo, tool: echo, weight: 5, arguments: { message: "hi {{iteration}}" }, check: { isError: false } }
  - { name: bad-args, tool: get-sum, weight: 2, arguments: { a: "not a number", b: 2 } }
  - { name: no-such-method, method: nosuch/method, weight: 2 }
  - { name: wrong-header, tool: echo, weight: 1, arguments: { message: x }, headers: { Mcp-Method: tools/list } }
`;

describe('server-everything (legacy era)', () => {
  let peer: RunningPeer;
  beforeAll(async () => {
    peer = await startEverythingHttp();
  });
  afterAll(async () => {
    await peer?.close();
  });

  it('HTTP: exact counters per layer, sessions per VU with churn', async () => {
    const s = scenario(`
target: { url: "${peer.url}" }
era: detect
session: { churn: 10 }
phases:
  - closed: { vus: 4, iterations: 25 }
${legacyMix}`);
    const r = await runLoad(s);
    expect(r.era).toBe('legacy');
    const calls = r.methods['tools/call']!.counters;
    expect(r.steps['bad-args']!.counters.toolErrors).toBe(20);
    expect(calls.toolErrors).toBe(20);
    expect(r.methods['nosuch/method']!.counters.jsonrpc).toEqual({ '-32601': 20 });
    expect(r.overall.counters.jsonrpc).toEqual({ '-32601': 20 });
    // a legacy server ignores Mcp-Method: the mismatched header is no error there
    expect(r.steps['wrong-header']!.counters).toMatchObject({ requests: 10, ok: 10, http: { '200': 10 } });
    expect(r.steps.echo!.counters).toMatchObject({ requests: 50, ok: 50, checks: 50, checkFailures: 0 });
    // 4 VUs x 25 iterations, a new session every 10 iterations: 3 sessions per VU
    expect(r.methods.initialize!.counters.requests).toBe(12);
    expect(r.overall.counters.transport).toEqual({});
    expect(r.overall.counters.http).toEqual({ '200': 112 });
    expect(r.overall.counters.requests).toBe(112);
  });

  it('stdio: the same mix over a pool of two processes', async () => {
    const s = scenario(`
target: { command: "${EVERYTHING_BIN} stdio", pool: 2 }
phases:
  - closed: { vus: 4, iterations: 25 }
${legacyMix}`);
    const r = await runLoad(s);
    expect(r.driver).toBe('stdio');
    expect(r.era).toBe('legacy');
    expect(r.tools['get-sum']!.counters.toolErrors).toBe(20);
    expect(r.overall.counters.toolErrors).toBe(20);
    expect(r.overall.counters.jsonrpc).toEqual({ '-32601': 20 });
    expect(r.methods.initialize!.counters.requests).toBe(2);
    expect(r.overall.counters.requests).toBe(102);
    expect(r.overall.counters.ok).toBe(62);
    expect(r.overall.counters.transport).toEqual({});
  });
});

const modernMix = `
steps:
  - { name: echo, tool: echo, weight: 5, arguments: { text: "hi {{iteration}}" } }
  - { name: fail, tool: fail, weight: 2 }
  - { name: rpc-error, tool: rpc-error, weight: 2, arguments: { code: -32099, message: injected } }
  - { name: wrong-header, tool: echo, weight: 1, arguments: { text: x }, headers: { Mcp-Method: tools/list } }
`;

describe('reference server (2026-07-28)', () => {
  it('HTTP, open model: isError, JSON-RPC errors, and the header step as HTTP 400 + -32020', async () => {
    const s = scenario(`
target: { reference: true }
era: 2026-07-28
phases:
  - open: { rate: 100, duration: 1s, maxInFlight: 100 }
${modernMix}`);
    const r = await runLoad(s);
    expect(r.era).toBe('modern');
    expect(r.phases[0]).toMatchObject({ scheduled: 100, started: 100, dropped: 0, completed: 100 });
    const c = r.overall.counters;
    expect(c.requests).toBe(100);
    expect(c.toolErrors).toBe(20);
    expect(c.jsonrpc).toEqual({ '-32099': 20, '-32020': 10 });
    expect(c.http).toEqual({ '200': 90, '400': 10 });
    const h = r.steps['wrong-header']!.counters;
    expect(h).toMatchObject({ requests: 10, toolErrors: 0, http: { '400': 10 }, jsonrpc: { '-32020': 10 } });
    expect(r.steps.fail!.counters).toMatchObject({ toolErrors: 20, jsonrpc: {}, http: { '200': 20 } });
    expect(c.transport).toEqual({});
    expect(c.violations).toEqual({});
  });

  it('timeout covers the whole exchange on both transports: a streamed answer that outlasts it is a timeout', async () => {
    for (const transport of ['http', 'stdio'] as const) {
      const s = scenario(`
target: { reference: { transport: ${transport} } }
era: 2026-07-28
timeout: 1s
phases:
  - closed: { vus: 2, iterations: 2 }
steps:
  - { name: long, tool: progress, progress: true, arguments: { steps: 12, intervalMs: 300 } }
`);
      const r = await runLoad(s);
      // 12 events 300 ms apart: 3.6 s, against a 1 s timeout. Each event used to restart HTTP's.
      expect(r.steps.long!.counters, transport).toMatchObject({ requests: 4, ok: 0, transport: { timeout: 4 } });
    }
  });

  it("stdio, legacy era declared: a timeout shorter than the server's start-up does not fail initialize", async () => {
    // A node process answers its first request some 300-1000 ms after it starts; initialize is that
    // request when the era is declared. It was held to the 200 ms and the run refused to start (exit 5).
    const s = scenario(`
target: { reference: { transport: stdio } }
era: legacy
timeout: 200ms
phases:
  - closed: { vus: 1, iterations: 3 }
steps:
  - { name: echo, tool: echo, arguments: { text: hi } }
`);
    const r = await runLoad(s);
    expect(r.era).toBe('legacy');
    expect(r.steps.echo!.counters).toMatchObject({ requests: 3, ok: 3 });
  });

  it('stdio: a late answer to a request that timed out is not counted as a server protocol violation', async () => {
    const s = scenario(`
target: { reference: { transport: stdio } }
era: 2026-07-28
timeout: 200ms
phases:
  - closed: { vus: 1, iterations: 4 }
steps:
  - { name: slow, tool: delay, arguments: { ms: 500, honorCancel: false } }
`);
    const r = await runLoad(s);
    expect(r.steps.slow!.counters).toMatchObject({ requests: 4, transport: { timeout: 4 } });
    // The server answers each one 300 ms late (it ignores the cancellation): before, each was an orphan_response.
    expect(r.overall.counters.violations).toEqual({});
  });

  it('stdio: the same mix (no headers on stdio, so the header step succeeds)', async () => {
    const s = scenario(`
target: { reference: { transport: stdio } }
phases:
  - closed: { vus: 2, iterations: 20 }
${modernMix}`);
    const r = await runLoad(s);
    expect(r.era).toBe('modern');
    expect(r.overall.counters).toMatchObject({ requests: 40, toolErrors: 8, jsonrpc: { '-32099': 8 }, ok: 24 });
  });
});
