/**
 * What a replay sends and in which order, as pure data computed from the recording: one step per
 * recorded client-to-server exchange, each waiting for the steps whose responses were recorded
 * before its request (so exchanges that overlapped stay concurrent, and nothing starts before what
 * it may have depended on), grouped into replay sessions (one per recorded connection or session).
 */
import type { StoredExchange } from '../store/types.js';

export interface ReplayStep {
  index: number;
  exchange: StoredExchange;
  /** Steps this one waits for: the fewest whose completion implies every earlier-answered step's. */
  after: number[];
  /** When the request was sent, µs after the first replayed request. */
  offsetUs: number;
  /** Key of its {@link ReplaySessionPlan}. */
  session: string;
}

export interface ReplaySessionPlan {
  key: string;
  era: 'legacy' | 'modern';
  /** Version of the recorded session (legacy: negotiated; modern: the `_meta` one), when known. */
  protocolVersion?: string;
  /** Legacy: the recorded `initialize`, sent to open the session when it is not itself a step. */
  initialize?: StoredExchange;
}

export interface ReplayPlan {
  steps: ReplayStep[];
  sessions: ReplaySessionPlan[];
}

/**
 * `recorded`: the client-to-server exchanges of the chosen recordings (any order); `selected`: the
 * subset to replay (the filters). Orphan responses are never steps.
 */
export function planReplay(recorded: readonly StoredExchange[], selected: (ex: StoredExchange) => boolean = () => true): ReplayPlan {
  const requests = recorded.filter((e) => e.direction === 'c2s' && e.state !== 'orphaned' && e.method !== '');
  const time = backToBack(requests);
  requests.sort((a, b) => time(a).startUs - time(b).startUs || a.requestSeq - b.requestSeq || a.rowid - b.rowid);
  const sessions = planSessions(requests);
  const chosen = requests.filter(selected);
  const chosenSet = new Set(chosen);
  for (const s of sessions.values()) if (s.initialize && chosenSet.has(s.initialize)) delete s.initialize;
  const t0 = chosen.length > 0 ? time(chosen[0]!).startUs : 0;
  const after = dependencies(chosen.map(time));
  const steps = chosen.map((exchange, index) => ({
    index,
    exchange,
    after: after[index]!,
    offsetUs: time(exchange).startUs - t0,
    session: sessionKey(exchange),
  }));
  const used = new Set(steps.map((s) => s.session));
  return { steps, sessions: [...sessions.values()].filter((s) => used.has(s.key)) };
}

type Timed = Pick<StoredExchange, 'startUs' | 'endUs' | 'response'>;

/**
 * Several recordings replay one after the other (in the order they were taken), each keeping its
 * own gaps: a recording's times are shifted to start just after the previous one's last event.
 */
function backToBack(requests: readonly StoredExchange[]): (ex: StoredExchange) => Timed {
  const spans = new Map<number, { first: number; last: number }>();
  for (const e of requests) {
    const s = spans.get(e.recordingId) ?? { first: e.startUs, last: e.startUs };
    s.first = Math.min(s.first, e.startUs);
    s.last = Math.max(s.last, e.startUs, e.endUs ?? e.startUs);
    spans.set(e.recordingId, s);
  }
  if (spans.size < 2) return (ex) => ex;
  const shift = new Map<number, number>();
  let end: number | undefined;
  for (const [id, s] of [...spans].sort((a, b) => a[1].first - b[1].first)) {
    const delta = end === undefined ? 0 : end + 1 - s.first;
    shift.set(id, delta);
    end = s.last + delta;
  }
  return (ex) => {
    const d = shift.get(ex.recordingId)!;
    return { startUs: ex.startUs + d, ...(ex.endUs !== undefined ? { endUs: ex.endUs + d } : {}), response: ex.response };
  };
}

/** One replay session per recorded legacy session (or connection, for stdio); one per recording for the stateless modern era. */
export function sessionKey(ex: StoredExchange): string {
  if (ex.era === 'modern') return `${ex.recordingId}/modern`;
  return `${ex.recordingId}/${ex.sessionId !== undefined ? `session ${ex.sessionId}` : `connection ${ex.connectionId}`}`;
}

function planSessions(requests: readonly StoredExchange[]): Map<string, ReplaySessionPlan> {
  const out = new Map<string, ReplaySessionPlan>();
  for (const ex of requests) {
    const key = sessionKey(ex);
    let s = out.get(key);
    if (!s) {
      s = { key, era: ex.era === 'modern' ? 'modern' : 'legacy' };
      if (ex.protocolVersion !== undefined) s.protocolVersion = ex.protocolVersion;
      out.set(key, s);
    }
    if (ex.method === 'initialize' && s.initialize === undefined) s.initialize = ex;
  }
  return out;
}

/**
 * For each exchange (sorted by start), the earlier exchanges answered before it started, reduced:
 * the one among them that started last (k) waits for every other answered before k started, so
 * only k and those answered after k started are kept. O(n log n) plus the size of the answer.
 */
export function dependencies(byStartOrder: readonly Timed[]): number[][] {
  const answered = byStartOrder
    .map((e, i) => ({ i, end: e.response !== undefined ? e.endUs : undefined, start: e.startUs }))
    .filter((x): x is { i: number; end: number; start: number } => x.end !== undefined)
    .sort((a, b) => a.end - b.end || a.i - b.i);
  // Among the first k answered: the one that started last (the later one in start order on a tie).
  const latest: number[] = [];
  for (let k = 0; k < answered.length; k++) {
    const prev = k > 0 ? latest[k - 1]! : k;
    latest.push(answered[k]!.i >= answered[prev]!.i ? k : prev);
  }
  return byStartOrder.map((e, j) => {
    let n = upperBound(answered, e.startUs);
    // Only earlier steps: zero-latency exchanges at the very same microsecond sort last; drop the later ones.
    while (n > 0 && answered[n - 1]!.i >= j) n--;
    if (n === 0) return [];
    const k = answered[latest[n - 1]!]!;
    const out = [k.i];
    for (let m = n - 1; m >= 0 && answered[m]!.end > k.start; m--) if (answered[m]!.i !== k.i) out.push(answered[m]!.i);
    return out.sort((a, b) => a - b);
  });
}

/** How many of the end-sorted exchanges were answered at or before `t`. */
function upperBound(answered: readonly { end: number }[], t: number): number {
  let lo = 0;
  let hi = answered.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (answered[mid]!.end <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
