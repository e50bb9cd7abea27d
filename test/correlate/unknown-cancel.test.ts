/**
 * `unknown_request_cancelled`: a server's `notifications/cancelled` for an id the tap never saw (the
 * GET-stream race's only trace in a recording). A cancel of a known request, answered or not, is
 * normal; a client's cancel of an unseen id is not flagged (sessionless HTTP: see the correlator).
 */
import { describe, expect, it } from 'vitest';
import { Correlator } from '../../src/correlate/correlator.js';
import { counter, parseMessageBytes } from '../../src/parse/frame-parser.js';
import type { Channel, Direction } from '../../src/model/frame.js';
import type { AnomalySeen, TapEvent } from '../../src/model/events.js';

function harness(opts = {}) {
  const c = new Correlator(opts);
  const seq = counter();
  const events: TapEvent[] = [];
  let t = 1_000_000;
  const send = (direction: Direction, msg: unknown, conn = 'k', channel: Channel = 'stdio') => {
    t += 1000;
    for (const f of parseMessageBytes(Buffer.from(JSON.stringify(msg)), { connectionId: conn, direction, channel, timeUs: t }, seq)) c.push(f, events);
  };
  const unknown = () => events.filter((e): e is AnomalySeen => e.type === 'anomaly' && e.kind === 'unknown_request_cancelled');
  return { c, send, events, unknown };
}

const req = (id: unknown, method: string) => ({ jsonrpc: '2.0', id, method, params: {} });
const ok = (id: unknown) => ({ jsonrpc: '2.0', id, result: {} });
const cancel = (requestId: unknown) => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason: 'timeout' } });

describe('Correlator: cancellation of a request the tap never saw', () => {
  it('a server cancel of an unseen id raises it, naming the GET-stream race on HTTP', () => {
    const h = harness();
    h.send('s2c', cancel(0), 'http:sess-1', 'sse');
    h.send('s2c', cancel('x'), 'k', 'stdio');
    const [race, stdio] = h.unknown();
    expect(race).toMatchObject({ connectionId: 'http:sess-1', direction: 's2c' });
    expect(race!.detail).toMatch(/^cancellation of request id 0 that the tap never saw: .*GET-stream race/);
    expect(stdio!.detail).toBe('cancellation of request id "x" that the tap never saw: the server cancelled a request it never sent on this connection');
  });

  it('a cancel of a known request, pending or answered, raises nothing, in either direction', () => {
    const h = harness();
    h.send('s2c', req(1, 'sampling/createMessage'));
    h.send('s2c', cancel(1)); // pending
    h.send('s2c', req(2, 'elicitation/create'));
    h.send('c2s', ok(2));
    h.send('s2c', cancel(2)); // answered: a late cancel is normal
    h.send('c2s', req(3, 'tools/call'));
    h.send('s2c', ok(3));
    h.send('c2s', cancel(3));
    expect(h.events.filter((e) => e.type === 'anomaly')).toEqual([]);
  });

  it('the direction matters: a server cancel of an id only the client used is unknown', () => {
    const h = harness();
    h.send('c2s', req(5, 'tools/call'));
    h.send('s2c', cancel(5));
    expect(h.unknown()).toHaveLength(1);
  });

  it('a client cancel of an unseen id is not flagged', () => {
    const h = harness();
    h.send('c2s', cancel(42));
    expect(h.events.filter((e) => e.type === 'anomaly')).toEqual([]);
  });

  it('remembers at most seenLimit completed requests, and none of a closed connection', () => {
    const h = harness({ seenLimit: 2 });
    for (const id of [1, 2, 3]) {
      h.send('s2c', req(id, 'ping'));
      h.send('c2s', ok(id));
    }
    h.send('s2c', cancel(1)); // forgotten: the oldest went when 3 completed
    h.send('s2c', cancel(3));
    expect(h.unknown().map((a) => a.detail.match(/id (\d+)/)![1])).toEqual(['1']);
    h.c.close('k', 1);
    h.send('s2c', cancel(3));
    expect(h.unknown()).toHaveLength(2);
  });
});
