/** The recording indexer's schedule on virtual time (ms). */
import { describe, expect, it } from 'vitest';
import { IndexSchedule } from '../../src/pipeline/index-schedule.js';

const opts = { quietMs: 120, maxLagMs: 10_000, sliceMs: 20 };

describe('IndexSchedule', () => {
  it('waits while traffic flows and starts once it has been quiet for quietMs', () => {
    const s = new IndexSchedule(opts);
    for (let t = 1000; t <= 2000; t += 40) {
      s.spooled(t, true);
      expect(s.holdOff(t + 10)).toBe(110);
    }
    expect(s.holdOff(2000 + 119)).toBe(1);
    expect(s.holdOff(2000 + 120)).toBe(0);
  });

  it('starts when what waits is maxLagMs old, however busy the traffic', () => {
    const s = new IndexSchedule({ ...opts, maxLagMs: 500 });
    let t = 1000;
    for (; t < 1500; t += 40) {
      s.spooled(t, true);
      expect(s.holdOff(t)).toBeGreaterThan(0);
    }
    s.spooled(t, true);
    expect(s.holdOff(t)).toBe(0);
    // Caught up: the lag counts from the next batch that is behind.
    s.caughtUp();
    s.spooled(t + 40, true);
    expect(s.holdOff(t + 40)).toBe(120);
  });

  it('a batch that is already indexed does not start the lag', () => {
    const s = new IndexSchedule({ ...opts, maxLagMs: 100 });
    s.spooled(0, false);
    s.spooled(80, false);
    expect(s.holdOff(160)).toBe(40);
  });

  it('starts at once when the spool is full (waitingForRoom) or the recording closes', () => {
    const waitingForRoom = new IndexSchedule(opts);
    waitingForRoom.spooled(1000, true, true);
    expect(waitingForRoom.holdOff(1000)).toBe(0);
    waitingForRoom.spooled(1040, true);
    expect(waitingForRoom.holdOff(1040)).toBe(120);
    const closing = new IndexSchedule(opts);
    closing.spooled(1000, true);
    closing.close();
    expect(closing.holdOff(1000)).toBe(0);
  });

  it('--require-recording (a lag of 0) indexes as the traffic flows', () => {
    const s = new IndexSchedule({ ...opts, maxLagMs: 0 });
    s.spooled(1000, true);
    expect(s.holdOff(1000)).toBe(0);
  });

  it('slices yield after sliceMs', () => {
    expect(new IndexSchedule(opts).sliceEnd(5000)).toBe(5020);
  });
});
