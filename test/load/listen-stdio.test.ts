/**
 * `listen` steps over stdio, against the reference server (a child process, one for the run):
 * 2026-07-28 `subscriptions/listen` requests multiplexed on the process (notifications routed by
 * their subscription id), and the legacy era, where list changes arrive on stdout unsolicited and
 * every listen step of the process watches that one stream. One virtual user calls `trigger` on
 * the same process (the only way to reach its listeners), 10 notifications 100 ms apart, after
 * the others had time to open theirs. Every notification must be counted once on every listen;
 * the delivery delay is reported, not bounded.
 */
import { describe, expect, it } from 'vitest';
import { runLoad } from '../../src/load/run/run-load.js';
import { scenario } from './scenario-fixtures.js';

const LISTENERS = 100;
const TRIGGERS = 10;

describe.each(['2026-07-28', 'legacy'])('listen step over stdio, %s era', (era) => {
  it(`${LISTENERS} listens on one process get every notification once`, async () => {
    let ready = 0;
    let readyWhenFired = -1;
    // One iteration per virtual user: the smooth weighted mix gives exactly one of the first
    // LISTENERS + 1 iterations to the trigger.
    const s = scenario(`
target: { reference: { transport: stdio } }
era: ${era}
phases: [ { closed: { vus: ${LISTENERS + 1}, iterations: 1, duration: 8s } } ]
steps:
  - { name: changes, weight: ${LISTENERS}, listen: { toolsListChanged: true } }
  - { name: fire, weight: 1, tool: trigger, arguments: { notification: tools, count: ${TRIGGERS}, intervalMs: 100, delayMs: 2000 } }
thresholds: [ "delivery.p(99) < 60s" ]
`);
    const failures: string[] = [];
    const r = await runLoad(s, {
      onListenReady: (n) => (ready = n),
      onRecord: (rec) => {
        if (rec.sample.step === 'fire') readyWhenFired = ready;
        if (rec.sample.outcome !== 'ok' || rec.sample.step === 'changes') failures.push(JSON.stringify(rec.sample));
      },
    });
    expect(failures).toEqual([]);
    expect(readyWhenFired).toBe(LISTENERS);
    const l = r.listen!;
    expect(l).toMatchObject({ streams: LISTENERS, held: LISTENERS, failed: 0, duplicates: 0 });
    if (era !== 'legacy') expect(l.acked).toBe(LISTENERS);
    expect(l.perStream).toEqual({ min: TRIGGERS, max: TRIGGERS });
    expect(l.notifications).toBe(LISTENERS * TRIGGERS);
    expect(l.byMethod).toEqual({ 'notifications/tools/list_changed': LISTENERS * TRIGGERS });
    expect(l.delay.summary.count).toBe(l.notifications);
    expect(r.thresholds[0]).toMatchObject({ ok: true });
    console.log(
      `listen over stdio, ${era}: ${LISTENERS} listens, delivery delay p50 ${l.delay.summary.p50} us p99 ${l.delay.summary.p99} us max ${l.delay.summary.max} us`,
    );
  }, 60_000);
});
