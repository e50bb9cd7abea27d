/**
 * Options shared by both ways of running the reference server, and how they resolve into the
 * behaviour the MCP surface reads. The stall schedule is anchored here, i.e. at server start.
 */
import { systemClock, type Clock } from '../util/clock.js';
import { silentLogger, type Logger } from '../util/logger.js';
import type { ReferenceBehaviour } from './reference-mcp-server.js';
import { NotificationHub } from './notification-hub.js';
import { StallSchedule, type StallOptions } from './stall-schedule.js';
import { WorkTracker } from './work-tracker.js';

export interface ReferenceServerOptions {
  /** Hold ALL responses for `forMs` at the end of every `everyMs` period (see stall-schedule.ts). */
  stall?: StallOptions;
  /** Default for the `honorCancel` argument of `delay` and `progress` (default true). */
  honorCancel?: boolean;
  /** Logs (stderr only). Default: silent. */
  logger?: Logger;
  /** Time source for the stall schedule. Default: the system clock. */
  clock?: Clock;
}

export interface ResolvedReference {
  behaviour: ReferenceBehaviour;
  /** Present only when stalls are configured. */
  schedule?: StallSchedule;
}

export function resolveReference(opts: ReferenceServerOptions, transport: 'stdio' | 'http'): ResolvedReference {
  const clock = opts.clock ?? systemClock;
  const schedule = opts.stall ? new StallSchedule(opts.stall, clock) : undefined;
  const behaviour: ReferenceBehaviour = {
    honorCancel: opts.honorCancel ?? true,
    logger: opts.logger ?? silentLogger,
    transport,
    stall: opts.stall,
    startedAtEpochMs: schedule?.anchorEpochMs ?? clock.nowUs() / 1000,
    work: new WorkTracker(),
    hub: new NotificationHub(() => clock.nowUs()),
    nowUs: () => clock.nowUs(),
  };
  return { behaviour, schedule };
}
