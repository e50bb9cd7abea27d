/**
 * Reading a process's CPU time from outside (/proc/PID/stat, Linux): the figure agrees with the
 * kernel's own account of this process (process.cpuUsage), a gone process reads nothing, and the
 * idle window before a cancelled call refuses to measure a process that was asked something.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { idleRate, processCpuUs, type CpuTarget } from '../../src/load/drivers/process-cpu.js';
import { systemClock } from '../../src/util/clock.js';
import { exitOf } from '../helpers/signal-child.js';

describe.runIf(process.platform === 'linux')('a process CPU time from /proc', () => {
  it('agrees with process.cpuUsage() of the same process, to a couple of clock ticks', () => {
    const before = process.cpuUsage();
    const proc = processCpuUs(process.pid)!;
    const after = process.cpuUsage();
    expect(proc).toBeGreaterThan(0);
    // /proc counts in 10 ms ticks: within two of the kernel's µs figures read around it.
    expect(proc).toBeGreaterThanOrEqual(before.user + before.system - 20_000);
    expect(proc).toBeLessThanOrEqual(after.user + after.system + 20_000);
  });

  it('a process that is gone reads nothing', async () => {
    const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
    await exitOf(child);
    expect(processCpuUs(child.pid!)).toBeUndefined();
  });

  // In-process stand-ins for the stdio client: a request sent during the idle window is a race a
  // real client cannot be made to lose on cue.
  it('the idle rate of this (quiet) process; none when a request was in flight or sent meanwhile', async () => {
    const quiet: CpuTarget = { pid: process.pid, inFlight: 0, requestsSent: 0 };
    expect(await idleRate(quiet, systemClock, 50)).toBeGreaterThanOrEqual(0);
    expect(await idleRate({ ...quiet, inFlight: 1 }, systemClock, 50)).toBeUndefined();
    let sent = 0;
    const busy: CpuTarget = {
      pid: process.pid,
      inFlight: 0,
      get requestsSent() {
        return sent++;
      },
    };
    expect(await idleRate(busy, systemClock, 50)).toBeUndefined();
    expect(await idleRate({ pid: undefined, inFlight: 0, requestsSent: 0 }, systemClock, 50)).toBeUndefined();
  });
});
