/**
 * The client's notifications in a replay plan: placed after the steps recorded before them, waiting
 * for those answered before them, and left out when their session replays nothing.
 */
import { describe, expect, it } from 'vitest';
import { ReplayPlanBuilder, stepAfter, type PlanExchange } from '../../src/replay/replay-plan.js';

function ex(rowid: number, startUs: number, endUs: number | undefined, connectionId = 'c1'): PlanExchange {
  const answered = endUs !== undefined;
  return {
    rowid,
    recordingId: 1,
    direction: 'c2s',
    state: 'completed',
    method: 'tools/call',
    era: 'legacy',
    connectionId,
    startUs,
    requestSeq: rowid,
    answered,
    ...(answered ? { endUs } : {}),
  };
}

describe('replay plan notes', () => {
  it('places a notification between the requests recorded around it', () => {
    const b = new ReplayPlanBuilder<PlanExchange>();
    // A call 100-200, a long one from 150 still running at 250, the notification at 250, a call at 300.
    b.add(ex(1, 100, 200));
    b.add(ex(2, 150, 400));
    b.add(ex(3, 300, 350));
    b.addNotification({ rowid: 9, recordingId: 1, connectionId: 'c1', timeUs: 250, seq: 10 });
    b.addNotification({ rowid: 10, recordingId: 1, connectionId: 'other', timeUs: 260, seq: 11 });
    const plan = b.build();
    const notes = plan.notes!;
    expect(notes.size).toBe(1); // the other connection replays no request: its note is left out
    expect([...notes.rowids]).toEqual([9]);
    expect([...notes.offsetsUs]).toEqual([150]);
    expect([...notes.before]).toEqual([2]); // after both earlier requests were sent
    expect([...stepAfter(notes, 0)]).toEqual([0]); // and the one answered before it is done, not the long one
    expect([...stepAfter(plan, 2)]).toEqual([0]); // the steps' own dependencies are unchanged
  });

  it('has no notes when none were recorded', () => {
    const b = new ReplayPlanBuilder<PlanExchange>();
    b.add(ex(1, 100, 200));
    expect(b.build().notes).toBeUndefined();
  });
});
