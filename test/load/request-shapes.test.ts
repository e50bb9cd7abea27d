import { afterAll, describe, expect, it } from 'vitest';
import { HttpChannel } from '../../src/client/mcp-channel.js';
import { McpSession } from '../../src/client/mcp-session.js';
import { applyHeaderOverrides, mcpHeaders } from '../../src/client/mcp-request.js';
import type { PreparedCall } from '../../src/load/drivers/driver.js';
import { RequestShapes } from '../../src/load/drivers/request-shapes.js';

// No request is sent: the channel only gives the sessions their era. Its pool opens nothing unused.
const channel = new HttpChannel({ url: 'http://127.0.0.1:9/mcp' });
afterAll(() => channel.close());

const base = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: 'Bearer t' };

/** What the general client sends for `c` with `id`: body text and the merged header map. */
function reference(session: McpSession, c: PreparedCall, id: number): { text: string; headers: Record<string, string> } {
  const req = session.build(c.method, c.params, id);
  return { text: JSON.stringify(req), headers: { ...base, ...applyHeaderOverrides(mcpHeaders(req.method, req.params, session.headerContext), c.headers) } };
}

const pairs = (flat: string[] | undefined) => Object.fromEntries(Array.from({ length: (flat?.length ?? 0) / 2 }, (_, i) => [flat![2 * i], flat![2 * i + 1]]));

describe('RequestShapes: pre-built requests are the bytes the general client sends', () => {
  const modern = new McpSession(channel, { era: 'modern', protocolVersion: '2026-07-28' });
  const legacy = new McpSession(channel, { era: 'legacy' });
  const calls: PreparedCall[] = [
    { step: 'echo', method: 'tools/call', tool: 'echo', params: { name: 'echo', arguments: { text: 'a "quoted" \u0000 id' } }, progress: false, fixed: true },
    { step: 'ping', method: 'ping', progress: false, fixed: true },
    { step: 'odd', method: 'resources/read', params: { uri: 'file:///x y' }, headers: { 'Mcp-Name': null, 'X-Extra': '1' }, progress: false, fixed: true },
    { step: 'dyn', method: 'tools/call', tool: 'add', params: { name: 'add', arguments: { a: 1 } }, progress: false },
  ];
  for (const [era, session] of [
    ['modern', modern],
    ['legacy', legacy],
  ] as const) {
    it(`${era}: the same text and headers for every id, fixed or not`, () => {
      const shapes = new RequestShapes(base);
      for (const c of calls) {
        for (const id of [1, 42, 1234567]) {
          const b = shapes.build(session, c, id);
          const want = reference(session, c, id);
          expect(b.text).toBe(want.text);
          expect(pairs(b.headers)).toEqual(want.headers);
        }
      }
    });
  }

  it('a progress call carries its own token, p-<id>', () => {
    const shapes = new RequestShapes(undefined);
    const c: PreparedCall = { step: 's', method: 'tools/call', params: { name: 'slow', arguments: {} }, progress: true, fixed: true };
    const b = shapes.build(modern, c, 7);
    expect(b.progressToken).toBe('p-7');
    expect(JSON.parse(b.text).params._meta.progressToken).toBe('p-7');
    expect(b.headers).toBeUndefined();
  });
});
