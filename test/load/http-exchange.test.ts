/**
 * The load driver's dispatch handler takes undici's raw response headers and reads only
 * `content-type`: checked against undici's own parseHeaders (what the handler used before).
 */
import { describe, expect, it } from 'vitest';
import { util } from 'undici';
import { rawContentType } from '../../src/load/drivers/http-exchange.js';

const raw = (...pairs: string[]) => pairs.map((p) => Buffer.from(p, 'latin1'));

function viaUndici(headers: Buffer[]): string {
  const ct = util.parseHeaders(headers)['content-type'];
  return ct === undefined ? '' : Array.isArray(ct) ? ct.join(', ') : ct;
}

describe('rawContentType', () => {
  const cases: Record<string, Buffer[]> = {
    json: raw('Content-Type', 'application/json', 'Content-Length', '12'),
    sse: raw('date', 'x', 'content-type', 'text/event-stream; charset=utf-8', 'keep-alive', 'timeout=5'),
    'mixed case': raw('CoNtEnT-TyPe', 'Application/JSON'),
    absent: raw('content-length', '0', 'content-typo', 'text/plain', 'xcontent-type', 'a'),
    repeated: raw('content-type', 'application/json', 'X-A', 'b', 'Content-Type', 'text/plain'),
    'latin1 value': raw('content-type', 'text/plain; name=caf\u00e9'),
    'no headers': [],
  };
  for (const [name, headers] of Object.entries(cases)) {
    it(`${name}: what undici's parseHeaders gives`, () => {
      expect(rawContentType(headers)).toBe(viaUndici(headers));
    });
  }

  it('finds it among string headers too', () => {
    expect(rawContentType(['X-Y', 'z', 'Content-Type', 'application/json'])).toBe('application/json');
  });
});
