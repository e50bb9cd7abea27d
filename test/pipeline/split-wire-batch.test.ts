/**
 * A batch too large for the recording's spool is spooled in parts: the parts replay exactly what
 * the whole batch does (same frames, same order), each part within the size asked, and a whole
 * HTTP message is never cut.
 */
import { describe, expect, it } from 'vitest';
import { splitWireBatch } from '../../src/pipeline/apply-wire-ops.js';
import { Op, type WireOp } from '../../src/pipeline/worker-wire.js';

const origin = (timeUs: number) => ({ connectionId: 'h1', direction: 'c2s', channel: 'http', timeUs, streamId: 's1' }) as never;

/** What the ops hand the pipeline, flattened: (kind, stream, bytes) in order, chunks of one stream merged. */
function replay(parts: { ops: WireOp[]; bytes: Buffer }[]): string[] {
  const seen: string[] = [];
  for (const p of parts) {
    let at = 0;
    for (const op of p.ops) {
      if (op[0] === Op.Chunk) {
        const text = p.bytes.subarray(at, (at += op[5])).toString('latin1');
        const last = seen.at(-1);
        if (last?.startsWith(`chunk ${op[1]} ${op[2]} `)) seen[seen.length - 1] = last + text;
        else seen.push(`chunk ${op[1]} ${op[2]} ${text}`);
      } else if (op[0] === Op.Message || op[0] === Op.Request) seen.push(`message ${p.bytes.subarray(at, (at += op[2])).toString('latin1')}`);
      else seen.push(`op ${op[0]}`);
    }
    expect(at).toBe(p.bytes.length);
  }
  return seen;
}

describe('splitWireBatch', () => {
  it('cuts chunks to size and keeps messages whole, replaying the same bytes in the same order', () => {
    const text = (n: number, c: string) => c.repeat(n);
    const pieces: [WireOp, string][] = [
      [[Op.Open, { id: 'c1' } as never, 1], ''],
      [[Op.Chunk, 'c1', 'c2s', 'stdout', 2, 2500], text(2500, 'a')],
      [[Op.Chunk, 'c1', 's2c', 'stdout', 3, 10], text(10, 'b')],
      [[Op.Message, origin(4), 1500], text(1500, 'm')],
      [[Op.Request, origin(5), 300, {}], text(300, 'r')],
      [[Op.Chunk, 'c1', 's2c', 'stdout', 6, 999], text(999, 'c')],
      [[Op.Close, 'c1', { timeUs: 7 } as never], ''],
    ];
    const ops = pieces.map((p) => p[0]);
    const bytes = Buffer.from(pieces.map((p) => p[1]).join(''), 'latin1');
    const parts = splitWireBatch(ops, bytes, 1000);
    expect(replay(parts)).toEqual(replay([{ ops, bytes }]));
    // Every part within 1000 bytes except the one holding the 1500-byte message alone.
    for (const p of parts) {
      if (p.bytes.length > 1000) expect(p.ops).toEqual([[Op.Message, origin(4), 1500]]);
    }
    expect(parts.length).toBeGreaterThanOrEqual(6);
    expect(Buffer.concat(parts.map((p) => p.bytes)).equals(bytes)).toBe(true);
  });

  it('leaves a batch that fits as one part', () => {
    const ops: WireOp[] = [[Op.Chunk, 'c1', 'c2s', 'stdout', 1, 5]];
    const parts = splitWireBatch(ops, Buffer.from('hello'), 1000);
    expect(parts).toEqual([{ ops, bytes: Buffer.from('hello') }]);
  });
});
