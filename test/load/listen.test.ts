/**
 * `listen` steps against the reference server (a child process): 100 streams held open until every
 * notification has arrived (or the phase's end, for 20 streams through the tap),
 * 2026-07-28 `subscriptions/listen` and legacy GET streams, while the `trigger` tool fires
 * tools/list_changed every 100 ms. Every notification must arrive exactly once on every stream;
 * the delivery delay (the server's firing stamp to arrival) is reported, not bounded (it is a
 * figure of the machine: see `npm run bench -- sse`).
 *
 * Through `mcptap http --record --metrics`: the tap's `mcptap.streams.open` reads 100 (of its kind)
 * while the streams are held and 0 after, its delivery delay histogram counts every stamped
 * notification, and the recording lists each stream with the notifications it carried
 * (`mcptap show --streams`).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpSession } from '../../src/client/mcp-session.js';
import { HttpChannel } from '../../src/client/mcp-channel.js';
import type { LoadResult } from '../../src/load/results/load-result.js';
import type { LoadMetrics } from '../../src/load/results/metrics.js';
import { runLoad, type LoadRunObserver, type RunLoadOptions } from '../../src/load/run/run-load.js';
import type { Scenario } from '../../src/load/scenario/scenario.js';
import { startTarget, type RunningTarget } from '../../src/load/target/target-runtime.js';
import { RecordingStore } from '../../src/store/recording-store.js';
import type { StoredLongStream } from '../../src/store/types.js';
import { startHttpTapCli } from '../helpers/http-tap-cli.js';
import { freePort } from '../helpers/http-peers.js';
import { MCPTAP } from '../helpers/paths.js';
import { scenario } from './scenario-fixtures.js';

let target: RunningTarget & { kind: 'http' };
beforeAll(async () => {
  target = (await startTarget({ kind: 'reference', transport: 'http', inProcess: false, pool: 1 })) as typeof target;
});
afterAll(async () => {
  await target?.close();
});

const STREAMS = 100;
const TRIGGERS = 10;

/** Fires `TRIGGERS` notifications 100 ms apart once `ready()` says every stream is open (bounded: 20 s). */
async function fireWhenOpen(url: string, ready: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !ready(); i++) await new Promise((r) => setTimeout(r, 50));
  const channel = new HttpChannel({ url, timeoutMs: 30_000 });
  try {
    const session = new McpSession(channel, { era: 'modern' });
    const r = await session.request('tools/call', { name: 'trigger', arguments: { notification: 'tools', count: TRIGGERS, intervalMs: 100 } });
    expect(r.response?.result).toMatchObject({ structuredContent: { fired: expect.any(Array) } });
  } finally {
    await channel.close();
  }
}

/**
 * The phases of 100 streams last as long as their streams are needed, not a fixed time: `delivered()` (called
 * once the trigger has answered, i.e. fired everything) waits until the client has counted every
 * notification on its streams (`streams` x TRIGGERS; bounded: 20 s), holds them a moment more for a
 * late duplicate or extra notification to show, then stops the run. Held streams end on the run's
 * stop as on the phase's end (iteration-runner's holdListen: one abort either way), and no virtual
 * user opens another. The phases' durations are bounds, reached only when something is missing.
 * The 20 streams through the recording tap are held to their phase's planned end.
 */
function runUntilDelivered(s: Scenario, streams: number, opts: RunLoadOptions = {}): { running: Promise<LoadResult>; delivered(): Promise<void> } {
  const stop = new AbortController();
  let live: LoadMetrics | undefined;
  const observer: LoadRunObserver = { attach: (run) => (live = run.metrics), finished: () => {}, sample: () => {}, check: () => {}, violation: () => {} };
  const running = runLoad(s, { ...opts, signal: stop.signal, observer });
  const delivered = async () => {
    for (let i = 0; i < 400 && (live?.listen.toJSON().notifications ?? 0) < streams * TRIGGERS; i++) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 300));
    stop.abort('every notification delivered');
  };
  return { running, delivered };
}

