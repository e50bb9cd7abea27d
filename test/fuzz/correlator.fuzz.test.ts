/**
 * Fuzzing the correlator: any sequence of frames (requests, responses, notifications, cancels,
 * progress, batches, invalid frames, any JSON), interleaved with ticks, stream ends and closes,
 * never throws; every request starts exactly one exchange and completes it exactly once (all are
 * complete once their connections close); nothing stays tracked after that; the events are
 * bounded by the frames (no work without input).
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { Correlator } from '../../src/correlate/correlator.js';
import { counter, parseMessageBytes } from '../../src/parse/frame-parser.js';
import type { TapEvent } from '../../src/model/events.js';
import type { Channel, Direction } from '../../src/model/frame.js';
import { fuzz } from './fuzz-harness.js';

const id = fc.oneof(fc.constantFrom(1, 2, '1', '2', 0, null), fc.integer({ min: -3, max: 3 }), fc.string({ maxLength: 3 }));
const method = fc.constantFrom('initialize', 'tools/call', 'tools/list', 'ping', 'sampling/createMessage', 'server/discover', 'x');
const params = fc.oneof(
  fc.constant(undefined),
  fc.record({ name: fc.string({ maxLength: 4 }), _meta: fc.record({ progressToken: id }, { requiredKeys: [] }) }, { requiredKeys: [] }),
  fc.record({ requestState: fc.constantFrom('s1', 's2') }),
  fc.jsonValue({ maxDepth: 2 }),
);
const message = fc.oneof(
  fc.record({ id, method, params }).map((m) => ({ jsonrpc: '2.0', ...m })),
  fc
    .record({
      id,
      result: fc.oneof(
        fc.jsonValue({ maxDepth: 1 }),
        fc.record({ protocolVersion: fc.string(), resultType: fc.constant('input_required'), requestState: fc.constantFrom('s1', 's2') }),
      ),
    })
    .map((m) => ({ jsonrpc: '2.0', ...m })),
  fc.record({ id, error: fc.record({ code: fc.integer(), message: fc.string({ maxLength: 5 }) }) }).map((m) => ({ jsonrpc: '2.0', ...m })),
  fc
    .record({ requestId: id, reason: fc.string({ maxLength: 3 }) }, { requiredKeys: ['requestId'] })
    .map((p) => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: p })),
  fc
    .record({ progressToken: id, progress: fc.oneof(fc.double(), fc.string()), total: fc.nat() }, { requiredKeys: ['progressToken'] })
    .map((p) => ({ jsonrpc: '2.0', method: 'notifications/progress', params: p })),
  fc.jsonValue({ maxDepth: 2 }),
);
const frameBytes = fc.oneof(
  { weight: 6, arbitrary: message.map((m) => JSON.stringify(m) ?? 'null') },
  { weight: 1, arbitrary: fc.array(message, { maxLength: 3 }).map((b) => JSON.stringify(b)) },
  { weight: 1, arbitrary: fc.string({ maxLength: 10 }) },
);

type Step =
  | { op: 'frame'; conn: string; direction: Direction; channel: Channel; stream?: string; status?: number; text: string }
  | { op: 'tick'; dt: number }
  | { op: 'endStream'; conn: string; stream: string; outcome: 'cancelled' | 'transport_error' }
  | { op: 'close'; conn: string };

const conn = fc.constantFrom('a', 'b');
const stream = fc.constantFrom('p1', 'p2', 'get');
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 10,
    arbitrary: fc.record(
      {
        op: fc.constant('frame' as const),
        conn,
        direction: fc.constantFrom<Direction>('c2s', 's2c'),
        channel: fc.constantFrom<Channel>('stdio', 'http', 'sse', 'stderr'),
        stream: fc.option(stream, { nil: undefined }),
        status: fc.option(fc.constantFrom(200, 202, 400, 500), { nil: undefined }),
        text: frameBytes,
      },
      { requiredKeys: ['op', 'conn', 'direction', 'channel', 'text'] },
    ),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('tick' as const), dt: fc.nat(5_000_000) }) },
  {
    weight: 1,
    arbitrary: fc.record({ op: fc.constant('endStream' as const), conn, stream, outcome: fc.constantFrom('cancelled' as const, 'transport_error' as const) }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('close' as const), conn }) },
);

describe('fuzz: correlator', () => {
  it('never throws; one start and one completion per request; nothing left tracked after close', () => {
    fuzz(
      'correlator: exchanges complete exactly once',
      fc.property(fc.array(step, { maxLength: 40 }), fc.constantFrom(10_000, 2_000_000), (steps, graceUs) => {
        const c = new Correlator({ cancelGraceUs: graceUs, tombstoneLimit: 4 });
        const seq = counter();
        const events: TapEvent[] = [];
        let t = 1_000_000;
        let frames = 0;
        for (const s of steps) {
          t += 1000;
          if (s.op === 'frame') {
            const context = { ...(s.stream ? { streamId: s.stream } : {}), ...(s.status ? { httpStatus: s.status } : {}) };
            for (const f of parseMessageBytes(
              Buffer.from(s.text),
              { connectionId: s.conn, direction: s.direction, channel: s.channel, timeUs: t, context },
              seq,
            )) {
              frames++;
              c.push(f, events);
            }
          } else if (s.op === 'tick') c.tick((t += s.dt), events);
          else if (s.op === 'endStream') c.endStream(s.conn, s.stream, { timeUs: t, outcome: s.outcome }, events);
          else c.close(s.conn, t, 'closed', events);
        }
        c.close('a', t + 1, 'closed', events);
        c.close('b', t + 1, 'closed', events);
        const started = new Map<string, number>();
        const completed = new Map<string, number>();
        for (const e of events) {
          if (e.type === 'exchange-started') started.set(e.exchange.key, (started.get(e.exchange.key) ?? 0) + 1);
          if (e.type === 'exchange-completed') completed.set(e.exchange.key, (completed.get(e.exchange.key) ?? 0) + 1);
        }
        for (const [k, n] of started) assert.equal(n, 1, `${k} started ${n} times`);
        assert.deepEqual([...completed].sort(), [...started].sort());
        assert.equal(c.inFlight, 0);
        // Nothing of a closed connection is kept (a long-running tap sees connections come and go).
        const kept = c as unknown as Record<'byExchangeKey' | 'progressTokens' | 'streams' | 'conns' | 'operations' | 'tombstones', Map<string, unknown>>;
        for (const m of ['byExchangeKey', 'progressTokens', 'streams', 'conns', 'operations'] as const)
          assert.equal(kept[m].size, 0, `${m} keeps ${[...kept[m].keys()].join(', ')}`);
        assert.ok(kept.tombstones.size <= 4);
        // Bounded by the input: per frame a few events, per request its start and completion.
        assert.ok(events.length <= 4 * frames + 1, `${events.length} events for ${frames} frames`);
      }),
    );
  });
});
