/**
 * The worker wire's binary op codec: every op kind and every FrameContext field comes back as the
 * JSON it replaced would have carried it; a writer for a pipeline that records nothing keeps only
 * trace-context headers; batches decode on their own; bytes that are not a batch are refused.
 */
import { describe, expect, it } from 'vitest';
import { decodeWireOps, encodeWireOps, WireOpWriter } from '../../src/pipeline/wire-codec.js';
import { Op, type WireOp } from '../../src/pipeline/worker-wire.js';

const viaJson = (ops: WireOp[]): unknown => JSON.parse(JSON.stringify(ops));

const fullContext = {
  streamId: '17',
  httpStatus: 200,
  sessionId: 'sess-é-1',
  sseEventId: 'ev-9',
  sseEventName: 'message',
  headerProtocolVersion: '2026-07-28',
  responseHeadersUs: 1_796_130_903_004_394,
  streamEndUs: 1_796_130_903_004_413,
  headers: {
    host: '127.0.0.1:1',
    authorization: 'mcptap-token:abc',
    traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
    tracestate: 'k=v',
  },
};

const sample: WireOp[] = [
  [Op.Open, { connectionId: 'http:conn-1', transport: 'http', target: 'http://127.0.0.1:9/mcp' } as never, 1],
  [Op.Chunk, 'stdio', 'c2s', 'stdio', 1_796_130_902_996_742, 213],
  [Op.Chunk, 'stdio', 's2c', 'stderr', 2.5, 0],
  [
    Op.Request,
    { connectionId: 'http:conn-1', direction: 'c2s', channel: 'http-body', timeUs: 3, context: fullContext },
    213,
    { 'mcp-method': 'tools/call', 'mcp-name': ['a', 'b'] },
  ],
  [Op.Message, { connectionId: 'http:conn-1', direction: 's2c', channel: 'sse', timeUs: 4, context: { streamId: '17', sseEventId: '1' } }, 140],
  [Op.Message, { connectionId: 'http:conn-1', direction: 's2c', channel: 'http-body', timeUs: 5 }, 10],
  [Op.Message, { connectionId: 'http:conn-1', direction: 's2c', channel: 'http-body', timeUs: 5, context: {} }, 10],
  [Op.EndStream, 'http:conn-1', '17', { timeUs: 6, outcome: 'transport_error', errorClass: 'stream_ended_without_response', httpStatus: 200 }],
  [Op.EndStream, 'http:conn-1', '18', { timeUs: 7, outcome: 'cancelled' }],
  [Op.Anomaly, 'dropped', 'http:conn-1', '2 messages (10 bytes) forwarded but not observed', { direction: 'c2s', timeUs: 8 }],
  [Op.Gap, 'stdio', 'c2s', 'stdio', { bytes: 5, chunks: 1, endedAtNewline: true, timeUs: 9 }],
  [Op.LongStream, 'http:s1', '4', { state: 'opened', kind: 'get', timeUs: 10 }],
  [Op.LongStream, 'http:s1', '4', { state: 'closed', kind: 'get', timeUs: 11 }],
  [Op.Close, 'http:conn-1', { reason: 'client closed', exitCode: null, timeUs: 10 }],
];

describe('wire codec', () => {
  it('carries every op kind and context field as JSON would', () => {
    expect(decodeWireOps(encodeWireOps(sample))).toEqual(viaJson(sample));
  });

  it('is smaller than the JSON it replaces for repeated exchanges', () => {
    const many = Array.from({ length: 50 }, () => sample).flat();
    expect(encodeWireOps(many).length).toBeLessThan(JSON.stringify(many).length / 2);
    expect(decodeWireOps(encodeWireOps(many))).toEqual(viaJson(many));
  });

  it('keeps only trace-context headers for a pipeline that records nothing, and drops an empty set', () => {
    const [req] = decodeWireOps(encodeWireOps([sample[3]!], 'trace')) as [[Op.Request, { context: Record<string, unknown> }, number, unknown]];
    expect(req[1].context.headers).toEqual({ traceparent: fullContext.headers.traceparent, tracestate: 'k=v' });
    expect(req[1].context.streamId).toBe('17');
    const noTrace: WireOp = [
      Op.Request,
      { connectionId: 'c', direction: 'c2s', channel: 'http-body', timeUs: 1, context: { streamId: '1', headers: { host: 'h' } } },
      0,
      {},
    ];
    expect(decodeWireOps(encodeWireOps([noTrace], 'trace'))).toEqual([
      [Op.Request, { connectionId: 'c', direction: 'c2s', channel: 'http-body', timeUs: 1, context: { streamId: '1' } }, 0, {}],
    ]);
  });

  it('starts each batch with an empty string table, so batches decode on their own', () => {
    const w = new WireOpWriter();
    w.write(sample[1]!);
    const first = Buffer.alloc(w.length);
    w.take(first, 0);
    w.write(sample[1]!);
    const second = Buffer.alloc(w.length);
    w.take(second, 0);
    expect(second.equals(first)).toBe(true);
    expect(decodeWireOps(second)).toEqual(viaJson([sample[1]!]));
  });

  it('carries long and non-ASCII strings whole', () => {
    const long = 'x'.repeat(100_000) + 'ü';
    const ops: WireOp[] = [[Op.EndStream, 'ç'.repeat(70), long, { timeUs: 1, outcome: 'cancelled', errorClass: '日本' }]];
    expect(decodeWireOps(encodeWireOps(ops))).toEqual(viaJson(ops));
  });

  it('refuses bytes that are not a batch', () => {
    const good = encodeWireOps(sample);
    expect(() => decodeWireOps(good.subarray(0, good.length - 3))).toThrow(/end early|past/);
    expect(() => decodeWireOps(Buffer.from([0xee]))).toThrow(/unknown wire op/);
    expect(() => decodeWireOps(Buffer.from([Op.EndStream, 5]))).toThrow(/unknown string/);
  });
});
