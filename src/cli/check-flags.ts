/**
 * `--check RULES.yaml` on the tap commands and on `mcptap replay`: the rules file read and validated
 * at the edge (exit 4 naming `file:line`, before any traffic), passed on as text and name. The rule
 * engine is loaded only then: a tap's start-up pays for every module.
 */
import type { CheckRulesSource } from '../check/live-check.js';
import type { FailOn } from '../check/run-check.js';
import { McptapError } from '../errors.js';
import type { TapPipelineOptions } from '../pipeline/tap-pipeline.js';

/**
 * `--check RULES.yaml`: the rules file read and parsed now (an error is exit 4 naming `file:line`,
 * before any traffic); its text crosses to the pipelines that run it, which parse it again.
 */
export async function checkFromFlags(flags: { check?: string }): Promise<Pick<TapPipelineOptions, 'check'>> {
  if (!flags.check) return {};
  const [{ readTextFile }, { parseCheckRules }] = await Promise.all([import('../data-file/yaml-source.js'), import('../check/live-check.js')]);
  const file = flags.check;
  const text = readTextFile(file, (why) => new McptapError('MCPTAP_CHECK_RULES_MISSING', `cannot read the rules file ${file}: ${why}`));
  parseCheckRules({ name: file, text });
  return { check: { name: file, text } };
}

/** The `--check` option's help line, shared by the tap commands. */
export const CHECK_OPTION_HELP =
  'run the rules of this file (as mcptap check --rules) on the traffic: findings recorded (anomaly kind check), counted (mcptap.check.findings) and said on stderr; the exit code does not change';

export interface ReplayCheckFlags {
  source: CheckRulesSource;
  failOn: FailOn;
  failOnText: string;
}

/** `--check FILE` read and validated before anything is sent (exit 4 naming file:line), and `--check-fail-on`. */
export async function replayCheckFromFlags(flags: { check?: string; checkFailOn: string }): Promise<ReplayCheckFlags | undefined> {
  const { check } = await checkFromFlags(flags);
  if (!check) return undefined;
  const [{ ruleCatalogue }, { CHECKER_FACTORIES }, { parseCheckRules }, { parseFailOn }] = await Promise.all([
    import('../check/catalogue.js'),
    import('../check/checkers.js'),
    import('../check/live-check.js'),
    import('./commands/check.js'),
  ]);
  const ids = ruleCatalogue(CHECKER_FACTORIES).map((r) => r.id);
  const assertions = parseCheckRules(check).assertions.map((a) => a.ruleId);
  return { source: check, failOn: parseFailOn(flags.checkFailOn, [...ids, ...assertions], '--check-fail-on'), failOnText: flags.checkFailOn };
}
