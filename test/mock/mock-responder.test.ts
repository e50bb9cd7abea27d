/** The transport-independent responder: plans from recorded answers (pure; no IO, no clock). */
import { describe, expect, it } from 'vitest';
import { MOCK_MISS_CODE, MockResponder, describeStats } from '../../src/mock/mock-responder.js';
import type { RecordedAnswer, RecordedAnswers } from '../../src/mock/recorded-answers.js';
import type { JsonRpcRequest } from '../../src/model/jsonrpc.js';

const answer = (method: string, params: unknown, result: unknown, extra: Partial<RecordedAnswer> = {}): RecordedAnswer => ({
  exchangeKey: `c1/c2s/${method}`,
  method,
  params,
  era: 'legacy',
  notifications: [],
  response: { afterUs: 30_000, message: { jsonrpc: '2.0', id: 99, result } },
  overSse: false,
  ...extra,
});

const progress = (p: number) => ({
  jsonrpc: '2.0' as const,
  method: 'notifications/progress',
  params: { progressToken: 'recorded-token', progress: p, total: 2 },
});

const RECORDED: RecordedAnswers = {
  unanswered: 0,
  answers: [
    answer('initialize', { protocolVersion: '2025-06-18', clientInfo: { name: 'recorder' } }, { protocolVersion: '2025-06-18', serverInfo: { name: 's' } }),
    answer('initialize', {}, { protocolVersion: 'second' }),
    answer(
      'tools/call',
      { name: 'slow', arguments: {}, _meta: { progressToken: 'recorded-token' } },
      { content: [] },
      {
        notifications: [
          { afterUs: 10_000, message: progress(1) },
          { afterUs: 20_000, message: progress(2) },
          { afterUs: 25_000, message: { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x' } } },
        ],
      },
    ),
  ],
};

const req = (id: JsonRpcRequest['id'], method: string, params?: Record<string, unknown>): JsonRpcRequest => ({
  jsonrpc: '2.0',
  id,
  method,
  ...(params ? { params } : {}),
});

describe('MockResponder', () => {
  it('answers initialize with the first recorded handshake, whatever the client sent, under its id', () => {
    const r = new MockResponder(RECORDED);
    const plan = r.answer(req('init-1', 'initialize', { protocolVersion: '2025-11-25', clientInfo: { name: 'another' } }));
    expect(plan.outcome).toBe('hit');
    expect(plan.messages.map((m) => m.message)).toEqual([
      { jsonrpc: '2.0', id: 'init-1', result: { protocolVersion: '2025-06-18', serverInfo: { name: 's' } } },
    ]);
  });

  it("negotiates initialize's version: an older known one the client asks, else the recorded one", () => {
    const r = new MockResponder(RECORDED);
    const version = (asked: unknown) => {
      const m = r.answer(req(1, 'initialize', { protocolVersion: asked })).messages[0]!.message as { result: { protocolVersion: string } };
      return m.result.protocolVersion;
    };
    expect(version('2025-03-26')).toBe('2025-03-26');
    expect(version('2024-11-05')).toBe('2024-11-05');
    expect(version('2025-11-25')).toBe('2025-06-18');
    expect(version('2024-10-07')).toBe('2025-06-18');
    expect(version(undefined)).toBe('2025-06-18');
  });

  it("re-sends progress under the caller's token and the response under its id", () => {
    const r = new MockResponder(RECORDED);
    const plan = r.answer(req(7, 'tools/call', { name: 'slow', arguments: {}, _meta: { progressToken: 42 } }));
    expect(plan.messages.map((m) => m.message)).toEqual([
      { ...progress(1), params: { ...progress(1).params, progressToken: 42 } },
      { ...progress(2), params: { ...progress(2).params, progressToken: 42 } },
      { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x' } },
      { jsonrpc: '2.0', id: 7, result: { content: [] } },
    ]);
    expect(plan.overSse).toBe(true);
    // fast: nothing waits for the recorded gaps.
    expect(plan.messages.map((m) => m.afterMs)).toEqual([0, 0, 0, 0]);
  });

  it('sends no progress to a caller that asked for none', () => {
    const plan = new MockResponder(RECORDED).answer(req(1, 'tools/call', { name: 'slow', arguments: {} }));
    expect(plan.messages.map((m) => (m.message as { method?: string }).method ?? 'response')).toEqual(['notifications/message', 'response']);
  });

  it('plans the recorded gaps with --pace recorded', () => {
    const plan = new MockResponder(RECORDED, { pace: 'recorded' }).answer(req(1, 'tools/call', { name: 'slow', arguments: {}, _meta: { progressToken: 1 } }));
    expect(plan.messages.map((m) => m.afterMs)).toEqual([10, 20, 25, 30]);
  });

  it(`answers a miss with error ${MOCK_MISS_CODE} naming the key and the nearest request, and counts`, () => {
    const r = new MockResponder(RECORDED);
    const plan = r.answer(req('m', 'tools/call', { name: 'slow', arguments: { fast: true } }));
    expect(plan.outcome).toBe('miss');
    const error = (plan.messages[0]!.message as { error: { code: number; message: string; data: unknown } }).error;
    expect(error.code).toBe(MOCK_MISS_CODE);
    expect(error.message).toContain('tools/call {"arguments":{"fast":true},"name":"slow"}');
    expect(error.data).toMatchObject({ key: 'tools/call {"arguments":{"fast":true},"name":"slow"}', nearest: { path: '/params/arguments/fast' } });
    expect(r.answer(req(2, 'ping')).outcome).toBe('builtin');
    r.answer(req(3, 'initialize', {}));
    expect(r.stats).toEqual({ hits: 1, misses: 1, passedThrough: 0 });
    expect(describeStats(r.stats)).toBe('1 request answered from the recording, 1 missed');
  });
});
