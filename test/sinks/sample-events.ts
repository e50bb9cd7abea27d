/**
 * A small TapEvent stream with every event kind and most optional fields, built the way the
 * pipeline builds it: frames come from the real frame parser over real JSON-RPC bytes. The
 * exchanges are hand-assembled (standing in for the correlator) so each field is known.
 */
import type { ConnectionClosed, ConnectionOpened, TapEvent } from '../../src/model/events.js';
import type { Exchange } from '../../src/model/exchange.js';
import type { Frame, FrameContext, MessageFrame } from '../../src/model/frame.js';
import type { JsonRpcMessage } from '../../src/model/jsonrpc.js';
import { counter, parseMessageBytes, type FrameOrigin } from '../../src/parse/frame-parser.js';

export const T0 = 1_767_225_600_000_000; // 2026-01-01T00:00:00Z in µs
const CONN = 'conn-1';

export class EventScript {
  readonly events: TapEvent[] = [];
  private readonly seq: ReturnType<typeof counter>;
  private exchangeSeq: number;

  /** Start numbers let a second script continue a first one without reusing seqs or keys. */
  constructor(start: { seq?: number; exchange?: number } = {}) {
    this.seq = counter(start.seq ?? 1);
    this.exchangeSeq = start.exchange ?? 0;
  }

  frames(json: string, dir: 'c2s' | 's2c', atMs: number, extra: Partial<FrameOrigin> = {}): Frame[] {
    const origin: FrameOrigin = { connectionId: CONN, direction: dir, channel: 'stdio', timeUs: T0 + atMs * 1000, ...extra };
    return parseMessageBytes(Buffer.from(json), origin, this.seq);
  }

  frame(json: string, dir: 'c2s' | 's2c', atMs: number, exchangeKey?: string, context?: FrameContext): Frame {
    const f = this.frames(json, dir, atMs, context ? { context, channel: 'sse' } : {})[0]!;
    this.events.push(exchangeKey ? { type: 'frame', frame: f, exchangeKey } : { type: 'frame', frame: f });
    return f;
  }

  /** Emits exchange-started + the request frame; returns the started snapshot (a fresh object). */
  request(json: string, atMs: number, extra: Partial<Exchange> = {}, dir: 'c2s' | 's2c' = 'c2s'): Exchange {
    const key = `${CONN}/${dir}/${++this.exchangeSeq}`;
    const f = this.frames(json, dir, atMs)[0] as MessageFrame;
    const msg = f.message as { id: string | number; method: string };
    const ex: Exchange = {
      key,
      connectionId: CONN,
      direction: dir,
      id: msg.id,
      idType: typeof msg.id === 'string' ? 'string' : 'number',
      method: msg.method,
      era: 'legacy',
      request: f.message,
      startUs: f.timeUs,
      outcome: 'unanswered',
      isError: false,
      progress: [],
      responseAfterCancel: false,
      requestSeq: f.seq,
      ...extra,
    };
    this.events.push({ type: 'exchange-started', exchange: ex }, { type: 'frame', frame: f, exchangeKey: key });
    return { ...ex, progress: [] };
  }

  /** Emits the response frame + exchange-completed built from `started` plus `patch`. */
  respond(started: Exchange, json: string, atMs: number, patch: Partial<Exchange>): Exchange {
    const f = this.frame(json, started.direction === 'c2s' ? 's2c' : 'c2s', atMs, started.key) as MessageFrame;
    const done: Exchange = {
      ...started,
      response: f.message as JsonRpcMessage,
      responseSeq: f.seq,
      endUs: f.timeUs,
      latencyUs: f.timeUs - started.startUs,
      ...patch,
    };
    this.events.push({ type: 'exchange-completed', exchange: done });
    return done;
  }
}

export function connectionOpened(atMs = 0): ConnectionOpened {
  return {
    type: 'connection-opened',
    timeUs: T0 + atMs * 1000,
    connection: { connectionId: CONN, transport: 'stdio', target: 'node server.mjs --port 1', pid: 4242 },
  };
}

export function connectionClosed(atMs: number): ConnectionClosed {
  return { type: 'connection-closed', timeUs: T0 + atMs * 1000, connectionId: CONN, reason: 'child exited', exitCode: 0, signal: null };
}

