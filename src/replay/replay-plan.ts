/**
 * What a replay sends and in which order, as pure data computed from the recording: one step per
 * recorded client-to-server exchange, each waiting for the steps whose responses were recorded
 * before its request (so exchanges that overlapped stay concurrent, and nothing starts before what
 * it may have depended on), grouped into replay sessions (one per recorded connection or session).
 * The plan is columns of numbers (row id, offset, session, dependencies), not exchanges: a plan of
 * a million steps takes tens of MB; the replayer reads each exchange from the store when it sends it.
 */
import type { NotificationHead, StoredExchange } from '../store/types.js';
import { f64, u32 } from './plan-columns.js';
import { NoteColumns, type PlanNotes } from './plan-notes.js';

export type { PlanNotes } from './plan-notes.js';

/** What the plan reads of an exchange: its plain columns (`answered`, or a `response`, says whether it was answered). */
export type PlanExchange = Pick<
  StoredExchange,
  'rowid' | 'recordingId' | 'direction' | 'state' | 'method' | 'era' | 'protocolVersion' | 'sessionId' | 'connectionId' | 'startUs' | 'endUs' | 'requestSeq'
> & { answered?: boolean; response?: unknown };

export interface ReplayStep<E extends PlanExchange = StoredExchange> {
  index: number;
  exchange: E;
  /** Steps this one waits for: the fewest whose completion implies every earlier-answered step's. */
  after: number[];
  /** When the request was sent, µs after the first replayed request. */
  offsetUs: number;
  /** Key of its {@link ReplaySessionPlan}. */
  session: string;
}

export interface ReplaySessionPlan<E extends PlanExchange = StoredExchange> {
  key: string;
  era: 'legacy' | 'modern';
  /** Version of the recorded session (legacy: negotiated; modern: the `_meta` one), when known. */
  protocolVersion?: string;
  /** Legacy: the recorded `initialize`, sent to open the session when it is not itself a step. */
  initialize?: E;
}

/** The plan as columns: step `i` replays the exchange of row `rowids[i]`. */
export interface ReplayPlan<E extends PlanExchange = StoredExchange> {
  size: number;
  rowids: Float64Array;
  /** µs after the first replayed request. */
  offsetsUs: Float64Array;
  /** Index into `sessions`. */
  sessionOf: Uint32Array;
  /** Step i waits for `afterList[afterStart[i] .. afterStart[i + 1]]`. */
  afterStart: Uint32Array;
  afterList: Uint32Array;
  sessions: ReplaySessionPlan<E>[];
  /** Keys of the sessions that have an `initialize` among their steps. */
  initializeIsStep: ReadonlySet<string>;
  /** The client's other notifications, sent in their session at their recorded place. */
  notes?: PlanNotes;
}

