/**
 * The mock's pure core: recorded requests indexed by a readable key, a cursor per key, and for a
 * request the recording does not hold, the nearest recorded candidate and where they differ.
 *
 * The key is the method plus the request's params after the match rules in scope (rules.ts), with
 * `params._meta` left out (progress tokens, trace context and the 2026-07-28 envelope differ from
 * caller to caller and say nothing about what was asked): `tools/call {"arguments":{"a":1},"name":"add"}`.
 * Redaction tokens read as `<redacted>`: a secret matches whatever secret was recorded in its place.
 * Identical requests are answered in recorded order; when they run out the last answer repeats.
 * No IO, no clock.
 */
import { isRecord } from '../model/jsonrpc.js';
import { maskTokens } from '../redact/redactor.js';
import { compareMessages } from './compare.js';
import { canonical, normalise, type MatchRules, type RuleScope } from './rules.js';

/** A recorded request the mock can answer, with whatever the caller wants back for it. */
export interface MockCandidate<T> {
  method: string;
  params?: unknown;
  answer: T;
}

export interface Nearest {
  key: string;
  /** JSON Pointer into the request (`/params/arguments/text`) of the first difference. */
  path: string;
  recorded?: unknown;
  requested?: unknown;
  /** Differences in all (the first is at `path`). */
  differences: number;
}

export type MatchResult<T> =
  | { hit: true; key: string; answer: T; /** 0-based position among the recorded answers for this key. */ index: number; repeated: boolean }
  | { hit: false; key: string; nearest?: Nearest };

/** `tools/call`, `prompts/get`: the name; `resources/read`: the URI (what `Mcp-Name` carries). */
export function scopeOfRequest(method: string, params: unknown): RuleScope {
  const p = isRecord(params) ? params : {};
  const target = typeof p.name === 'string' ? p.name : typeof p.uri === 'string' ? p.uri : undefined;
  return target === undefined ? { method } : { method, tool: target };
}

/** Params without `_meta`; undefined when nothing else is left. */
function keyParams(params: unknown): unknown {
  if (!isRecord(params)) return params;
  const { _meta: _m, ...rest } = params;
  return Object.keys(rest).length === 0 ? undefined : rest;
}

/** The normalised request part that is keyed and compared: `{params}`. */
function keyed(rules: MatchRules, method: string, params: unknown): { scope: RuleScope; value: unknown } {
  const scope = scopeOfRequest(method, params);
  const p = maskTokens(keyParams(params));
  return { scope, value: normalise(rules, scope, p === undefined ? {} : { params: p }, 'request') };
}

/** The readable key of a request: method, a space, the canonical JSON of its normalised params (or nothing). */
export function requestKey(rules: MatchRules, method: string, params: unknown): string {
  const { value } = keyed(rules, method, params);
  const p = isRecord(value) ? value.params : undefined;
  return p === undefined ? method : `${method} ${canonical(p)}`;
}

/** A distinct recorded request: its key, and what {@link MockMatcher} compares a miss with. */
export interface RecordedRequest {
  key: string;
  method: string;
  scope: RuleScope;
  /** Params without `_meta`, as first recorded under this key. */
  params: unknown;
}

/**
 * Where the matcher finds recorded requests: in memory ({@link MockMatcher} from candidates) or
 * read on demand from a recording too big to hold (mock/recorded-answers.ts).
 */
export interface MatchSource<T> {
  /** How many answers were recorded for `key`; 0 when none. */
  count(key: string): number;
  /** The `index`th of them (0-based, recorded order). */
  answer(key: string, index: number): T;
  /** Each distinct recorded request of `method`, in the order first recorded. */
  requests(method: string): Iterable<RecordedRequest>;
}

/** The recorded request a candidate stands for. */
export function recordedRequest(rules: MatchRules, method: string, params: unknown): RecordedRequest {
  return { key: requestKey(rules, method, params), method, scope: scopeOfRequest(method, params), params: keyParams(params) };
}

