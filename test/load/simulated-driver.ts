/**
 * An in-process FAKE driver for deterministic executor tests: no IO, time comes from a
 * VirtualScheduler, and the "server" answers after a service time with optional stall windows
 * (the reference server's schedule: a response leaving during [kE-F, kE) waits until kE).
 * Real peers are used by the e2e tests; this fake exists because exact, timing-free arithmetic on
 * the executors (coordinated omission, shard merges) needs a server whose timing is known exactly.
 */
import type { Driver, Lane, PreparedCall } from '../../src/load/drivers/driver.js';
import type { VirtualScheduler } from '../../src/load/executors/virtual-scheduler.js';
import type { Sample } from '../../src/load/results/sample.js';

export interface SimServer {
  serviceUs: (c: PreparedCall) => number;
  stall?: { everyUs: number; forUs: number; anchorUs: number };
  /** Make this call a tool error / JSON-RPC error. */
  outcome?: (c: PreparedCall) => 'ok' | 'tool_error' | 'jsonrpc_error';
}

export function stallDelayUs(stall: SimServer['stall'], atUs: number): number {
  if (!stall) return 0;
  const t = atUs - stall.anchorUs;
  if (t < 0) return 0;
  const phase = t % stall.everyUs;
  return phase >= stall.everyUs - stall.forUs ? stall.everyUs - phase : 0;
}

export function simulatedDriver(sched: VirtualScheduler, server: SimServer): Driver {
  const lane = (id: number): Lane => ({
    id,
    endIteration: async () => {},
    close: async () => {},
    call: async (c, intendedUs) => {
      const sentUs = sched.nowUs();
      const ready = sentUs + server.serviceUs(c);
      const endUs = ready + stallDelayUs(server.stall, ready);
      await sched.sleepUntil(endUs);
      const o = server.outcome?.(c) ?? 'ok';
      const sample: Sample = {
        step: c.step,
        method: c.method,
        intendedUs,
        sentUs,
        endUs,
        outcome: o,
        isError: o === 'tool_error',
        violations: [],
        sse: false,
        checks: 0,
        checkFailures: 0,
        httpStatus: 200,
      };
      if (c.tool) sample.tool = c.tool;
      if (o === 'jsonrpc_error') sample.rpcCode = -32603;
      return { sample };
    },
  });
  return { transport: 'http', era: 'modern', target: 'simulated', newLane: lane, close: async () => {} };
}
