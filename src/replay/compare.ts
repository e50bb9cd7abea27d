/**
 * Compares one recorded exchange with its replay. Whatever the rules say, a change of outcome class
 * or JSON-RPC error code, a response that never came, a server-to-client request the recording had
 * no answer for and a changed count of progress notifications are differences; the answers
 * themselves are compared after the rules in scope (rules.ts).
 */
import type { StreamTimes } from '../model/stream-figures.js';
import { isRecord, type JsonRpcMessage } from '../model/jsonrpc.js';
import type { Outcome } from '../model/outcome.js';
import type { StoredExchange } from '../store/types.js';
import { formatPointer } from '../data-file/json-pointer.js';
import { addedAllowed, normalise, rulesFor, toleranceAt, type MatchRule, type MatchRules, type RuleScope } from './rules.js';

/** What the target did with one replayed request. */
export interface ReplayedAnswer {
  /** What the target answered, its id mapped back to the recorded id; absent when nothing came. */
  response?: JsonRpcMessage;
  /** Classified as the correlator does (`unanswered` when no response came). */
  outcome: Outcome;
  errorCode?: number;
  isError: boolean;
  latencyUs?: number;
  /** The answer's moments, for the streamed-answer figures (first event, gaps, ...). */
  stream?: StreamTimes;
  progressCount: number;
  /** Methods of server-to-client requests the recording had no answer for. */
  unexpectedServerRequests: string[];
  transportError?: string;
  /** Never sent: the target had failed before it (the report's failure says why). */
  notSent?: true;
}

export type DifferenceKind = 'value' | 'outcome' | 'no_response' | 'unexpected_request' | 'progress_count' | 'slowdown';

export interface Difference {
  kind: DifferenceKind;
  /** JSON Pointer into the response message, for `value`. */
  path?: string;
  recorded?: unknown;
  replayed?: unknown;
  message: string;
}

/** At most this many value differences are listed per exchange; the rest are counted. */
export const MAX_VALUE_DIFFERENCES = 20;

export function scopeOf(ex: Pick<StoredExchange, 'method' | 'target'>): RuleScope {
  return ex.target === undefined ? { method: ex.method } : { method: ex.method, tool: ex.target };
}

export function compareExchange(rules: MatchRules, recorded: StoredExchange, replayed: ReplayedAnswer): Difference[] {
  if (replayed.notSent) return []; // nothing to compare: counted as not sent (the report's failure says why)
  const out: Difference[] = [];
  for (const method of replayed.unexpectedServerRequests) {
    out.push({ kind: 'unexpected_request', replayed: method, message: `the server sent a ${method} request the recording has no answer for` });
  }
  const recordedAnswered = recorded.response !== undefined;
  if (recordedAnswered && replayed.response === undefined) {
    const why = replayed.transportError ? `: ${replayed.transportError}` : '';
    out.push({ kind: 'no_response', recorded: recorded.outcome, replayed: replayed.outcome, message: `no response came${why}` });
    return out;
  }
  if (!recordedAnswered) return out; // nothing recorded to compare with (still in flight, or cancelled unanswered)
  if (recorded.outcome !== replayed.outcome) {
    out.push({ kind: 'outcome', recorded: recorded.outcome, replayed: replayed.outcome, message: `outcome ${recorded.outcome} -> ${replayed.outcome}` });
  } else if (recorded.outcome === 'jsonrpc_error' && recorded.errorCode !== replayed.errorCode) {
    out.push({
      kind: 'outcome',
      recorded: recorded.errorCode,
      replayed: replayed.errorCode,
      message: `JSON-RPC error code ${recorded.errorCode} -> ${replayed.errorCode}`,
    });
  }
  if (recorded.progress.length !== replayed.progressCount) {
    out.push({
      kind: 'progress_count',
      recorded: recorded.progress.length,
      replayed: replayed.progressCount,
      message: `${recorded.progress.length} progress notifications -> ${replayed.progressCount}`,
    });
  }
  out.push(...compareMessages(rules, scopeOf(recorded), recorded.response, replayed.response));
  return out;
}

/** Value differences between two responses after the rules in `scope`; paths are pointers into the message. */
export function compareMessages(rules: MatchRules, scope: RuleScope, recorded: unknown, replayed: unknown): Difference[] {
  const inScope = rulesFor(rules, scope);
  const a = normalise(rules, scope, answerPart(recorded), 'response');
  const b = normalise(rules, scope, answerPart(replayed), 'response');
  const out: Difference[] = [];
  let more = 0;
  const report = (d: Difference): void => {
    if (out.length < MAX_VALUE_DIFFERENCES) out.push(d);
    else more++;
  };
  diff(a, b, [], inScope, report);
  if (more > 0) out.push({ kind: 'value', message: `… and ${more} more value differences` });
  return out;
}

/** The part of a response that is compared: `result` or `error` (never `jsonrpc` or the id). */
function answerPart(m: unknown): unknown {
  if (!isRecord(m)) return m;
  const { jsonrpc: _j, id: _i, ...rest } = m;
  return rest;
}

function diff(a: unknown, b: unknown, path: (string | number)[], rules: readonly MatchRule[], report: (d: Difference) => void): void {
  if (Object.is(a, b)) return;
  if (typeof a === 'number' && typeof b === 'number') {
    const tol = toleranceAt(rules, path);
    if (tol && withinTolerance(a, b, tol)) return;
    if (a === b) return;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    const n = Math.max(a.length, b.length);
    for (let i = 0; i < n; i++) {
      if (i >= a.length) {
        // An element appended by the new server is an addition too: allowAdded covers it.
        if (!addedAllowed(rules, [...path, i]))
          report({ kind: 'value', path: formatPointer([...path, i]), replayed: b[i], message: 'added by the new server' });
      } else if (i >= b.length) report({ kind: 'value', path: formatPointer([...path, i]), recorded: a[i], message: 'missing from the new answer' });
      else diff(a[i], b[i], [...path, i], rules, report);
    }
    return;
  }
  if (isRecord(a) && isRecord(b)) {
    for (const k of Object.keys(a)) {
      if (a[k] === undefined) continue;
      if (!(k in b) || b[k] === undefined) report({ kind: 'value', path: formatPointer([...path, k]), recorded: a[k], message: 'missing from the new answer' });
      else diff(a[k], b[k], [...path, k], rules, report);
    }
    for (const k of Object.keys(b)) {
      if (b[k] === undefined || (k in a && a[k] !== undefined)) continue;
      if (!addedAllowed(rules, [...path, k])) report({ kind: 'value', path: formatPointer([...path, k]), replayed: b[k], message: 'added by the new server' });
    }
    return;
  }
  report({ kind: 'value', path: formatPointer(path), recorded: a, replayed: b, message: 'changed' });
}

function withinTolerance(a: number, b: number, tol: { absolute?: number; relative?: number }): boolean {
  const d = Math.abs(a - b);
  if (tol.absolute !== undefined && d <= tol.absolute) return true;
  return tol.relative !== undefined && d <= tol.relative * Math.max(Math.abs(a), Math.abs(b));
}
