import { defineConfig } from 'vitest/config';

/**
 * Two groups. Everything runs in parallel first, two files at a time (most files wait on the
 * processes they spawn, so two keep the 2-CPU machines busy; docs/performance.md, test suite wall
 * time); then the few tests whose assertions involve wall-clock figures the issues demand (SSE
 * timing, coordinated omission, rate accuracy) run one file at a time on an otherwise idle
 * machine, so other suites cannot steal their CPU.
 */
const TIMED = ['test/load/e2e-timing.test.ts', 'test/tap/http-timing.test.ts'];

const common = {
  testTimeout: 60_000,
  hookTimeout: 60_000,
  pool: 'forks' as const,
  maxWorkers: 2,
};

export default defineConfig({
  test: {
    projects: [
      { test: { ...common, name: 'main', include: ['test/**/*.test.ts'], exclude: TIMED, sequence: { groupOrder: 0 } } },
      { test: { ...common, name: 'timed', include: TIMED, fileParallelism: false, sequence: { groupOrder: 1 } } },
    ],
  },
});
