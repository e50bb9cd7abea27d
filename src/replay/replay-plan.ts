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
export function planReplay(recorded: Iterable<StoredExchange>, selected: (ex: StoredExchange) => boolean = () => true): ReplayPlan {
  const builder = new ReplayPlanBuilder(selected);
  for (const ex of recorded) builder.add(ex);
  return builder.build();
}

type Timed = Pick<StoredExchange, 'startUs' | 'endUs' | 'response'>;
type Ordered = Pick<StoredExchange, 'startUs' | 'requestSeq' | 'rowid'>;

/** Replay order: recorded start, then request frame, then row. */
const byStart = (a: Ordered, b: Ordered): number => a.startUs - b.startUs || a.requestSeq - b.requestSeq || a.rowid - b.rowid;

/**
 * {@link planReplay} fed one exchange at a time (a recording streamed from the store): it keeps only
 * the selected requests, each session's first request and `initialize`, and each recording's span,
 * so its memory follows what is replayed, not the size of the recording.
 */
export class ReplayPlanBuilder {
  private readonly chosen: StoredExchange[] = [];
  private readonly spans = new Map<number, { first: number; last: number }>();
  private readonly sessions = new Map<string, { plan: ReplaySessionPlan; first: StoredExchange }>();

  constructor(private readonly selected: (ex: StoredExchange) => boolean = () => true) {}

  add(e: StoredExchange): void {
    if (e.direction !== 'c2s' || e.state === 'orphaned' || e.method === '') return;
    const span = this.spans.get(e.recordingId) ?? { first: e.startUs, last: e.startUs };
    span.first = Math.min(span.first, e.startUs);
    span.last = Math.max(span.last, e.startUs, e.endUs ?? e.startUs);
    this.spans.set(e.recordingId, span);
    this.addToSession(e);
    if (this.selected(e)) this.chosen.push(e);
  }

  build(): ReplayPlan {
    const time = backToBack(this.spans);
    const shifted = (e: StoredExchange): Ordered => ({ startUs: time(e).startUs, requestSeq: e.requestSeq, rowid: e.rowid });
    const chosen = this.chosen.sort((a, b) => byStart(shifted(a), shifted(b)));
    const chosenSet = new Set(chosen);
    const sessions = [...this.sessions.values()].sort((a, b) => byStart(shifted(a.first), shifted(b.first))).map((s) => s.plan);
    for (const s of sessions) if (s.initialize && chosenSet.has(s.initialize)) delete s.initialize;
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
    return { steps, sessions: sessions.filter((s) => used.has(s.key)) };
  }

  /** A session takes its version from its first request, and opens with its first `initialize`. */
  private addToSession(ex: StoredExchange): void {
    const key = sessionKey(ex);
    let s = this.sessions.get(key);
    if (!s) this.sessions.set(key, (s = { plan: { key, era: ex.era === 'modern' ? 'modern' : 'legacy' }, first: ex }));
    else if (byStart(ex, s.first) < 0) s.first = ex;
    if (s.first === ex) {
      if (ex.protocolVersion !== undefined) s.plan.protocolVersion = ex.protocolVersion;
      else delete s.plan.protocolVersion;
    }
    if (ex.method === 'initialize' && (s.plan.initialize === undefined || byStart(ex, s.plan.initialize) < 0)) s.plan.initialize = ex;
  }
}

/**
 * Several recordings replay one after the other (in the order they were taken), each keeping its
 * own gaps: a recording's times are shifted to start just after the previous one's last event.
 */
function backToBack(spans: ReadonlyMap<number, { first: number; last: number }>): (ex: StoredExchange) => Timed {
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