describe.each(['2026-07-28', 'legacy'])('listen step, %s era', (era) => {
  it(`${STREAMS} streams held until all is delivered get every notification once`, async () => {
    let ready = 0;
    const s = scenario(`
target: { url: "${target.url}", connections: ${STREAMS + 10} }
era: ${era}
phases: [ { closed: { vus: ${STREAMS}, duration: 20s } } ]
steps: [ { name: changes, listen: { toolsListChanged: true } } ]
thresholds: [ "delivery.p(99) < 60s" ]
`);
    // Ready: acknowledged (2026-07-28) or answered 200 (a legacy GET stream, registered by then).
    const failures: string[] = [];
    const { running, delivered } = runUntilDelivered(s, STREAMS, {
      onListenReady: (n) => (ready = n),
      onRecord: (rec) => {
        if (rec.sample.outcome !== 'ok' || rec.sample.step === 'changes') failures.push(JSON.stringify(rec.sample));
      },
    });
    await fireWhenOpen(target.url, () => ready >= STREAMS);
    await delivered();
    const r = await running;
    const l = r.listen!;
    // A stream may fail on a machine loaded past its limits (a reset, a timed-out handshake); its
    // virtual user then opens another. Every virtual user must still end up holding one.
    if (failures.length) console.log(`listen ${era}: failed streams: ${failures.join('\n')}`);
    expect(l.held).toBe(STREAMS);
    expect(l.failed).toBeLessThanOrEqual(2);
    expect(l.streams).toBe(STREAMS + l.failed);
    if (era !== 'legacy') expect(l.acked).toBeGreaterThanOrEqual(STREAMS);
    expect(l.duplicates).toBe(0);
    expect(l.perStream).toEqual({ min: TRIGGERS, max: TRIGGERS });
    // Held streams got exactly TRIGGERS each (above); a failed one may have had some before it failed.
    expect(l.notifications).toBeGreaterThanOrEqual(STREAMS * TRIGGERS);
    expect(Object.keys(l.byMethod)).toEqual(['notifications/tools/list_changed']);
    expect(l.delay.summary.count).toBe(l.notifications);
    expect(r.thresholds[0]).toMatchObject({ ok: true });
    console.log(`listen ${era}: ${STREAMS} streams, delivery delay p50 ${l.delay.summary.p50} us p99 ${l.delay.summary.p99} us max ${l.delay.summary.max} us`);
  }, 60_000);
});

