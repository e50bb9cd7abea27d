/**
 * The mock's answers, independent of transport: a request in, a plan out (the notifications and
 * the response to send, each with its delay after the request). Recorded answers go out under the
 * caller's id, and recorded progress notifications under the caller's progress token (none are sent
 * to a caller that asked for no progress). `initialize` and `server/discover` are answered with the
 * recording's first handshake whatever the client sent, but for `initialize`'s `protocolVersion`:
 * the client's when mcptap knows it and it is not newer than the recorded one; a request the recording does not hold gets
 * a JSON-RPC error naming its key and the nearest recorded one.
 */
import type { JsonRpcId, JsonRpcMessage, JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from '../model/jsonrpc.js';
import { isRecord } from '../model/jsonrpc.js';
import { negotiatedVersion } from '../protocol/mcp.js';
import { describeMiss, MockMatcher, requestKey, type Nearest } from '../replay/mock-matcher.js';
import { NO_RULES, type MatchRules } from '../replay/rules.js';
import { HANDSHAKES, type AnswerIndex, type RecordedAnswer, type RecordedAnswers, type RecordedMessage, type UnansweredRequest } from './recorded-answers.js';
import { counted } from '../util/plural.js';

/** The JSON-RPC error a miss gets: in the implementation-defined server error range (-32000 … -32099). */
export const MOCK_MISS_CODE = -32088;
/** The JSON-RPC error for a request the recording holds but that was never answered (cancelled or left open). */
export const MOCK_UNANSWERED_CODE = -32087;

/** `fast`: everything at once; `recorded`: the recorded gaps between request, notifications and response. */
export type Pace = 'fast' | 'recorded';
export const PACES: readonly Pace[] = ['fast', 'recorded'];

/** A recorded request that got no response: `error` answers -32087; `hold` keeps it open (recorded progress only) until cancelled. */
export type Unanswered = 'error' | 'hold';
export const UNANSWERED: readonly Unanswered[] = ['error', 'hold'];

export interface PlannedMessage {
  /** Milliseconds after the request arrived. */
  afterMs: number;
  message: JsonRpcMessage;
}

export interface Plan {
  /** `hit`: from the recording; `miss`: not in it; `builtin`: a `ping` the recording never saw. */
  outcome: 'hit' | 'miss' | 'builtin';
  key: string;
  /** Notifications first, the response last; delays never decrease. */
  messages: PlannedMessage[];
  /** The recorded response came as an SSE event (HTTP front ends answer with a stream). */
  overSse: boolean;
  /** Keep the request open after the messages until the caller cancels (`--unanswered hold`). */
  hold?: boolean;
  /** The recorded exchange answered (`show --exchange KEY`). */
  exchangeKey?: string;
  nearest?: Nearest;
}

export interface MockStats {
  hits: number;
  misses: number;
  /** Misses forwarded to the upstream (`--on-miss passthrough`); counted among the misses too. */
  passedThrough: number;
}

export interface MockResponderOptions {
  rules?: MatchRules;
  pace?: Pace;
  unanswered?: Unanswered;
  /** What the tap's redaction does to a request's params, applied before matching: the caller's secrets match their tokens and never reach a miss message. */
  redactParams?: (params: unknown) => unknown;
}

export class MockResponder {
  readonly stats: MockStats = { hits: 0, misses: 0, passedThrough: 0 };
  private readonly matcher: MockMatcher<RecordedAnswer>;
  private readonly handshakes = new Map<string, RecordedAnswer>();
  /** Key -> the first recorded request of that key that got no response. */
  private readonly unanswered = new Map<string, UnansweredRequest>();
  private readonly pace: Pace;
  private readonly onUnanswered: Unanswered;
  private readonly redactParams: (params: unknown) => unknown;

  /** `recorded`: answers in memory, or an index over a recording read on demand (built with the same rules). */
  constructor(recorded: RecordedAnswers | AnswerIndex, opts: MockResponderOptions = {}) {
    this.pace = opts.pace ?? 'fast';
    this.onUnanswered = opts.unanswered ?? 'error';
    this.redactParams = opts.redactParams ?? ((p) => p);
    for (const u of recorded.unansweredRequests ?? []) {
      const key = requestKey(opts.rules ?? NO_RULES, u.method, u.params);
      if (!this.unanswered.has(key)) this.unanswered.set(key, u);
    }
    if ('source' in recorded) {
      for (const [method, a] of recorded.handshakes) this.handshakes.set(method, a);
      this.matcher = new MockMatcher(recorded.source, opts.rules ?? NO_RULES);
      return;
    }
    const keyed: RecordedAnswer[] = [];
    for (const a of recorded.answers) {
      if (!HANDSHAKES.has(a.method)) keyed.push(a);
      else if (!this.handshakes.has(a.method)) this.handshakes.set(a.method, a);
    }
    this.matcher = new MockMatcher(
      keyed.map((a) => ({ method: a.method, params: a.params, answer: a })),
      opts.rules ?? NO_RULES,
    );
  }

  answer(request: JsonRpcRequest): Plan {
    const handshake = this.handshakes.get(request.method);
    if (handshake) return this.hit(request, request.method === 'initialize' ? negotiated(handshake, request) : handshake, request.method);
    const m = this.matcher.match(request.method, this.redactParams(request.params));
    if (m.hit) return this.hit(request, m.answer, m.key);
    if (request.method === 'ping')
      return { outcome: 'builtin', key: m.key, messages: [{ afterMs: 0, message: respond(request.id, { result: {} }) }], overSse: false };
    const u = this.unanswered.get(m.key);
    if (u && this.onUnanswered === 'hold') return this.held(request, u, m.key);
    this.stats.misses++;
    if (u) {
      const why = u.cancelled ? 'the client cancelled it' : 'it was still unanswered when the recording ended';
      const error = {
        code: MOCK_UNANSWERED_CODE,
        message: `mcptap mock: the recording holds ${m.key} but it was never answered (${why})`,
        data: { key: m.key, exchange: u.exchangeKey, cancelled: u.cancelled },
      };
      return { outcome: 'miss', key: m.key, messages: [{ afterMs: 0, message: respond(request.id, { error }) }], overSse: false, exchangeKey: u.exchangeKey };
    }
    const error = { code: MOCK_MISS_CODE, message: `mcptap mock: ${describeMiss(m)}`, data: { key: m.key, ...(m.nearest ? { nearest: m.nearest } : {}) } };
    return {
      outcome: 'miss',
      key: m.key,
      messages: [{ afterMs: 0, message: respond(request.id, { error }) }],
      overSse: false,
      ...(m.nearest ? { nearest: m.nearest } : {}),
    };
  }

  private hit(request: JsonRpcRequest, a: RecordedAnswer, key: string): Plan {
    this.stats.hits++;
    const messages = this.notificationsFor(request, a.notifications);
    const { jsonrpc: _j, id: _i, ...answer } = a.response.message;
    messages.push({ afterMs: this.delay(a.response.afterUs), message: respond(request.id, answer) });
    // Frames are stored in arrival order, so times are already ordered; keep the invariant anyway.
    for (let i = 1; i < messages.length; i++) messages[i]!.afterMs = Math.max(messages[i]!.afterMs, messages[i - 1]!.afterMs);
    return { outcome: 'hit', key, messages, overSse: a.overSse || messages.length > 1, exchangeKey: a.exchangeKey };
  }

  /** A recorded request that got no response, held open: its recorded notifications, then nothing until the caller cancels. */
  private held(request: JsonRpcRequest, u: UnansweredRequest, key: string): Plan {
    this.stats.hits++;
    return { outcome: 'hit', key, messages: this.notificationsFor(request, u.notifications), overSse: true, hold: true, exchangeKey: u.exchangeKey };
  }

  private delay(us: number): number {
    return this.pace === 'recorded' ? us / 1000 : 0;
  }

  /** Recorded notifications under the caller's progress token (progress dropped when it asked for none). */
  private notificationsFor(request: JsonRpcRequest, recorded: readonly RecordedMessage<JsonRpcNotification>[]): PlannedMessage[] {
    const token = progressTokenOf(request.params);
    const messages: PlannedMessage[] = [];
    for (const n of recorded) {
      const isProgress = n.message.method === 'notifications/progress';
      if (isProgress && token === undefined) continue;
      const message = isProgress ? { ...n.message, params: { ...(n.message.params as Record<string, unknown>), progressToken: token } } : n.message;
      messages.push({ afterMs: this.delay(n.afterUs), message });
    }
    return messages;
  }
}

/** The recorded `initialize` answer with the version negotiated for this client's request. */
function negotiated(a: RecordedAnswer, request: JsonRpcRequest): RecordedAnswer {
  const result = (a.response.message as { result?: unknown }).result;
  if (!isRecord(result) || typeof result.protocolVersion !== 'string') return a;
  const requested = isRecord(request.params) ? request.params.protocolVersion : undefined;
  const version = negotiatedVersion(requested, result.protocolVersion);
  if (version === result.protocolVersion) return a;
  const message = { ...a.response.message, result: { ...result, protocolVersion: version } } as JsonRpcResponse;
  return { ...a, response: { ...a.response, message } };
}

function respond(id: JsonRpcId, answer: Omit<JsonRpcResponse, 'jsonrpc' | 'id'>): JsonRpcResponse {
  return { jsonrpc: '2.0', id, ...answer };
}

function progressTokenOf(params: unknown): string | number | undefined {
  const meta = isRecord(params) ? params._meta : undefined;
  const token = isRecord(meta) ? meta.progressToken : undefined;
  return typeof token === 'string' || typeof token === 'number' ? token : undefined;
}

/** The exit line: how many requests the recording answered and how many it did not. */
export function describeStats(s: MockStats): string {
  const through = s.passedThrough > 0 ? ` (${s.passedThrough} passed through to the upstream)` : '';
  return `${counted(s.hits, 'request')} answered from the recording, ${s.misses} missed${through}`;
}
