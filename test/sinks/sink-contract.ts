/**
 * The Sink contract (src/sinks/sink.ts), one suite for every sink:
 * - `onEvent` never throws, whatever it is given (well-formed, malformed, huge, unknown, null);
 * - `stats().events` counts every event given; all counters are non-negative integers;
 * - `flush()` / `close()` are idempotent and safe in any order, concurrently, before any event,
 *   and `onEvent` after `close()` still does not throw.
 *
 * Usage, in a test file: `sinkContract('my-sink', () => makeSink())` or, when the sink needs cleaning up
 * after it is closed, `sinkContract('my-sink', async () => ({ sink, cleanup }))`.
 */
import { describe, expect, it } from 'vitest';
import type { TapEvent } from '../../src/model/events.js';
import type { Sink } from '../../src/sinks/sink.js';
import { oddEvents, sampleEvents } from './sample-events.js';

export interface SinkUnderTest {
  sink: Sink;
  /** Releases what the factory made (temp files, servers); runs after the sink is closed. */
  cleanup?: () => void | Promise<void>;
}

/** Returns the sink alone, or the sink with a cleanup function. */
export type MakeSink = () => Sink | SinkUnderTest | Promise<Sink | SinkUnderTest>;

async function withSink(make: MakeSink, fn: (sink: Sink) => Promise<void>): Promise<void> {
  const made = await make();
  const { sink, cleanup }: SinkUnderTest = 'onEvent' in made ? { sink: made } : made;
  try {
    await fn(sink);
  } finally {
    await sink.close();
    await cleanup?.();
  }
}

function expectSaneStats(sink: Sink): void {
  const s = sink.stats();
  for (const k of ['events', 'dropped', 'errors'] as const) {
    expect(Number.isInteger(s[k]), `${k} is an integer`).toBe(true);
    expect(s[k], `${k} is non-negative`).toBeGreaterThanOrEqual(0);
  }
}

export function sinkContract(name: string, make: MakeSink): void {
  describe(`${name}: Sink contract`, () => {
    it('has a non-empty name', async () => {
      await withSink(make, async (sink) => {
        expect(typeof sink.name).toBe('string');
        expect(sink.name.length).toBeGreaterThan(0);
      });
    });

    it('accepts a well-formed stream and counts every event', async () => {
      await withSink(make, async (sink) => {
        const events = sampleEvents();
        for (const e of events) expect(() => sink.onEvent(e)).not.toThrow();
        await sink.flush();
        expect(sink.stats().events).toBe(events.length);
        expectSaneStats(sink);
      });
    });

    it('never throws from onEvent on odd events, and still counts them', async () => {
      await withSink(make, async (sink) => {
        const odd = oddEvents();
        for (const e of odd) expect(() => sink.onEvent(e as TapEvent)).not.toThrow();
        await expect(sink.flush()).resolves.toBeUndefined();
        expect(sink.stats().events).toBe(odd.length);
        expectSaneStats(sink);
      });
    });

    it('close before any event, then close and flush again', async () => {
      await withSink(make, async (sink) => {
        await sink.close();
        await sink.close();
        await sink.flush();
        expectSaneStats(sink);
      });
    });

    it('flush and close are idempotent and safe in any order, even concurrently', async () => {
      await withSink(make, async (sink) => {
        for (const e of sampleEvents()) sink.onEvent(e);
        await Promise.all([sink.flush(), sink.close(), sink.flush(), sink.close()]);
        await sink.flush();
        await sink.close();
        expectSaneStats(sink);
      });
    });

    it('onEvent after close does not throw and is counted', async () => {
      await withSink(make, async (sink) => {
        await sink.close();
        const before = sink.stats().events;
        for (const e of sampleEvents().slice(0, 3)) expect(() => sink.onEvent(e)).not.toThrow();
        expect(sink.stats().events).toBe(before + 3);
        await sink.flush();
        expectSaneStats(sink);
      });
    });
  });
}
