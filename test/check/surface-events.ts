// Test helpers: TapEvents of answered list requests, and running a checker over events.
import type { Checker, CheckerFactory, RuleSettings } from '../../src/check/checker.js';
import type { Finding } from '../../src/check/finding.js';
import type { TapEvent } from '../../src/model/events.js';

let seq = 0;

/** The exchange-completed event of a list request answered with `result`. */
export function listEvent(method: string, result: unknown, opts: { connectionId?: string; cursor?: string } = {}): TapEvent {
  const n = ++seq;
  const connectionId = opts.connectionId ?? 'c1';
  const params = opts.cursor !== undefined ? { cursor: opts.cursor } : {};
  return {
    type: 'exchange-completed',
    exchange: {
      key: `${connectionId}/c2s/${n}`,
      connectionId,
      direction: 'c2s',
      id: n,
      idType: 'number',
      method,
      era: 'legacy',
      request: { jsonrpc: '2.0', id: n, method, params },
      response: { jsonrpc: '2.0', id: n, result },
      startUs: n * 1000,
      endUs: n * 1000 + 10,
      outcome: 'ok',
      isError: false,
      progress: [],
      responseAfterCancel: false,
      requestSeq: n * 2,
      responseSeq: n * 2 + 1,
    },
  } as TapEvent;
}

export const toolsEvent = (tools: unknown[], opts: { connectionId?: string; cursor?: string; nextCursor?: string } = {}) =>
  listEvent('tools/list', { tools, ...(opts.nextCursor !== undefined ? { nextCursor: opts.nextCursor } : {}) }, opts);

/** Every finding a fresh checker emits over `events`, finish included. */
export function runChecker(factory: CheckerFactory, events: Iterable<TapEvent>, settings: RuleSettings = new Map()): Finding[] {
  const checker: Checker = factory(settings);
  const out: Finding[] = [];
  for (const e of events) checker.onEvent(e, (f) => out.push(f));
  checker.finish((f) => out.push(f));
  return out;
}
