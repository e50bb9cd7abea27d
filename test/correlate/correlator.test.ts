import { describe, expect, it } from 'vitest';
import { Correlator } from '../../src/correlate/correlator.js';
import { counter, parseMessageBytes } from '../../src/parse/frame-parser.js';
import type { Direction, FrameContext } from '../../src/model/frame.js';
import type { Exchange } from '../../src/model/exchange.js';
import type { TapEvent } from '../../src/model/events.js';

/** Drives a correlator with JSON messages, as a tap would. */
function harness(opts = {}) {
  const c = new Correlator(opts);
  const seq = counter();
  const events: TapEvent[] = [];
  let t = 1_000_000;
  const send = (direction: Direction, msg: unknown, context?: FrameContext, conn = 'k') => {
    t += 1000;
    const origin = {
      connectionId: conn,
      direction,
      channel: context?.streamId ? ('sse' as const) : ('stdio' as const),
      timeUs: t,
      ...(context ? { context } : {}),
    };
    for (const f of parseMessageBytes(Buffer.from(JSON.stringify(msg)), origin, seq)) c.push(f, events);
  };
  const completed = () => events.filter((e) => e.type === 'exchange-completed').map((e) => (e as { exchange: Exchange }).exchange);
  const anomalies = () => events.filter((e) => e.type === 'anomaly').map((e) => (e as { kind: string }).kind);
  return { c, send, events, completed, anomalies, now: () => t };
}

const req = (id: unknown, method: string, params?: unknown) => ({ jsonrpc: '2.0', id, method, ...(params ? { params } : {}) });
const ok = (id: unknown, result: unknown = {}) => ({ jsonrpc: '2.0', id, result });

