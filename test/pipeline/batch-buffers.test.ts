/**
 * The worker pipeline's batch buffers: bytes come out whole and in order with room for the ops
 * after them, a buffer the worker hands back is reused for the next batch of a similar size, and
 * the spares kept for reuse stay bounded in number and size.
 */
import { describe, expect, it } from 'vitest';
import { BatchBuffers } from '../../src/pipeline/batch-buffers.js';

const bytes = (n: number, fill: number) => Buffer.alloc(n, fill);

describe('batch buffers', () => {
  it('holds the appended bytes in order, across growth, with room for the tail', () => {
    const b = new BatchBuffers();
    const parts = [bytes(10, 1), bytes(70_000, 2), bytes(5, 3), bytes(300_000, 4)];
    for (const p of parts) b.append(p);
    expect(b.length).toBe(370_015);
    const buf = b.finish(1234);
    expect(buf.length).toBeGreaterThanOrEqual(370_015 + 1234);
    expect(buf.subarray(0, 370_015).equals(Buffer.concat(parts))).toBe(true);
    expect(b.length).toBe(0);
  });

  it('reuses a buffer the worker handed back for the next batch that fits it', () => {
    const b = new BatchBuffers();
    b.append(bytes(100_000, 1));
    const first = b.finish(100);
    b.handedBack(first.buffer as ArrayBuffer);
    // Buffers sized from now on have room to spare: a somewhat bigger batch still fits a reused one.
    for (let i = 0; i < 5; i++) {
      b.append(bytes(120_000 + i * 1000, i));
      const buf = b.finish(100);
      b.handedBack(buf.buffer as ArrayBuffer);
    }
    const seen = new Set<ArrayBuffer>();
    for (let i = 0; i < 20; i++) {
      b.append(bytes(125_000, i));
      const buf = b.finish(100);
      seen.add(buf.buffer as ArrayBuffer);
      b.handedBack(buf.buffer as ArrayBuffer);
    }
    expect(seen.size).toBe(1);
  });

  it('keeps at most four spares: a fifth, bigger one takes the place of the smallest; one over 4 MiB is not kept', () => {
    const kept = [256, 400, 600, 900].map((k) => new ArrayBuffer(k * 1000));
    const probe = (b: BatchBuffers, n: number) => {
      b.append(bytes(n - 100, 7));
      return b.finish(100).buffer;
    };
    // Four handed back: batches of their sizes, smallest first, come from them.
    const four = new BatchBuffers();
    for (const ab of kept) four.handedBack(ab);
    // (Compared by index: a failing deep comparison of buffers this size takes minutes to print.)
    expect([256, 400, 600, 900].map((k) => kept.indexOf(probe(four, k * 1000) as ArrayBuffer))).toEqual([0, 1, 2, 3]);
    // A fifth, bigger: the 256 000 one gave way, so a batch of that size takes the next one up.
    const five = new BatchBuffers();
    for (const ab of kept) five.handedBack(ab);
    const bigger = new ArrayBuffer(1_400_000);
    five.handedBack(bigger);
    expect(kept.indexOf(probe(five, 256_000) as ArrayBuffer)).toBe(1);
    // Over 4 MiB: not kept (a burst's one large batch does not pin its memory).
    const large = new BatchBuffers();
    const huge = new ArrayBuffer(5 * 2 ** 20);
    large.handedBack(huge);
    expect(probe(large, 4_500_000) === huge).toBe(false);
  });
});