/** Candidates held in memory, grouped by key. */
class MemorySource<T> implements MatchSource<T> {
  private readonly slots = new Map<string, { request: RecordedRequest; answers: T[] }>();

  constructor(candidates: readonly MockCandidate<T>[], rules: MatchRules) {
    for (const c of candidates) {
      const request = recordedRequest(rules, c.method, c.params);
      let slot = this.slots.get(request.key);
      if (!slot) this.slots.set(request.key, (slot = { request, answers: [] }));
      slot.answers.push(c.answer);
    }
  }

  get size(): number {
    return this.slots.size;
  }

  count(key: string): number {
    return this.slots.get(key)?.answers.length ?? 0;
  }

  answer(key: string, index: number): T {
    return this.slots.get(key)!.answers[index]!;
  }

  *requests(method: string): Iterable<RecordedRequest> {
    for (const s of this.slots.values()) if (s.request.method === method) yield s.request;
  }
}

export class MockMatcher<T> {
  private readonly source: MatchSource<T>;
  /** Key -> how many of its answers were given. */
  private readonly given = new Map<string, number>();

  constructor(
    candidates: readonly MockCandidate<T>[] | MatchSource<T>,
    private readonly rules: MatchRules,
  ) {
    this.source = Array.isArray(candidates) ? new MemorySource(candidates, rules) : (candidates as MatchSource<T>);
  }

  /** Distinct recorded requests (in-memory candidates only). */
  get size(): number {
    return this.source instanceof MemorySource ? this.source.size : 0;
  }

  /** The next recorded answer for this request (the last one again once they run out), or the nearest miss. */
  match(method: string, params: unknown): MatchResult<T> {
    const key = requestKey(this.rules, method, params);
    const count = this.source.count(key);
    if (count === 0) {
      const nearest = this.nearest(method, params);
      return nearest ? { hit: false, key, nearest } : { hit: false, key };
    }
    const next = this.given.get(key) ?? 0;
    const index = Math.min(next, count - 1);
    const repeated = next >= count;
    if (!repeated) this.given.set(key, next + 1);
    return { hit: true, key, answer: this.source.answer(key, index), index, repeated };
  }

  /** Among recorded requests of the same method (the same tool first), the one with the fewest differences. */
  private nearest(method: string, params: unknown): Nearest | undefined {
    const scope = scopeOfRequest(method, params);
    const mine = keyParams(params);
    let best: { slot: RecordedRequest; rank: number; diffs: ReturnType<typeof compareMessages> } | undefined;
    for (const slot of this.source.requests(method)) {
      const diffs = compareMessages(this.rules, scope, { params: slot.params }, { params: mine });
      if (diffs.length === 0) continue; // equal only after normalising twice: not a useful hint
      // A candidate for the same tool beats any other; then the fewest differences.
      const rank = (slot.scope.tool === scope.tool ? 0 : 1_000_000) + diffs.length;
      if (!best || rank < best.rank) best = { slot, rank, diffs };
    }
    if (!best) return undefined;
    const first = best.diffs[0]!;
    return {
      key: best.slot.key,
      path: first.path ?? '',
      ...(first.recorded !== undefined ? { recorded: first.recorded } : {}),
      ...(first.replayed !== undefined ? { requested: first.replayed } : {}),
      differences: best.diffs.length,
    };
  }
}

/** One line for a miss: the key, and the nearest candidate with the path where they differ. */
export function describeMiss(miss: { key: string; nearest?: Nearest }): string {
  const n = miss.nearest;
  if (!n) return `no recorded request matches ${miss.key} (none with this method)`;
  const values = `recorded ${show(n.recorded)}, requested ${show(n.requested)}`;
  return `no recorded request matches ${miss.key}; nearest: ${n.key} (differs at ${n.path || '/'}: ${values})`;
}

function show(v: unknown): string {
  if (v === undefined) return 'nothing';
  const text = JSON.stringify(v);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
