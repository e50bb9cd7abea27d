/**
 * Cancellation honoured vs not, on the raw stdio stream of `mcptap reference --stdio` (an SDK
 * client drops a response that arrives after it cancelled, so only the wire shows it).
 * Requires the build (`npx tsc -p .`).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RawStdioPeer, modernMeta } from './raw-stdio-peer.js';

let peer: RawStdioPeer | undefined;
afterEach(async () => {
  await peer?.close();
  peer = undefined;
});

function legacyHandshake(p: RawStdioPeer): Promise<unknown> {
  p.send({ id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } });
  p.send({ method: 'notifications/initialized' });
  return p.response(0);
}

describe('reference server cancellation (raw stdio)', () => {
  it('legacy era: a non-honouring delay still answers after notifications/cancelled; an honouring one does not', async () => {
    peer = new RawStdioPeer();
    await legacyHandshake(peer);
    peer.send({ id: 'keep', method: 'tools/call', params: { name: 'delay', arguments: { ms: 300, honorCancel: false } } });
    peer.send({ id: 'stop', method: 'tools/call', params: { name: 'delay', arguments: { ms: 300 } } });
    peer.send({ method: 'notifications/cancelled', params: { requestId: 'keep', reason: 'test' } });
    peer.send({ method: 'notifications/cancelled', params: { requestId: 'stop', reason: 'test' } });

    const kept = await peer.response('keep');
    expect(kept.result).toMatchObject({ content: [{ type: 'text', text: 'delayed 300 ms (cancellation ignored)' }] });
    // A request sent after both: its answer proves the server kept going and ordered nothing
    // for 'stop' (whose 300 ms have long passed by then).
    peer.send({ id: 'after', method: 'tools/call', params: { name: 'delay', arguments: { ms: 400 } } });
    await peer.response('after');
    expect(peer.lines.filter((m) => m.id === 'stop')).toEqual([]);
  });

  it('2026-07-28 era: same behaviour, and the server-wide default can be flipped with --ignore-cancel', async () => {
    peer = new RawStdioPeer(['--ignore-cancel']);
    peer.send({ id: 1, method: 'server/discover', params: { _meta: modernMeta() } });
    expect((await peer.response(1)).result).toMatchObject({ supportedVersions: ['2026-07-28'] });

    peer.send({
      id: 2,
      method: 'tools/call',
      params: { name: 'progress', arguments: { steps: 3, intervalMs: 100 }, _meta: modernMeta({ progressToken: 'p2' }) },
    });
    peer.send({ id: 3, method: 'tools/call', params: { name: 'delay', arguments: { ms: 300, honorCancel: true }, _meta: modernMeta() } });
    await peer.waitFor((m) => m.method === 'notifications/progress');
    peer.send({ method: 'notifications/cancelled', params: { requestId: 2, _meta: modernMeta() } });
    peer.send({ method: 'notifications/cancelled', params: { requestId: 3, _meta: modernMeta() } });

    const kept = await peer.response(2);
    expect(kept.result).toMatchObject({ resultType: 'complete', content: [{ text: expect.stringContaining('cancellation ignored') }] });
    expect(peer.lines.filter((m) => m.method === 'notifications/progress')).toHaveLength(3);
    peer.send({ id: 4, method: 'tools/call', params: { name: 'delay', arguments: { ms: 400 }, _meta: modernMeta() } });
    await peer.response(4);
    expect(peer.lines.filter((m) => m.id === 3)).toEqual([]);
  });
});
