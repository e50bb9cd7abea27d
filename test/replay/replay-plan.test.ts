/**
 * The pure parts of a replay: the plan (order, concurrency, sessions) and the remapping of ids,
 * progress tokens, `requestState` and subscription ids.
 */
import { describe, expect, it } from 'vitest';
import type { JsonRpcRequest } from '../../src/model/jsonrpc.js';
import { dependencies, planReplay } from '../../src/replay/replay-plan.js';
import { ReplayRemap } from '../../src/replay/replay-remap.js';
import { finishReport } from '../../src/replay/replay-report.js';
import { ServerAnswers } from '../../src/replay/server-answers.js';
import type { StoredExchange } from '../../src/store/types.js';

let row = 0;
function ex(id: number, startUs: number, endUs: number | undefined, over: Partial<StoredExchange> = {}): StoredExchange {
  row++;
  return {
    rowid: row,
    recordingId: 1,
    state: endUs === undefined ? 'started' : 'completed',
    key: `c1/c2s/${row}`,
    connectionId: 'c1',
    direction: 'c2s',
    id,
    idType: 'number',
    method: 'tools/call',
    era: 'legacy',
    request: { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 't' } },
    ...(endUs !== undefined ? { response: { jsonrpc: '2.0', id, result: {} }, endUs, latencyUs: endUs - startUs } : {}),
    startUs,
    outcome: endUs === undefined ? 'unanswered' : 'ok',
    isError: false,
    progress: [],
    responseAfterCancel: false,
    requestSeq: row,
    ...over,
  };
}

describe('replay plan', () => {
  it('waits only for responses recorded before the request, keeping overlapping exchanges concurrent', () => {
    // a: 0-10; b: 5-20 (overlaps a); c: 12-30 (after a, overlaps b); d: 25-40 (after a and b: b does
    // not wait for a); e: 50 (after everything; c waits for a, so not a itself).
    const list = [ex(1, 0, 10), ex(2, 5, 20), ex(3, 12, 30), ex(4, 25, 40), ex(5, 50, 60)];
    expect(dependencies(list)).toEqual([[], [], [0], [0, 1], [2, 3]]);
  });

  it('never waits for an exchange that was never answered, nor for itself or a later one', () => {
    const list = [ex(1, 0, undefined), ex(2, 5, 5), ex(3, 5, 5), ex(4, 9, 12)];
    expect(dependencies(list)).toEqual([[], [], [1], [2]]);
  });

  it('orders by recorded start, offsets from the first replayed request, and filters without losing sessions', () => {
    const init = ex(0, 100, 150, { method: 'initialize', request: { jsonrpc: '2.0', id: 0, method: 'initialize', params: {} }, sessionId: 'S1' });
    const a = ex(1, 300, 400, { sessionId: 'S1', target: 'a' });
    const b = ex(2, 200, 250, { sessionId: 'S1', target: 'b' });
    const other = ex(3, 210, 260, { sessionId: 'S2', target: 'a' });
    const orphan = ex(9, 220, 220, { state: 'orphaned', method: '' });
    const server = ex(7, 230, 240, { direction: 's2c', method: 'sampling/createMessage' });
    const plan = planReplay([a, b, init, other, orphan, server], (e) => e.target === 'a');
    expect(plan.steps.map((s) => [s.exchange.id, s.offsetUs, s.session, s.after])).toEqual([
      [3, 0, '1/session S2', []],
      [1, 90, '1/session S1', [0]],
    ]);
    // S1's initialize is not replayed as a step, so the session opens with it.
    expect(plan.sessions.find((s) => s.key === '1/session S1')?.initialize).toBe(init);
    expect(plan.sessions.map((s) => s.era)).toEqual(['legacy', 'legacy']);
  });

  it('replays several recordings one after the other, each with its own gaps', () => {
    const later = ex(1, 1_000_000, 1_000_010, { recordingId: 2 });
    const laterToo = ex(2, 1_000_050, 1_000_060, { recordingId: 2 });
    const first = ex(1, 100, 200);
    const plan = planReplay([later, laterToo, first]);
    expect(plan.steps.map((s) => [s.exchange.recordingId, s.offsetUs, s.after])).toEqual([
      [1, 0, []],
      [2, 101, [0]],
      [2, 151, [1]],
    ]);
  });

  it('puts every modern exchange of a recording in one stateless session', () => {
    const plan = planReplay([ex(1, 0, 5, { era: 'modern', connectionId: 'x' }), ex(2, 1, 6, { era: 'modern', connectionId: 'y' })]);
    expect(new Set(plan.steps.map((s) => s.session))).toEqual(new Set(['1/modern']));
    expect(plan.sessions).toEqual([{ key: '1/modern', era: 'modern' }]);
  });
});

