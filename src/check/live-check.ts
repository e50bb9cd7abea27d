/**
 * The check rules on traffic as it flows (`mcptap stdio|http --check`, `mcptap replay --check`): a
 * rules file given as text and name (plain data that crosses threads and processes, parsed in each
 * place: parsing is pure) becomes a CheckSink whose findings go, each as it comes, to `onFinding`
 * (the recorder, the metric), and are said once per rule by `say`, with a summary at the end.
 */
import type { AnomalySeen } from '../model/events.js';
import { lineSafe } from '../report/format.js';
import { ruleCatalogue } from './catalogue.js';
import { CHECKER_FACTORIES } from './checkers.js';
import type { CheckerFactory } from './checker.js';
import { CheckSink, type CheckResult } from './check-sink.js';
import type { Finding } from './finding.js';
import { parseRuleSettings, type CheckRules } from './rules-file.js';
import { assertionsChecker } from './assertions/assertion-checker.js';

/** A rules file as it crosses threads and processes. */
export interface CheckRulesSource {
  /** The file's name, for `file:line` in errors and for the user. */
  name: string;
  text: string;
}

/** The catalogue's rules and the file's assertions: what a check run runs. */
export function checkFactories(rules: CheckRules): readonly CheckerFactory[] {
  return rules.assertions.length > 0 ? [...CHECKER_FACTORIES, assertionsChecker(rules.assertions)] : CHECKER_FACTORIES;
}

/** Parses a rules file's text (throws MCPTAP_CHECK_RULES_INVALID naming `file:line`). */
export function parseCheckRules(source: CheckRulesSource): CheckRules {
  return parseRuleSettings(source.text, source.name, ruleCatalogue(CHECKER_FACTORIES));
}

export interface LiveCheckOptions {
  source: CheckRulesSource;
  /** Each finding as the rules file rates it. */
  onFinding?: (finding: Finding) => void;
  /** Where the check speaks (a line, no newline): the first finding of each rule (the caller says checkSummary at the end). */
  say?: (line: string) => void;
}

/** A CheckSink for live traffic: findings only counted for the outputs (the stream may be endless). */
export function liveCheckSink(opts: LiveCheckOptions): CheckSink {
  const rules = parseCheckRules(opts.source);
  const said = new Set<string>();
  const sink = new CheckSink({
    factories: checkFactories(rules),
    settings: rules.settings,
    maxFindings: 0,
    examplesPerRule: 1,
    onFinding: (f) => {
      opts.onFinding?.(f);
      if (!opts.say || said.has(f.ruleId)) return;
      said.add(f.ruleId);
      opts.say(`mcptap: check: ${f.ruleId} (${f.severity}): ${lineSafe(f.message)} (further findings of this rule are counted)`);
    },
  });
  return sink;
}

/** The line said at the end: counts by severity and by rule. */
export function checkSummary(result: CheckResult, name: string): string {
  const t = result.totals;
  const total = t.error + t.warning + t.note;
  if (total === 0) return `mcptap: check: ${name}: no findings`;
  const byRule = Object.entries(result.counts)
    .map(([id, c]) => `${id} ${c.error + c.warning + c.note}`)
    .join(', ');
  return `mcptap: check: ${name}: ${total} findings (${t.error} error, ${t.warning} warning, ${t.note} note): ${byRule}`;
}

/** A finding as the recording keeps it: an anomaly of kind `check` (never re-reported by `mcptap check`). */
export function findingAnomaly(f: Finding, nowUs: number): AnomalySeen {
  return {
    type: 'anomaly',
    kind: 'check',
    connectionId: f.where.connectionId ?? '',
    timeUs: f.where.timeUs ?? nowUs,
    detail: `${f.ruleId} (${f.severity}): ${f.message}`,
    ...(f.where.frameSeq !== undefined && { frameSeq: f.where.frameSeq }),
    ...(f.where.exchangeKey !== undefined && { exchangeKey: f.where.exchangeKey }),
  };
}
