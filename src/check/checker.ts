/**
 * The contract every rule family implements. A checker reads the TapEvent stream (live or from a
 * recording) and emits findings; the check sink (check-sink.ts) fans events out to checkers.
 * Like a sink's hooks, `onEvent` is synchronous and never throws; state is bounded per open exchange.
 */
import type { TapEvent } from '../model/events.js';
import type { Finding, RuleInfo } from './finding.js';

export interface Emit {
  (finding: Finding): void;
}

export interface Checker {
  /** The rules this checker can emit (the catalogue, docs and SARIF descriptors are built from these). */
  readonly rules: readonly RuleInfo[];
  onEvent(event: TapEvent, emit: Emit): void;
  /** End of the stream: report what only the end can tell (pending requests, totals, budgets). */
  finish(emit: Emit): void;
}