describe('Correlator', () => {
  it('pairs request and response by verbatim id: 1 and "1" are different exchanges', () => {
    const h = harness();
    h.send('c2s', req(1, 'ping'));
    h.send('c2s', req('1', 'tools/list'));
    h.send('s2c', ok('1', { tools: [] }));
    h.send('s2c', ok(1));
    const done = h.completed();
    expect(done.map((e) => [e.method, e.id, e.idType, e.outcome])).toEqual([
      ['tools/list', '1', 'string', 'ok'],
      ['ping', 1, 'number', 'ok'],
    ]);
    expect(done[0]!.latencyUs).toBe(1000);
  });

  it('keeps the three failure layers apart', () => {
    const h = harness();
    h.send('c2s', req(1, 'tools/call', { name: 'fail', arguments: {} }));
    h.send('s2c', ok(1, { content: [{ type: 'text', text: 'boom' }], isError: true }));
    h.send('c2s', req(2, 'nope/nope'));
    h.send('s2c', { jsonrpc: '2.0', id: 2, error: { code: -32601, message: 'Method not found' } });
    const [tool, rpc] = h.completed();
    expect([tool!.outcome, tool!.isError, tool!.target, tool!.errorMessage]).toEqual(['tool_error', true, 'fail', 'boom']);
    expect([rpc!.outcome, rpc!.errorCode, rpc!.isError]).toEqual(['jsonrpc_error', -32601, false]);
  });

  it('correlates server->client requests (sampling) in their own direction', () => {
    const h = harness();
    h.send('c2s', req(1, 'tools/call', { name: 'ask' }));
    h.send('s2c', req(1, 'sampling/createMessage', { messages: [] }));
    h.send('c2s', ok(1, { role: 'assistant' }));
    h.send('s2c', ok(1, { content: [] }));
    expect(h.completed().map((e) => [e.direction, e.method, e.outcome])).toEqual([
      ['s2c', 'sampling/createMessage', 'ok'],
      ['c2s', 'tools/call', 'ok'],
    ]);
  });

  it('links progress notifications through progressToken', () => {
    const h = harness();
    h.send('c2s', req(5, 'tools/call', { name: 'slow', _meta: { progressToken: 'tok' } }));
    h.send('s2c', { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'tok', progress: 1, total: 2 } });
    h.send('s2c', { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'tok', progress: 2, total: 2, message: 'done' } });
    h.send('s2c', { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'other', progress: 1 } });
    h.send('s2c', ok(5, { content: [] }));
    const [ex] = h.completed();
    expect(ex!.progress.map((p) => [p.progress, p.total, p.message])).toEqual([
      [1, 2, undefined],
      [2, 2, 'done'],
    ]);
    expect(h.events.filter((e) => e.type === 'exchange-progress')).toHaveLength(2);
    expect(h.anomalies()).toEqual(['unknown_progress_token']);
  });

  it('marks cancelled requests; a response inside the grace period is flagged', () => {
    const h = harness();
    h.send('c2s', req(9, 'tools/call', { name: 'slow' }));
    h.send('c2s', { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 9, reason: 'user' } });
    h.send('s2c', ok(9, { content: [] }));
    const [ex] = h.completed();
    expect([ex!.outcome, ex!.cancel?.by, ex!.cancel?.reason, ex!.responseAfterCancel]).toEqual(['cancelled', 'c2s', 'user', true]);
    expect(h.anomalies()).toEqual(['response_after_cancel']);
  });

  it('completes a cancelled request after the grace period; a later response is an orphan flagged as late', () => {
    const h = harness({ cancelGraceUs: 10_000 });
    h.send('c2s', req(9, 'tools/call', { name: 'slow' }));
    h.send('c2s', { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 9 } });
    h.c.tick(h.now() + 5_000, h.events);
    expect(h.completed()).toHaveLength(0);
    h.c.tick(h.now() + 10_000, h.events);
    expect(h.completed().map((e) => e.outcome)).toEqual(['cancelled']);
    h.send('s2c', ok(9));
    expect(h.anomalies()).toEqual(['response_after_cancel']);
    expect(h.events.filter((e) => e.type === 'exchange-orphaned')).toHaveLength(1);
  });

  it('turns unknown response ids into orphans and duplicate in-flight ids into anomalies', () => {
    const h = harness();
    h.send('s2c', ok(42));
    h.send('c2s', req(1, 'a'));
    h.send('c2s', req(1, 'b'));
    h.send('s2c', ok(1));
    expect(h.anomalies()).toEqual(['orphan_response', 'duplicate_id']);
    expect(h.completed().map((e) => [e.method, e.outcome, e.transport?.errorClass])).toEqual([
      ['a', 'unanswered', 'superseded_by_duplicate_id'],
      ['b', 'ok', undefined],
    ]);
  });

  it("a null-id error on a request's own stream (an HTTP error body) answers that request; elsewhere it stays an orphan", () => {
    const h = harness();
    h.send('c2s', req(10, 'tools/list'), { streamId: 'post-1' });
    h.send(
      's2c',
      { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Bad Request: Server not initialized' } },
      { streamId: 'post-1', httpStatus: 400 },
    );
    expect(h.completed().map((e) => [e.id, e.method, e.outcome, e.errorCode, e.transport?.httpStatus])).toEqual([
      [10, 'tools/list', 'jsonrpc_error', -32000, 400],
    ]);
    expect(h.anomalies()).toEqual([]);
    // On stdio (no stream) a null id names no request.
    h.send('c2s', req(11, 'ping'));
    h.send('s2c', { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
    expect(h.anomalies()).toEqual(['orphan_response']);
  });

  it('ends requests still open at close as unanswered', () => {
    const h = harness();
    h.send('c2s', req(1, 'tools/call', { name: 'x' }));
    h.c.close('k', h.now() + 1, 'child_exit', h.events);
    expect(h.completed().map((e) => [e.outcome, e.transport?.errorClass])).toEqual([['unanswered', 'child_exit']]);
  });

  it('learns the era: legacy from initialize, 2026-07-28 from _meta and server/discover', () => {
    const h = harness();
    h.send('c2s', req(0, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } }));
    h.send('s2c', ok(0, { protocolVersion: '2025-06-18', capabilities: {}, serverInfo: { name: 's', version: '1' } }));
    h.send('c2s', req(1, 'tools/list'));
    h.send('s2c', ok(1, { tools: [] }));
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
    h.send('c2s', req(1, 'server/discover', { _meta: meta }), undefined, 'm');
    h.send('s2c', ok(1, { resultType: 'complete', supportedVersions: ['2026-07-28'] }), undefined, 'm');
    const done = h.completed();
    expect(done.map((e) => [e.method, e.era, e.protocolVersion])).toEqual([
      ['initialize', 'legacy', '2025-06-18'],
      ['tools/list', 'legacy', '2025-06-18'],
      ['server/discover', 'modern', '2026-07-28'],
    ]);
  });

  it('takes the era from the MCP-Protocol-Version header on a connection that did not initialize', () => {
    // Over HTTP each TCP connection is a connection: the SDK's client initializes on one, calls on others.
    const h = harness();
    h.send('c2s', req(1, 'tools/list'), { headerProtocolVersion: '2025-11-25' }, 'tcp-2');
    h.send('s2c', ok(1, { tools: [] }), undefined, 'tcp-2');
    h.send('c2s', req(2, 'tools/list'), undefined, 'tcp-2'); // the connection is known legacy now
    h.send('s2c', ok(2, { tools: [] }), undefined, 'tcp-2');
    h.send('c2s', req(1, 'tools/list'), { headerProtocolVersion: '2026-07-28' }, 'tcp-3');
    h.send('s2c', ok(1, { tools: [] }), undefined, 'tcp-3');
    h.send('c2s', req(1, 'tools/list'), undefined, 'tcp-4'); // nothing says which era
    h.send('s2c', ok(1, { tools: [] }), undefined, 'tcp-4');
    h.send('c2s', req(1, 'tools/list'), { headerProtocolVersion: 'draft' }, 'tcp-5');
    h.send('s2c', ok(1, { tools: [] }), undefined, 'tcp-5');
    expect(h.completed().map((e) => [e.connectionId, e.era, e.protocolVersion])).toEqual([
      ['tcp-2', 'legacy', '2025-11-25'],
      ['tcp-2', 'legacy', undefined],
      ['tcp-3', 'modern', '2026-07-28'],
      ['tcp-4', 'unknown', undefined],
      ['tcp-5', 'unknown', 'draft'],
    ]);
  });

  it('attaches SSE events to the exchange of their stream and cancels on disconnect', () => {
    const h = harness();
    h.send('c2s', req(3, 'tools/call', { name: 'slow' }), { streamId: 's1' });
    h.send('s2c', { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x' } }, { streamId: 's1' });
    h.send('s2c', { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'y' } }, { streamId: 's1' });
    h.c.endStream('k', 's1', { timeUs: h.now() + 500, outcome: 'cancelled' }, h.events);
    const [ex] = h.completed();
    expect([ex!.outcome, ex!.cancel?.by, ex!.transport?.eventTimesUs?.length]).toEqual(['cancelled', 'disconnect', 2]);
  });

  it('a batch on one stream: its end completes every request still pending, and its events name no single exchange', () => {
    const h = harness();
    h.send('c2s', [req(1, 'tools/call', { name: 'a' }), req(2, 'tools/call', { name: 'b' })], { streamId: 'b1' });
    h.send('s2c', { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x' } }, { streamId: 'b1' });
    h.send('s2c', ok(1), { streamId: 'b1' });
    h.c.endStream('k', 'b1', { timeUs: h.now() + 500, outcome: 'transport_error', errorClass: 'stream_ended_without_response', httpStatus: 200 }, h.events);
    const done = h.completed();
    expect(done.map((e) => [e.id, e.outcome, e.transport?.errorClass, e.transport?.eventTimesUs])).toEqual([
      [1, 'ok', undefined, [expect.any(Number)]], // its response: an event of the stream; the notification names no exchange
      [2, 'transport_error', 'stream_ended_without_response', undefined],
    ]);
    const note = h.events.find((e) => e.type === 'frame' && e.frame.kind === 'message' && e.frame.messageKind === 'notification');
    expect(note && 'exchangeKey' in note ? note.exchangeKey : undefined).toBeUndefined();
    // Ended streams are forgotten: a second end changes nothing.
    h.c.endStream('k', 'b1', { timeUs: h.now() + 900, outcome: 'cancelled' }, h.events);
    expect(h.completed()).toHaveLength(2);
  });

  it('a stream of one request: its end completes it once, after which the stream is forgotten', () => {
    const h = harness();
    h.send('c2s', req(7, 'tools/call', { name: 'x' }), { streamId: 'one' });
    h.c.endStream('k', 'one', { timeUs: h.now() + 100, outcome: 'transport_error', errorClass: 'stream_ended_without_response' }, h.events);
    h.c.endStream('k', 'one', { timeUs: h.now() + 200, outcome: 'cancelled' }, h.events);
    expect(h.completed().map((e) => [e.id, e.outcome])).toEqual([[7, 'transport_error']]);
    // The same stream id later carries a new request: a new exchange, ended by the new stream end.
    h.send('c2s', req(8, 'ping'), { streamId: 'one' });
    h.c.endStream('k', 'one', { timeUs: h.now() + 100, outcome: 'cancelled' }, h.events);
    expect(h.completed().map((e) => [e.id, e.outcome, e.cancel?.by])).toEqual([
      [7, 'transport_error', undefined],
      [8, 'cancelled', 'disconnect'],
    ]);
  });

  it('links MRTR retries into one operation', () => {
    const h = harness();
    h.send('c2s', req(1, 'tools/call', { name: 'book' }));
    h.send('s2c', ok(1, { resultType: 'input_required', requestState: 'st-1', inputRequests: {} }));
    h.send('c2s', req(2, 'tools/call', { name: 'book', requestState: 'st-1', inputResponses: {} }));
    h.send('s2c', ok(2, { resultType: 'complete', content: [] }));
    const [first, second] = h.completed();
    expect(second!.operationKey).toBe(first!.key);
  });
});