describe('replay remap', () => {
  const call = (id: number, params: Record<string, unknown>): JsonRpcRequest => ({ jsonrpc: '2.0', id, method: 'tools/call', params });

  it('sends a fresh id and progress token, and maps the answer back to the recorded id', () => {
    const remap = new ReplayRemap();
    const recorded = call(7, { name: 'slow', _meta: { progressToken: 7, traceparent: 'tp' } });
    const out = remap.outgoing(recorded, 1);
    expect(out.request).toEqual(call(1, { name: 'slow', _meta: { progressToken: 'mcptap-replay-1', traceparent: 'tp' } }));
    expect(out.progressToken).toBe('mcptap-replay-1');
    expect(recorded.params).toEqual({ name: 'slow', _meta: { progressToken: 7, traceparent: 'tp' } });
    expect(remap.back({ jsonrpc: '2.0', id: 1, result: { ok: true } }, recorded, undefined, 1)).toEqual({ jsonrpc: '2.0', id: 7, result: { ok: true } });
  });

  it('sends the recorded progress token when the connection has it free, a fresh one when not', () => {
    const remap = new ReplayRemap();
    const recorded = call(7, { name: 'slow', _meta: { progressToken: 7 } });
    expect(remap.outgoing(recorded, 7, () => true).request).toEqual(call(7, { name: 'slow', _meta: { progressToken: 7 } }));
    expect(remap.outgoing(recorded, 8, (t) => t !== 7).progressToken).toBe('mcptap-replay-1');
  });

  it("retries an MRTR call with the new server's requestState, and compares the recorded one", () => {
    const remap = new ReplayRemap();
    const first = call(1, { name: 'ask' });
    const recordedAnswer = { jsonrpc: '2.0' as const, id: 1, result: { resultType: 'input_required', requestState: 'OLD' } };
    const back = remap.back({ jsonrpc: '2.0', id: 10, result: { resultType: 'input_required', requestState: 'NEW' } }, first, recordedAnswer, 10);
    expect(back).toEqual(recordedAnswer);
    const retry = remap.outgoing(call(2, { name: 'ask', requestState: 'OLD', inputResponses: {} }), 11);
    expect(retry.request.params).toEqual({ name: 'ask', requestState: 'NEW', inputResponses: {} });
  });

  it('maps a subscription id (the listen request id) back, and cancels the replayed request', () => {
    const remap = new ReplayRemap();
    const listen: JsonRpcRequest = { jsonrpc: '2.0', id: 'L', method: 'subscriptions/listen', params: {} };
    remap.outgoing(listen, 5);
    const back = remap.back({ jsonrpc: '2.0', id: 5, result: { _meta: { 'io.modelcontextprotocol/subscriptionId': 5 } } }, listen, undefined, 5);
    expect(back).toEqual({ jsonrpc: '2.0', id: 'L', result: { _meta: { 'io.modelcontextprotocol/subscriptionId': 'L' } } });
    const cancel = remap.outgoing({ jsonrpc: '2.0', id: 0, method: 'notifications/cancelled', params: { requestId: 'L' } }, 6);
    expect(cancel.request.params).toEqual({ requestId: 5 });
  });
});

describe('server answers', () => {
  it('answers with the recorded answers in order, then the last; ping always; others are reported', () => {
    const s2c = (id: number, method: string, result: unknown, startUs: number) =>
      ex(id, startUs, startUs + 1, { direction: 's2c', method, request: { jsonrpc: '2.0', id, method }, response: { jsonrpc: '2.0', id, result } });
    const answers = new ServerAnswers([s2c(2, 'roots/list', { roots: [2] }, 20), s2c(1, 'roots/list', { roots: [1] }, 10)]);
    const ask = (id: number, method: string) => answers.answer({ jsonrpc: '2.0', id, method });
    expect(ask(100, 'roots/list')).toEqual({ response: { jsonrpc: '2.0', id: 100, result: { roots: [1] } }, fromRecording: true });
    expect(ask(101, 'roots/list').response).toEqual({ jsonrpc: '2.0', id: 101, result: { roots: [2] } });
    expect(ask(102, 'roots/list').response).toEqual({ jsonrpc: '2.0', id: 102, result: { roots: [2] } });
    expect(ask(103, 'ping')).toEqual({ response: { jsonrpc: '2.0', id: 103, result: {} }, fromRecording: true });
    expect(ask(104, 'elicitation/create').fromRecording).toBe(false);
    expect(ask(104, 'elicitation/create').response).toMatchObject({ id: 104, error: { code: -32601 } });
  });
});

describe('replay report slowdowns', () => {
  it('never counts initialize or server/discover as a slowdown: that is start-up', () => {
    const slow = (method: string) => ({
      recorded: ex(1, 0, 1000, { method, latencyUs: 1000 }),
      replayed: {
        response: { jsonrpc: '2.0' as const, id: 1, result: {} },
        outcome: 'ok' as const,
        isError: false,
        latencyUs: 900_000,
        progressCount: 0,
        unexpectedServerRequests: [],
      },
      differences: [],
    });
    const report = finishReport({
      file: 'f',
      recordingIds: [1],
      target: 't',
      slowdown: { factor: 1.5, floorUs: 1000, minSamples: 1 },
      pairs: [slow('initialize'), slow('server/discover'), slow('tools/list')],
    });
    expect(report.groupDifferences!.map((g) => g.group)).toEqual(['tools/list']);
  });
});
