import { defineConfig } from 'vitest/config';

/**
 * Two groups. Everything runs in parallel first, two files at a time (most files wait on the
 * processes they spawn, so two keep the 2-CPU machines busy; docs/performance.md, test suite wall
 * time); then the few tests whose assertions involve wall-clock figures the issues demand (SSE
 * timing, coordinated omission, rate accuracy) run one file at a time on an otherwise idle
 * machine, so other suites cannot steal their CPU.
 *
 * In the first group a worker keeps its process and module graph from file to file (no isolation:
 * the suite is CPU-bound, and a fresh process per file cost a fifth of it), except the files whose
 * assertions are about process-wide state: the clock anchored when its module loads, the
 * OpenTelemetry API's globals, process.env.
 */
const TIMED = ['test/load/e2e-timing.test.ts', 'test/tap/http-timing.test.ts'];
const FRESH_PROCESS = ['test/util/clock.test.ts', 'test/telemetry/telemetry.test.ts', 'test/telemetry/sdk-tracer-env.test.ts'];

const common = {
  testTimeout: 60_000,
  hookTimeout: 60_000,
  pool: 'forks' as const,
  maxWorkers: 2,
};

export default defineConfig({
  test: {
    projects: [
      {
        test: { ...common, name: 'main', include: ['test/**/*.test.ts'], exclude: [...TIMED, ...FRESH_PROCESS], isolate: false, sequence: { groupOrder: 0 } },
      },
      { test: { ...common, name: 'fresh', include: FRESH_PROCESS, sequence: { groupOrder: 0 } } },
      { test: { ...common, name: 'timed', include: TIMED, fileParallelism: false, sequence: { groupOrder: 1 } } },
    ],
  },
});