function concat(a: Float64Array, b: Float64Array): Float64Array {
  const out = new Float64Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** The steps step `i` waits for. */
export function stepAfter(plan: Pick<ReplayPlan<PlanExchange>, 'afterStart' | 'afterList'>, i: number): Uint32Array {
  return plan.afterList.subarray(plan.afterStart[i]!, plan.afterStart[i + 1]!);
}

/**
 * `recorded`: the client-to-server exchanges of the chosen recordings (any order); `selected`: the
 * subset to replay (the filters). Orphan responses are never steps. The plan with its steps as
 * objects (small plans, tests).
 */
export function planReplay<E extends PlanExchange>(
  recorded: Iterable<E>,
  selected: (ex: E) => boolean = () => true,
): ReplayPlan<E> & { steps: ReplayStep<E>[] } {
  const builder = new ReplayPlanBuilder<E>(selected, { keepExchanges: true });
  for (const ex of recorded) builder.add(ex);
  const plan = builder.build();
  const chosen = builder.chosenInOrder();
  const steps = chosen.map((exchange, index) => ({
    index,
    exchange,
    after: [...stepAfter(plan, index)],
    offsetUs: plan.offsetsUs[index]!,
    session: plan.sessions[plan.sessionOf[index]!]!.key,
  }));
  return { ...plan, steps };
}

const answeredOf = (e: PlanExchange): boolean => (e.answered ?? e.response !== undefined) && e.endUs !== undefined;

type Ordered = Pick<PlanExchange, 'startUs' | 'requestSeq' | 'rowid'>;

/** Replay order: recorded start, then request frame, then row. */
const byStart = (a: Ordered, b: Ordered): number => a.startUs - b.startUs || a.requestSeq - b.requestSeq || a.rowid - b.rowid;

/**
 * {@link planReplay} fed one exchange at a time (a recording streamed from the store): it keeps the
 * selected requests as a few numbers each, each session's first request and `initialize`, and each
 * recording's span, so its memory is tens of bytes per replayed exchange.
 */
export class ReplayPlanBuilder<E extends PlanExchange = StoredExchange> {
  private readonly start = f64();
  private readonly end = f64();
  private readonly seq = f64();
  private readonly rowid = f64();
  private readonly recording = u32();
  private readonly session = u32();
  private readonly chosen: E[] | undefined;
  private readonly chosenInitializes = new Set<E>();
  private readonly initializeIsStep = new Set<string>();
  private readonly spans = new Map<number, { first: number; last: number }>();
  private readonly sessions = new Map<string, { index: number; plan: ReplaySessionPlan<E>; first: E }>();
  private readonly notes = new NoteColumns();
  private order: Uint32Array | undefined;

  constructor(
    private readonly selected: (ex: E) => boolean = () => true,
    opts: { keepExchanges?: boolean } = {},
  ) {
    if (opts.keepExchanges) this.chosen = [];
  }

  add(e: E): void {
    if (e.direction !== 'c2s' || e.state === 'orphaned' || e.method === '') return;
    const span = this.spans.get(e.recordingId) ?? { first: e.startUs, last: e.startUs };
    span.first = Math.min(span.first, e.startUs);
    span.last = Math.max(span.last, e.startUs, e.endUs ?? e.startUs);
    this.spans.set(e.recordingId, span);
    const session = this.addToSession(e);
    if (!this.selected(e)) return;
    this.start.push(e.startUs);
    this.end.push(answeredOf(e) ? e.endUs! : NaN);
    this.seq.push(e.requestSeq);
    this.rowid.push(e.rowid);
    this.recording.push(e.recordingId);
    this.session.push(session.index);
    this.chosen?.push(e);
    if (e.method === 'initialize') {
      this.initializeIsStep.add(session.plan.key);
      this.chosenInitializes.add(e);
    }
  }

  /** A client notification: replayed in its session (only one with steps), wherever the filters select. */
  addNotification(n: NotificationHead): void {
    const span = this.spans.get(n.recordingId) ?? { first: n.timeUs, last: n.timeUs };
    span.last = Math.max(span.last, n.timeUs);
    this.spans.set(n.recordingId, span);
    const key = sessionKey({
      era: 'legacy',
      recordingId: n.recordingId,
      connectionId: n.connectionId,
      ...(n.sessionId !== undefined ? { sessionId: n.sessionId } : {}),
    });
    this.notes.add(key, n);
  }

  build(): ReplayPlan<E> {
    const n = this.start.length;
    const shift = backToBack(this.spans);
    const rec = this.recording.view();
    // The columns are worked on in place (build is called once): a store reads rows in start order,
    // so the usual plan needs neither a shifted nor a sorted copy.
    let start = this.start.view();
    let end = this.end.view();
    if (this.spans.size > 1) for (let i = 0; i < n; i++) ((start[i]! += shift(rec[i]!)), (end[i]! += shift(rec[i]!)));
    const seq = this.seq.view();
    let seqs = seq;
    let rowids = this.rowid.view();
    let sessionOf = this.session.view();
    const before = (a: number, b: number): number => start[a]! - start[b]! || seq[a]! - seq[b]! || rowids[a]! - rowids[b]!;
    let inOrder = true;
    for (let i = 1; i < n && inOrder; i++) inOrder = before(i - 1, i) < 0;
    if (!inOrder) {
      const order = new Uint32Array(n);
      for (let i = 0; i < n; i++) order[i] = i;
      order.sort(before);
      this.order = order;
      const pick = <A extends Float64Array | Uint32Array>(col: A, out: A): A => {
        for (let k = 0; k < n; k++) out[k] = col[order[k]!]!;
        return out;
      };
      start = pick(start, new Float64Array(n));
      end = pick(end, new Float64Array(n));
      rowids = pick(rowids, new Float64Array(n));
      seqs = pick(seqs, new Float64Array(n));
      sessionOf = pick(sessionOf, new Uint32Array(n));
    }
    // Offsets from the first step; the ends move with them (dependencies compare the two).
    const t0 = n > 0 ? start[0]! : 0;
    for (let i = 0; i < n; i++) ((start[i]! -= t0), (end[i]! -= t0));
    const offsetsUs = start;
    // Sessions in order of their first request (shifted); only those with steps; indices renumbered.
    const all = [...this.sessions.values()];
    const shifted = (e: E): Ordered => ({ startUs: e.startUs + shift(e.recordingId), requestSeq: e.requestSeq, rowid: e.rowid });
    const used = new Set(sessionOf);
    const kept = all.filter((s) => used.has(s.index)).sort((a, b) => byStart(shifted(a.first), shifted(b.first)));
    const renumber = new Map(kept.map((s, i) => [s.index, i]));
    for (let k = 0; k < n; k++) sessionOf[k] = renumber.get(sessionOf[k]!)!;
    for (const s of kept) if (s.plan.initialize && this.chosenInitializes.has(s.plan.initialize)) delete s.plan.initialize;
    const notes = this.notes.build(shift, start, seqs, t0, new Map(kept.map((s, i) => [s.plan.key, i])));
    // The notes after the steps, unanswered: each waits, as a step does, for the steps answered before it.
    const deps = dependencyColumns(concat(start, notes.offsetsUs), concat(end, new Float64Array(notes.size).fill(NaN)));
    const afterStart = deps.afterStart.subarray(0, n + 1);
    const afterList = deps.afterList.subarray(0, afterStart[n]);
    notes.afterStart = deps.afterStart.subarray(n);
    notes.afterList = deps.afterList;
    return {
      ...(notes.size > 0 ? { notes } : {}),
      size: n,
      rowids,
      offsetsUs,
      sessionOf,
      afterStart,
      afterList,
      sessions: kept.map((s) => s.plan),
      initializeIsStep: this.initializeIsStep,
    };
  }

  /** With `keepExchanges`: the selected exchanges in step order (after {@link build}). */
  chosenInOrder(): E[] {
    return this.order ? [...this.order].map((i) => this.chosen![i]!) : this.chosen!.slice();
  }

  /** A session takes its version from its first request, and opens with its first `initialize`. */
  private addToSession(ex: E): { index: number; plan: ReplaySessionPlan<E> } {
    const key = sessionKey(ex);
    let s = this.sessions.get(key);
    if (!s) this.sessions.set(key, (s = { index: this.sessions.size, plan: { key, era: ex.era === 'modern' ? 'modern' : 'legacy' }, first: ex }));
    else if (byStart(ex, s.first) < 0) s.first = ex;
    if (s.first === ex) {
      if (ex.protocolVersion !== undefined) s.plan.protocolVersion = ex.protocolVersion;
      else delete s.plan.protocolVersion;
    }
    if (ex.method === 'initialize' && (s.plan.initialize === undefined || byStart(ex, s.plan.initialize) < 0)) s.plan.initialize = ex;
    return s;
  }
}

/**
 * Several recordings replay one after the other (in the order they were taken), each keeping its
 * own gaps: a recording's times are shifted to start just after the previous one's last event.
 */
function backToBack(spans: ReadonlyMap<number, { first: number; last: number }>): (recordingId: number) => number {
  if (spans.size < 2) return () => 0;
  const shift = new Map<number, number>();
  let end: number | undefined;
  for (const [id, s] of [...spans].sort((a, b) => a[1].first - b[1].first)) {
    const delta = end === undefined ? 0 : end + 1 - s.first;
    shift.set(id, delta);
    end = s.last + delta;
  }
  return (id) => shift.get(id) ?? 0;
}

/** One replay session per recorded legacy session (or connection, for stdio); one per recording for the stateless modern era. */
export function sessionKey(ex: Pick<PlanExchange, 'era' | 'recordingId' | 'sessionId' | 'connectionId'>): string {
  if (ex.era === 'modern') return `${ex.recordingId}/modern`;
  return `${ex.recordingId}/${ex.sessionId !== undefined ? `session ${ex.sessionId}` : `connection ${ex.connectionId}`}`;
}

type Timed = Pick<StoredExchange, 'startUs' | 'endUs' | 'response'>;

/** {@link dependencyColumns} for exchanges as objects, sorted by start. */
export function dependencies(byStartOrder: readonly Timed[]): number[][] {
  const start = Float64Array.from(byStartOrder, (e) => e.startUs);
  const end = Float64Array.from(byStartOrder, (e) => (e.response !== undefined && e.endUs !== undefined ? e.endUs : NaN));
  const cols = dependencyColumns(start, end);
  return byStartOrder.map((_, i) => [...stepAfter(cols, i)]);
}

/**
 * For each exchange (sorted by start; `end` NaN when unanswered), the earlier exchanges answered
 * before it started, reduced: the one among them that started last (k) waits for every other
 * answered before k started, so only k and those answered after k started are kept.
 * O(n log n) plus the size of the answer.
 */
export function dependencyColumns(start: Float64Array, end: Float64Array): { afterStart: Uint32Array; afterList: Uint32Array } {
  const n = start.length;
  let m = 0;
  for (let i = 0; i < n; i++) if (!Number.isNaN(end[i]!)) m++;
  const answered = new Uint32Array(m);
  for (let i = 0, k = 0; i < n; i++) if (!Number.isNaN(end[i]!)) answered[k++] = i;
  const byEnd = (a: number, b: number): number => end[a]! - end[b]! || a - b;
  let inOrder = true;
  for (let k = 1; k < m && inOrder; k++) inOrder = byEnd(answered[k - 1]!, answered[k]!) < 0;
  if (!inOrder) answered.sort(byEnd);
  // Among the first k answered: the one that started last (the later one in start order on a tie).
  const latest = new Uint32Array(m);
  for (let k = 0; k < m; k++) {
    const prev = k > 0 ? latest[k - 1]! : k;
    latest[k] = answered[k]! >= answered[prev]! ? k : prev;
  }
  const afterStart = new Uint32Array(n + 1);
  const list = u32();
  const out: number[] = [];
  for (let j = 0; j < n; j++) {
    afterStart[j] = list.length;
    let hi = upperBound(answered, end, start[j]!);
    // Only earlier steps: zero-latency exchanges at the very same microsecond sort last; drop the later ones.
    while (hi > 0 && answered[hi - 1]! >= j) hi--;
    if (hi === 0) continue;
    const k = answered[latest[hi - 1]!]!;
    out.length = 0;
    out.push(k);
    for (let x = hi - 1; x >= 0 && end[answered[x]!]! > start[k]!; x--) if (answered[x] !== k) out.push(answered[x]!);
    out.sort((a, b) => a - b);
    for (const d of out) list.push(d);
  }
  afterStart[n] = list.length;
  return { afterStart, afterList: list.view().slice() };
}

/** How many of the end-sorted exchanges were answered at or before `t`. */
function upperBound(answered: Uint32Array, end: Float64Array, t: number): number {
  let lo = 0;
  let hi = answered.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (end[answered[mid]!]! <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
