/** The catalogue of rules: what every checker declares, with the rules file's severities applied. */
import type { CheckerFactory, RuleSettings } from './checker.js';
import type { RuleInfo } from './finding.js';

/** Every rule the factories can emit, in order; a duplicate id is a programming error. */
export function ruleCatalogue(factories: readonly CheckerFactory[]): RuleInfo[] {
  const seen = new Map<string, RuleInfo>();
  for (const factory of factories) {
    for (const rule of factory(new Map()).rules) {
      if (seen.has(rule.id)) throw new Error(`rule id ${rule.id} is declared twice`);
      seen.set(rule.id, rule);
    }
  }
  return [...seen.values()];
}

/** A rule as it runs: its severity after the rules file, `off` when silenced. */
export interface EffectiveRule extends RuleInfo {
  enabled: boolean;
}

export function effectiveRules(catalogue: readonly RuleInfo[], settings: RuleSettings): EffectiveRule[] {
  return catalogue.map((r) => {
    const s = settings.get(r.id)?.severity;
    return { ...r, severity: s === undefined || s === 'off' ? r.severity : s, enabled: s !== 'off' };
  });
}
