/**
 * Assertions over exchanges, as a rules file writes them: a selector picks exchanges, and each
 * expectation is judged per exchange (a value at a JSON Pointer), over all of them (count, duration
 * percentile, error rate per layer), or on their order (a prerequisite earlier on the same session,
 * progress that rises, no progress after a cancel). Plain data; evaluation is in assertion-checker.ts.
 */
import type { Era, Exchange } from '../../model/exchange.js';
import type { Outcome } from '../../model/outcome.js';
import { valueAt } from '../../data-file/check-path.js';
import type { Severity } from '../finding.js';
import { compare, type CompareOp as AnyCompareOp } from '../../util/compare-op.js';

/** A rules file writes equality as `=`. */
export type CompareOp = Exclude<AnyCompareOp, '=='>;

/** `/result/structuredContent/count >= 1`: a value of the request (`/params`) or response (`/result`, `/error`). */
export interface ValueTest {
  pointer: string;
  segments: readonly string[];
  op: CompareOp | 'matches';
  value: unknown;
  pattern?: RegExp;
}

export interface Selector {
  method?: string;
  tool?: string;
  prompt?: string;
  outcome?: Outcome;
  era?: Era;
  session?: string;
  where?: ValueTest;
}

/** Figures over every selected exchange. Rates count each failure layer apart (see model/outcome.ts). */
export const AGGREGATES = ['count', 'p50', 'p90', 'p95', 'p99', 'max', 'error_rate', 'jsonrpc_error_rate', 'tool_error_rate', 'transport_error_rate'] as const;
export type Aggregate = (typeof AGGREGATES)[number];

export type Expectation =
  | { kind: 'value'; text: string; test: ValueTest }
  | { kind: 'aggregate'; text: string; metric: Aggregate; op: CompareOp; bound: number }
  | { kind: 'progress-increases'; text: string }
  | { kind: 'no-progress-after-cancel'; text: string };

export interface Assertion {
  name: string;
  /** `assert/<slug of the name>`: the rule id its findings carry. */
  ruleId: string;
  severity: Severity;
  select: Selector;
  /** Every selected exchange needs one of these earlier on its session (or connection). */
  precededBy?: Selector;
  expect: readonly Expectation[];
  /** The rules file and line it was written at, for the finding's help text. */
  source: string;
}

/** The value a test reads: `/params/...` from the request, `/result/...` and `/error/...` from the response. */
export function valueOf(ex: Exchange, segments: readonly string[]): unknown {
  const root = segments[0] === 'params' ? ex.request : ex.response;
  return root === undefined ? undefined : valueAt(root, segments);
}

export function passes(test: ValueTest, found: unknown): boolean {
  if (test.op === 'matches') return typeof found === 'string' ? test.pattern!.test(found) : test.pattern!.test(JSON.stringify(found) ?? '');
  if (test.op === '=' || test.op === '!=') return (JSON.stringify(found) === JSON.stringify(test.value)) === (test.op === '=');
  const bothNumbers = typeof found === 'number' && typeof test.value === 'number';
  const bothStrings = typeof found === 'string' && typeof test.value === 'string';
  return (bothNumbers || bothStrings) && compare<number | string>(found, test.op, test.value as number | string);
}

export function selects(sel: Selector, ex: Exchange): boolean {
  if (sel.method !== undefined && ex.method !== sel.method) return false;
  if (sel.tool !== undefined && (ex.method !== 'tools/call' || ex.target !== sel.tool)) return false;
  if (sel.prompt !== undefined && (ex.method !== 'prompts/get' || ex.target !== sel.prompt)) return false;
  if (sel.outcome !== undefined && ex.outcome !== sel.outcome) return false;
  if (sel.era !== undefined && ex.era !== sel.era) return false;
  if (sel.session !== undefined && ex.sessionId !== sel.session) return false;
  if (sel.where !== undefined && !passes(sel.where, valueOf(ex, sel.where.segments))) return false;
  return true;
}
