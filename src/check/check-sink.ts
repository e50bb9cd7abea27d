/**
 * The check engine as a sink: fans each TapEvent out to the checkers, applies the rules file's
 * severities and `off` centrally, and counts findings by rule and severity. Memory is bounded: all
 * findings up to `maxFindings` are kept for the JSON/JUnit/SARIF outputs (beyond that only counted,
 * and the reports say how many more), and the first `examplesPerRule` of each rule for the text.
 */
import type { TapEvent } from '../model/events.js';
import { emptyStats, type Sink, type SinkStats } from '../sinks/sink.js';
import { effectiveRules, ruleCatalogue, type EffectiveRule } from './catalogue.js';
import type { CheckContext, Checker, CheckerFactory, RuleSettings } from './checker.js';
import type { Finding, Severity } from './finding.js';

export const DEFAULT_MAX_FINDINGS = 10_000;
export const DEFAULT_EXAMPLES_PER_RULE = 5;

export interface CheckSinkOptions {
  factories: readonly CheckerFactory[];
  settings?: RuleSettings;
  context?: CheckContext;
  /** Findings kept whole for the machine-readable outputs (default 10,000). */
  maxFindings?: number;
  examplesPerRule?: number;
  /** Each finding as it is accepted (its severity the rules file's): live taps record and count it. */
  onFinding?: (finding: Finding) => void;
}

export type SeverityCounts = Record<Severity, number>;

/** What a check run found: plain data for report/. */
export interface CheckResult {
  rules: EffectiveRule[];
  /** Per rule id, findings by severity (all of them, never capped). */
  counts: Record<string, SeverityCounts>;
  totals: SeverityCounts;
  /** The findings in order, up to the cap. */
  findings: Finding[];
  /** Findings counted but not kept (over the cap). */
  omitted: number;
  /** Per rule id, its first findings. */
  examples: Record<string, Finding[]>;
  /** Checker failures (a bug in a rule): counted, never thrown into the stream. */
  checkerErrors: number;
  /** Per enabled rule id its checker could not judge, why (`no --baseline`): not a pass. */
  unjudged: Record<string, string>;
}

export class CheckSink implements Sink {
  readonly name = 'check';
  private readonly checkers: Checker[];
  private readonly rules: EffectiveRule[];
  private readonly byId: Map<string, EffectiveRule>;
  private readonly result: CheckResult;
  private readonly maxFindings: number;
  private readonly examplesPerRule: number;
  private readonly onFinding: ((finding: Finding) => void) | undefined;
  private readonly sinkStats: SinkStats = emptyStats();
  private finished = false;
  private readonly emit = (f: Finding): void => this.accept(f);

  constructor(opts: CheckSinkOptions) {
    const settings = opts.settings ?? new Map();
    this.rules = effectiveRules(ruleCatalogue(opts.factories), settings);
    this.byId = new Map(this.rules.map((r) => [r.id, r]));
    this.checkers = opts.factories.map((f) => f(settings, opts.context));
    this.maxFindings = opts.maxFindings ?? DEFAULT_MAX_FINDINGS;
    this.examplesPerRule = opts.examplesPerRule ?? DEFAULT_EXAMPLES_PER_RULE;
    this.onFinding = opts.onFinding;
    this.result = { rules: this.rules, counts: {}, totals: zero(), findings: [], omitted: 0, examples: {}, checkerErrors: 0, unjudged: {} };
  }

  onEvent(event: TapEvent): void {
    this.sinkStats.events++;
    for (const c of this.checkers) {
      try {
        c.onEvent(event, this.emit);
      } catch {
        this.sinkStats.errors++;
        this.result.checkerErrors++;
      }
    }
  }

  /** Ends the stream for every checker (once) and returns what was found. */
  finish(): CheckResult {
    if (!this.finished) {
      this.finished = true;
      for (const c of this.checkers) {
        try {
          c.finish(this.emit);
        } catch {
          this.sinkStats.errors++;
          this.result.checkerErrors++;
        }
        for (const [id, why] of c.unjudged ?? []) if (this.byId.get(id)?.enabled !== false) this.result.unjudged[id] = why;
      }
    }
    return this.result;
  }

  async flush(): Promise<void> {}

  async close(): Promise<void> {
    this.finish();
  }

  stats(): SinkStats {
    return { ...this.sinkStats };
  }

  private accept(finding: Finding): void {
    const rule = this.byId.get(finding.ruleId);
    if (rule && !rule.enabled) return;
    // The rules file's severity wins over the checker's; an undeclared rule keeps its own.
    const f = rule && rule.severity !== finding.severity ? { ...finding, severity: rule.severity } : finding;
    const counts = (this.result.counts[f.ruleId] ??= zero());
    counts[f.severity]++;
    this.result.totals[f.severity]++;
    if (this.result.findings.length < this.maxFindings) this.result.findings.push(f);
    else this.result.omitted++;
    const examples = (this.result.examples[f.ruleId] ??= []);
    if (examples.length < this.examplesPerRule) examples.push(f);
    this.onFinding?.(f);
  }
}

function zero(): SeverityCounts {
  return { error: 0, warning: 0, note: 0 };
}
