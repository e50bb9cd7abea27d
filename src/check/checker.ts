/**
 * The contract every rule family implements. A checker reads the TapEvent stream (live or from a
 * recording) and emits findings; the check sink (check-sink.ts) fans events out to checkers.
 * Like a sink's hooks, `onEvent` is synchronous and never throws; state is bounded per open exchange.
 */
import type { TapEvent } from '../model/events.js';
import type { Finding, RuleInfo, Severity } from './finding.js';
import type { Surface } from './surface-snapshot.js';

export interface Emit {
  (finding: Finding): void;
}

export interface Checker {
  /** The rules this checker can emit (the catalogue, docs and SARIF descriptors are built from these). */
  readonly rules: readonly RuleInfo[];
  onEvent(event: TapEvent, emit: Emit): void;
  /** End of the stream: report what only the end can tell (pending requests, totals, budgets). */
  finish(emit: Emit): void;
  /**
   * Rules this checker could not judge in this run, with why (`no --baseline`): reported as skipped,
   * never as passed. Read after `finish`.
   */
  readonly unjudged?: ReadonlyMap<string, string>;
}

/**
 * How a rules file tunes one rule: its severity (`off` silences it) and its options (thresholds).
 * The engine applies `severity`; a checker reads only the options of its own rules.
 */
export interface RuleSetting {
  severity?: Severity | 'off';
  options?: Readonly<Record<string, unknown>>;
}

export type RuleSettings = ReadonlyMap<string, RuleSetting>;

/**
 * What a check run knows beside the event stream, for the checkers that need it. Kept minimal:
 * add a field when a family needs one.
 */
export interface CheckContext {
  /** The recording checked (offline runs): its end state, for the rules about the recording itself. */
  recording?: { file?: string; incomplete?: string; droppedQueue?: number; droppedWrite?: number; ended?: boolean };
  /** `--baseline FILE`: the surface the drift rules judge against (read by the CLI). */
  baseline?: Surface;
}

/**
 * Every rule family exports one: settings in, a fresh checker (one per check run) out. The catalogue
 * also calls it (empty settings, no context) just to read `rules`: construct cheaply, open files lazily.
 */
export type CheckerFactory = (settings: RuleSettings, context?: CheckContext) => Checker;