describe.each(['2026-07-28', 'legacy'])('listen streams through the recording tap, %s era', (era) => {
  it('every notification is recorded on its stream (listen: on its exchange)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'mcptap-listen-tap-'));
    const file = path.join(dir, 'listen.db');
    const n = 20;
    try {
      const tap = await startHttpTapCli(target.url, ['--record', file]);
      let ready = 0;
      try {
        // Held to the phase's end (4 s), not stopped early: the streams' end as the phase plans it.
        const running = runLoad(
          scenario(`
target: { url: "${tap.url}", connections: ${n + 5} }
era: ${era}
phases: [ { closed: { vus: ${n}, duration: 4s } } ]
steps: [ { listen: { toolsListChanged: true } } ]
`),
          { onListenReady: (k) => (ready = k) },
        );
        await fireWhenOpen(target.url, () => ready >= n);
        const r = await running;
        expect(r.listen!.perStream).toEqual({ min: TRIGGERS, max: TRIGGERS });
      } finally {
        tap.child.kill('SIGINT');
        await tap.exited;
      }
      const store = RecordingStore.open(file);
      try {
        const rows = store.db
          .prepare("SELECT count(*) AS n, count(DISTINCT stream_id || connection_id) AS streams FROM frames WHERE method = 'notifications/tools/list_changed'")
          .get() as { n: number; streams: number };
        expect(rows).toEqual({ n: n * TRIGGERS, streams: n });
        if (era !== 'legacy') {
          const listens = store.exchanges({ method: 'subscriptions/listen' });
          expect(listens).toHaveLength(n);
          // The acknowledgement and every notification are events of the listen exchange; the
          // client closing the stream at the phase end is how a listen ends.
          for (const ex of listens) expect(ex.transport!.eventTimesUs).toHaveLength(1 + TRIGGERS);
        }
      } finally {
        store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

/** `mcptap_streams_open` of one kind from a Prometheus scrape; undefined when the series is absent. */
async function openStreams(metricsUrl: string, kind: string): Promise<number | undefined> {
  // Refused until the pipeline worker (which serves the endpoint) has booted on the first answer.
  const text = await fetch(metricsUrl)
    .then((r) => r.text())
    .catch(() => '');
  const m = new RegExp(`^mcptap_streams_open\\{[^}]*mcptap_stream_kind="${kind}"[^}]*\\} (\\S+)`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
}

/** Scrapes until the gauge reads `want` (bounded: 20 s); returns the last reading. */
async function awaitOpen(metricsUrl: string, kind: string, want: number): Promise<number | undefined> {
  let v: number | undefined;
  for (let i = 0; i < 100; i++) {
    v = await openStreams(metricsUrl, kind);
    if (v === want) return v;
    await new Promise((r) => setTimeout(r, 200));
  }
  return v;
}

describe.each([
  ['2026-07-28', 'listen'],
  ['legacy', 'get'],
] as const)('long-lived streams through the tap, %s era', (era, kind) => {
  it(`counts ${STREAMS} open ${kind} streams while held, 0 after, and records each with its notifications`, async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'mcptap-long-streams-'));
    const file = path.join(dir, 'streams.db');
    const metricsPort = await freePort();
    const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    try {
      const tap = await startHttpTapCli(target.url, ['--record', file, '--metrics', `127.0.0.1:${metricsPort}`]);
      let held: number | undefined;
      let after: number | undefined;
      try {
        let ready = 0;
        const { running, delivered } = runUntilDelivered(
          scenario(`
target: { url: "${tap.url}", connections: ${STREAMS + 10} }
era: ${era}
phases: [ { closed: { vus: ${STREAMS}, duration: 20s } } ]
steps: [ { listen: { toolsListChanged: true } } ]
`),
          STREAMS,
          { onListenReady: (k) => (ready = k) },
        );
        for (let i = 0; i < 400 && ready < STREAMS; i++) await new Promise((r) => setTimeout(r, 50));
        held = await awaitOpen(metricsUrl, kind, STREAMS);
        await fireWhenOpen(target.url, () => true);
        await delivered();
        const r = await running;
        expect(r.listen!.perStream).toEqual({ min: TRIGGERS, max: TRIGGERS });
        expect(r.listen!.failed).toBe(0);
        after = await awaitOpen(metricsUrl, kind, 0);
        // The trigger stamps each notification: the tap's delivery delay histogram has one per stream and trigger.
        const scrape = await fetch(metricsUrl).then((res) => res.text());
        const delays = /^mcptap_notification_delivery_delay_seconds_count\{[^}]*mcp_method_name="notifications\/tools\/list_changed"[^}]*\} (\d+)/m.exec(
          scrape,
        );
        expect(Number(delays?.[1])).toBe(STREAMS * TRIGGERS);
      } finally {
        tap.child.kill('SIGINT');
        await tap.exited;
      }
      expect(held).toBe(STREAMS);
      expect(after).toBe(0);
      const streams = JSON.parse(execFileSync(process.execPath, [MCPTAP, 'show', file, '--streams', '--json'], { encoding: 'utf8' })) as StoredLongStream[];
      expect(streams).toHaveLength(STREAMS);
      expect(new Set(streams.map((s) => s.kind))).toEqual(new Set([kind]));
      // A listen stream begins with notifications/subscriptions/acknowledged, then the triggered ones.
      const each = TRIGGERS + (kind === 'listen' ? 1 : 0);
      expect(streams.map((s) => s.notifications)).toEqual(Array(STREAMS).fill(each));
      const text = execFileSync(process.execPath, [MCPTAP, 'show', file, '--streams'], { encoding: 'utf8' });
      expect(text).toContain(`${STREAMS} ${kind} streams, ${STREAMS * each} notifications`);
      console.log(`long streams ${era}: gauge ${held} held, ${after} after; recorded ${streams.length} ${kind} streams, ${each} notifications each`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});

describe('listen step validation', () => {
  it('takes a filter and only a name and weight beside it', () => {
    expect(() => scenario(`target: { url: "http://127.0.0.1:1/mcp" }\nphases: [ { closed: { vus: 1, iterations: 1 } } ]\nsteps: [ { listen: {} } ]`)).toThrow(
      /subscribe to something/,
    );
    expect(() =>
      scenario(
        `target: { url: "http://127.0.0.1:1/mcp" }\nphases: [ { closed: { vus: 1, iterations: 1 } } ]\nsteps: [ { tool: echo, listen: { toolsListChanged: true } } ]`,
      ),
    ).toThrow(/only name and weight besides listen/);
    const s = scenario(
      `target: { url: "http://127.0.0.1:1/mcp" }\nphases: [ { closed: { vus: 1, iterations: 1 } } ]\nsteps: [ { listen: { resourceSubscriptions: [ "a://b" ] } } ]`,
    );
    expect(s.steps[0]).toMatchObject({ name: 'listen', method: 'subscriptions/listen', listen: { resourceSubscriptions: ['a://b'] } });
  });
});
