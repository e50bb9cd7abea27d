/**
 * Long-lived streams in the pipeline: the tap's open/close edges become `stream-opened` and
 * `stream-closed` events, the latter with the notifications that arrived on the stream (its
 * frames' streamId) and no others; a connection that closes ends its streams still open.
 */
import { describe, expect, it } from 'vitest';
import type { StreamClosed, TapEvent } from '../../src/model/events.js';
import { Pipeline } from '../../src/pipeline/pipeline.js';

const note = (method: string) => Buffer.from(JSON.stringify({ jsonrpc: '2.0', method }));

function setup(): { p: Pipeline; seen: TapEvent[] } {
  const p = new Pipeline({ tickMs: 0 });
  const seen: TapEvent[] = [];
  p.subscribe((e) => seen.push(e));
  p.openConnection({ connectionId: 'h', transport: 'http', target: 'http://127.0.0.1:9/mcp', sessionId: 's' }, 1);
  return { p, seen };
}

const closedOf = (seen: TapEvent[]) => seen.filter((e): e is StreamClosed => e.type === 'stream-closed');

describe('Pipeline.longStream', () => {
  it('counts the notifications of each stream between its edges', () => {
    const { p, seen } = setup();
    p.longStream('h', '2', { state: 'opened', kind: 'get', timeUs: 10 });
    p.longStream('h', '2', { state: 'opened', kind: 'get', timeUs: 11 }); // repeated: ignored
    p.longStream('h', '3', { state: 'opened', kind: 'listen', timeUs: 12 });
    expect(p.openLongStreams).toBe(2);
    const sse = (streamId: string, t: number) => ({ connectionId: 'h', direction: 's2c' as const, channel: 'sse' as const, timeUs: t, context: { streamId } });
    p.pushMessage(sse('2', 20), note('notifications/tools/list_changed'));
    p.pushMessage(sse('2', 21), note('notifications/tools/list_changed'));
    p.pushMessage(sse('3', 22), note('notifications/tools/list_changed'));
    p.pushMessage(sse('9', 23), note('notifications/tools/list_changed')); // a request's stream: not counted
    p.longStream('h', '2', { state: 'closed', kind: 'get', timeUs: 30 });
    p.longStream('h', '2', { state: 'closed', kind: 'get', timeUs: 31 }); // already closed: ignored
    expect(seen.filter((e) => e.type === 'stream-opened')).toEqual([
      { type: 'stream-opened', connectionId: 'h', streamId: '2', kind: 'get', timeUs: 10 },
      { type: 'stream-opened', connectionId: 'h', streamId: '3', kind: 'listen', timeUs: 12 },
    ]);
    expect(closedOf(seen)).toEqual([{ type: 'stream-closed', connectionId: 'h', streamId: '2', kind: 'get', openedUs: 10, timeUs: 30, notifications: 2 }]);
    expect(p.openLongStreams).toBe(1);
    expect(p.errors).toBe(0);
  });

  it('ends the streams of a connection that closes, before the connection-closed event', () => {
    const { p, seen } = setup();
    p.longStream('h', '2', { state: 'opened', kind: 'get', timeUs: 10 });
    p.closeConnection('h', { reason: 'session_deleted', timeUs: 40 });
    expect(closedOf(seen)).toEqual([{ type: 'stream-closed', connectionId: 'h', streamId: '2', kind: 'get', openedUs: 10, timeUs: 40, notifications: 0 }]);
    expect(seen.at(-1)!.type).toBe('connection-closed');
    expect(p.openLongStreams).toBe(0);
  });
});