/** Every TapEvent kind; exchanges with number id 1 and string id "1" both present. */
export function sampleEvents(): TapEvent[] {
  const s = new EventScript();
  s.events.push(connectionOpened(0));
  const init = s.request(
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}',
    1,
    { protocolVersion: '2025-11-25' },
  );
  s.respond(init, '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}', 3, {
    outcome: 'ok',
  });
  s.frame('{"jsonrpc":"2.0","method":"notifications/initialized"}', 'c2s', 4);

  const call = s.request('{"jsonrpc":"2.0","id":"1","method":"tools/call","params":{"name":"progress","arguments":{},"_meta":{"progressToken":"p1"}}}', 10, {
    target: 'progress',
  });
  s.frame('{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p1","progress":1,"total":2,"message":"half"}}', 's2c', 15, call.key);
  const point = { timeUs: T0 + 15_000, progress: 1, total: 2, message: 'half' };
  s.events.push({ type: 'exchange-progress', exchangeKey: call.key, progress: point });
  s.respond(call, '{"jsonrpc":"2.0","id":"1","result":{"content":[{"type":"text","text":"boom"}],"isError":true}}', 30, {
    outcome: 'tool_error',
    isError: true,
    progress: [point],
  });

  const slow = s.request('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"delay","arguments":{"ms":1000}}}', 40, { target: 'delay' });
  s.frame('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"user"}}', 'c2s', 45, slow.key);
  s.respond(slow, '{"jsonrpc":"2.0","id":2,"error":{"code":-32800,"message":"cancelled"}}', 50, {
    outcome: 'cancelled',
    errorCode: -32800,
    errorMessage: 'cancelled',
    cancel: { timeUs: T0 + 45_000, by: 'c2s', reason: 'user' },
    responseAfterCancel: true,
  });
  s.events.push({
    type: 'anomaly',
    kind: 'response_after_cancel',
    connectionId: CONN,
    direction: 's2c',
    timeUs: T0 + 50_000,
    detail: 'late',
    frameSeq: 9,
    exchangeKey: slow.key,
  });

  const sampling = s.request('{"jsonrpc":"2.0","id":0,"method":"sampling/createMessage","params":{}}', 55, {}, 's2c');
  s.respond(sampling, '{"jsonrpc":"2.0","id":0,"error":{"code":-32601,"message":"Method not found"}}', 56, {
    outcome: 'jsonrpc_error',
    errorCode: -32601,
    errorMessage: 'Method not found',
  });

  const http = s.request('{"jsonrpc":"2.0","id":"abc","method":"resources/read","params":{"uri":"file:///x"}}', 60, {
    target: 'file:///x',
    sessionId: 'sess-1',
    operationKey: 'conn-1/c2s/1',
  });
  const ctx: FrameContext = { streamId: 'st-1', httpStatus: 200, sessionId: 'sess-1', sseEventId: 'ev-7', sseEventName: 'message' };
  s.frame('{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}', 's2c', 62, http.key, ctx);
  s.events.push({
    type: 'exchange-completed',
    exchange: {
      ...http,
      endUs: T0 + 70_000,
      outcome: 'transport_error',
      transport: { httpStatus: 502, errorClass: 'upstream_reset', firstEventUs: T0 + 62_000, eventTimesUs: [T0 + 62_000], streamEndUs: T0 + 70_000 },
    },
  });

  const orphan = s.frame('{"jsonrpc":"2.0","id":99,"result":{}}', 's2c', 80, 'conn-1/c2s/orphan');
  s.events.push({
    type: 'exchange-orphaned',
    exchange: {
      key: 'conn-1/c2s/orphan',
      connectionId: CONN,
      direction: 'c2s',
      id: 99,
      idType: 'number',
      method: '',
      era: 'legacy',
      request: (orphan as MessageFrame).message,
      response: (orphan as MessageFrame).message,
      startUs: orphan.timeUs,
      outcome: 'orphan_response',
      isError: false,
      progress: [],
      responseAfterCancel: false,
      requestSeq: orphan.seq,
      responseSeq: orphan.seq,
    },
  });
  s.events.push({
    type: 'anomaly',
    kind: 'orphan_response',
    connectionId: CONN,
    direction: 's2c',
    timeUs: orphan.timeUs,
    detail: 'response id 99 matches no request in flight',
    frameSeq: orphan.seq,
  });

  s.frame('this is not json {', 's2c', 90);
  s.events.push({ type: 'anomaly', kind: 'stdout_pollution', connectionId: CONN, timeUs: T0 + 90_000, detail: 'non-JSON on stdout' });
  const logText = 'server log line: listening';
  s.events.push({
    type: 'frame',
    frame: { seq: 1000, connectionId: CONN, direction: 's2c', channel: 'stderr', timeUs: T0 + 91_000, raw: Buffer.from(logText), kind: 'log', text: logText },
  });
  for (const f of s.frames('[{"jsonrpc":"2.0","id":7,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"}]', 'c2s', 95))
    s.events.push({ type: 'frame', frame: f });

  s.request('{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"delay"}}', 99, { target: 'delay' });
  s.events.push(connectionClosed(100));
  return s.events;
}

/** Events a sink must survive without throwing: malformed, empty, huge, unknown, null. */
export function oddEvents(): unknown[] {
  const base = sampleEvents();
  const frame = base.find((e) => e.type === 'frame')!;
  return [
    null,
    undefined,
    {},
    { type: 'no-such-event' },
    { type: 'frame' },
    { type: 'frame', frame: { ...(frame as { frame: Frame }).frame, raw: Buffer.alloc(0) } },
    { type: 'frame', frame: { ...(frame as { frame: Frame }).frame, timeUs: Number.NaN, seq: -1 } },
    { type: 'frame', frame: { ...(frame as { frame: Frame }).frame, raw: Buffer.alloc(2 * 2 ** 20, 0x61) } },
    { type: 'exchange-started' },
    { type: 'exchange-completed', exchange: { key: 'k', id: null, progress: null } },
    { type: 'exchange-progress', exchangeKey: 'nope' },
    { type: 'anomaly', kind: 'protocol_violation', connectionId: '', timeUs: 0, detail: '' },
    { type: 'connection-closed', connectionId: 'never-opened', timeUs: 1, reason: '', exitCode: null, signal: null },
    {
      type: 'connection-opened',
      timeUs: 0,
      connection: { connectionId: 'c', transport: 'http', target: 'http://127.0.0.1:1/mcp', peer: { address: '127.0.0.1', port: 1 } },
    },
  ];
}
