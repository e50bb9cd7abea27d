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

interface Slot<T> {
  key: string;
  method: string;
  scope: RuleScope;
  params: unknown;
  answers: T[];
  next: number;
}

export class MockMatcher<T> {
  private readonly slots = new Map<string, Slot<T>>();

  constructor(
    candidates: readonly MockCandidate<T>[],
    private readonly rules: MatchRules,
  ) {
    for (const c of candidates) {
      const key = requestKey(rules, c.method, c.params);
      let slot = this.slots.get(key);
      if (!slot) {
        slot = { key, method: c.method, scope: scopeOfRequest(c.method, c.params), params: keyParams(c.params), answers: [], next: 0 };
        this.slots.set(key, slot);
      }
      slot.answers.push(c.answer);
    }
  }

  get size(): number {
    return this.slots.size;
  }

  /** The next recorded answer for this request (the last one again once they run out), or the nearest miss. */
  match(method: string, params: unknown): MatchResult<T> {
    const key = requestKey(this.rules, method, params);
    const slot = this.slots.get(key);
    if (!slot) {
      const nearest = this.nearest(method, params);
      return nearest ? { hit: false, key, nearest } : { hit: false, key };
    }
    const index = Math.min(slot.next, slot.answers.length - 1);
    const repeated = slot.next >= slot.answers.length;
    if (!repeated) slot.next++;
    return { hit: true, key, answer: slot.answers[index]!, index, repeated };
  }

  /** Among recorded requests of the same method (the same tool first), the one with the fewest differences. */
  private nearest(method: string, params: unknown): Nearest | undefined {
    const scope = scopeOfRequest(method, params);
    const mine = keyParams(params);
    let best: { slot: Slot<T>; rank: number; diffs: ReturnType<typeof compareMessages> } | undefined;
    for (const slot of this.slots.values()) {
      if (slot.method !== method) continue;
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
