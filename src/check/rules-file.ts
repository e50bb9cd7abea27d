/**
 * The rules file of `mcptap check --rules FILE` (docs/check.md): YAML or JSON, read into RuleSettings.
 * Every problem, an unknown rule id included, is reported as `file:line: field: message` (exit 4).
 *
 *   rules:
 *     protocol/pending: off                        # silence a rule
 *     protocol/result-schema: warning              # change its severity
 *     surface/tool-tokens: { severity: error, maxToolTokens: 800 }  # severity and options, flat
 *   assertions:                                    # see assertions/parse-assertions.ts
 *     - name: search is fast
 *       select: { tool: search }
 *       expect: [p95 <= 200ms]
 */
import { McptapError } from '../errors.js';
import { issueLines, isObj, kind, nearest, Reader } from '../data-file/validation.js';
import { parseYamlSource, readTextFile } from '../data-file/yaml-source.js';
import type { RuleSetting, RuleSettings } from './checker.js';
import type { RuleInfo } from './finding.js';
import type { Assertion } from './assertions/assertion.js';
import { parseAssertions } from './assertions/parse-assertions.js';

/** What a rules file says: settings of the catalogue's rules, and the user's own assertions. */
export interface CheckRules {
  settings: RuleSettings;
  assertions: Assertion[];
}

const LEVELS = ['off', 'error', 'warning', 'note'] as const;

/** A rule as the rules file knows it: its id, and the option names it reads. */
export type KnownRule = Pick<RuleInfo, 'id' | 'options'>;

export function loadRuleSettings(file: string, knownRules: readonly KnownRule[]): CheckRules {
  const text = readTextFile(file, (why) => new McptapError('MCPTAP_CHECK_RULES_MISSING', `cannot read the rules file ${file}: ${why}`));
  return parseRuleSettings(text, file, knownRules);
}

export function parseRuleSettings(text: string, source: string, knownRules: readonly KnownRule[]): CheckRules {
  const invalid = (detail: string) => new McptapError('MCPTAP_CHECK_RULES_INVALID', `${source} is not a valid rules file (see docs/check.md):\n${detail}`);
  const { value, locate } = parseYamlSource(text, (line, what) => invalid(`  ${source}:${line}: not valid YAML or JSON: ${what}`));
  const r = new Reader();
  const settings = new Map<string, RuleSetting>();
  const top = value === null || value === undefined ? {} : r.obj(value, [], ['rules', 'assertions']);
  const assertions = top?.assertions === undefined ? [] : parseAssertions(top.assertions, r, ['assertions'], (p) => `${source}:${locate(p, false) ?? 1}`);
  const rules = top?.rules;
  if (rules !== undefined && rules !== null && !isObj(rules)) r.fail(['rules'], `must be a mapping of rule ids to settings (got ${kind(rules)})`);
  const ids = knownRules.map((k) => k.id);
  for (const [id, v] of Object.entries(isObj(rules) ? rules : {})) {
    if (!ids.includes(id) && !assertions.some((a) => a.ruleId === id)) {
      const near = nearest(id, ids, 4);
      r.fail(['rules', id], `unknown rule${near ? ` (did you mean "${near}"?)` : ''}; see docs/check.md for the rule ids`, true);
      continue;
    }
    const setting = readSetting(v, ['rules', id], r, knownRules.find((k) => k.id === id)?.options ?? []);
    if (setting) settings.set(id, setting);
  }
  if (r.issues.length > 0) throw invalid(issueLines(source, r.issues, locate));
  return { settings, assertions };
}

/** One rule's setting: a level, `false`, or a mapping of `severity` and the rule's own options, flat. */
function readSetting(v: unknown, path: (string | number)[], r: Reader, allowed: readonly string[]): RuleSetting | undefined {
  if (typeof v === 'string') {
    if ((LEVELS as readonly string[]).includes(v)) return { severity: v as RuleSetting['severity'] };
    return r.fail(path, `must be one of ${LEVELS.join(', ')}, or a mapping with severity and options (got "${v}")`);
  }
  if (v === false) return { severity: 'off' };
  if (!isObj(v)) return r.fail(path, `must be one of ${LEVELS.join(', ')}, or a mapping with severity and options (got ${kind(v)})`);
  const { severity, ...options } = v;
  // Options sit beside severity; a nested `options:` mapping or a misspelt key would be silently unread.
  let bad = false;
  for (const key of Object.keys(options)) {
    if (key === 'options' && !allowed.includes(key)) {
      bad = true;
      r.fail([...path, key], `write options flat, beside severity (\`{ severity: warning, ${allowed[0] ?? 'option'}: ... }\`), not under "options:"`, true);
    } else if (!allowed.includes(key)) {
      bad = true;
      const near = nearest(key, allowed, 3);
      const known = allowed.length > 0 ? `; options of this rule: ${allowed.join(', ')}` : '; this rule takes no options, only severity';
      r.fail([...path, key], `unknown option${near ? ` (did you mean "${near}"?)` : ''}${known}`, true);
    }
  }
  if (bad) return undefined;
  const level = severity === undefined ? undefined : r.oneOf(v, 'severity', path, LEVELS);
  if (severity !== undefined && level === undefined) return undefined;
  return { ...(level !== undefined && { severity: level }), ...(Object.keys(options).length > 0 && { options }) };
}
