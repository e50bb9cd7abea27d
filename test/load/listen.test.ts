/**
 * `listen` steps against the reference server (a child process): 100 streams held open for the
 * phase, 2026-07-28 `subscriptions/listen` and legacy GET streams, while the `trigger` tool fires
 * tools/list_changed every 100 ms. Every notification must arrive exactly once on every stream;
 * the delivery delay (the server's firing stamp to arrival) is reported, not bounded (it is a
 * figure of the machine: see `npm run bench -- sse`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpSession } from '../../src/client/mcp-session.js';
import { HttpChannel } from '../../src/client/mcp-channel.js';
import { runLoad } from '../../src/load/run-load.js';
import { startTarget, type RunningTarget } from '../../src/load/target/target-runtime.js';
import { RecordingStore } from '../../src/store/recording-store.js';
import { startHttpTapCli } from '../helpers/http-tap-cli.js';
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

describe.each(['2026-07-28', 'legacy'])('listen step, %s era', (era) => {
  it(`${STREAMS} streams held for the phase get every notification once`, async () => {
    let ready = 0;
    const s = scenario(`
target: { url: "${target.url}", connections: ${STREAMS + 10} }
era: ${era}
phases: [ { closed: { vus: ${STREAMS}, duration: 6s } } ]
steps: [ { name: changes, listen: { toolsListChanged: true } } ]
thresholds: [ "delivery.p(99) < 60s" ]
`);
    // Ready: acknowledged (2026-07-28) or answered 200 (a legacy GET stream, registered by then).
    const failures: string[] = [];
    const running = runLoad(s, {
      onListenReady: (n) => (ready = n),
      onRecord: (rec) => {
        if (rec.sample.outcome !== 'ok' || rec.sample.step === 'changes') failures.push(JSON.stringify(rec.sample));
      },
    });
    await fireWhenOpen(target.url, () => ready >= STREAMS);
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
