/**
 * The `drift/…` rules as a checker: the surface the traffic shows, judged against a baseline at the
 * end of the stream, when the run has one (`--baseline FILE`, in the context); silent without.
 */
import type { CheckerFactory, Emit, RuleSettings } from '../checker.js';
import { DRIFT_RULES, diffSurface, type DriftOptions } from '../surface-diff.js';
import { SurfaceBuilder, type Surface } from '../surface-snapshot.js';
import { numberOption } from './tool-surface.js';

/** The options of the drift rules from a rules file (`drift/tool-tokens: { maxToolTokens: 800 }`, flat beside severity). */
export function driftOptions(settings: RuleSettings): DriftOptions {
  const options: DriftOptions = {};
  const maxToolTokens = numberOption(settings, DRIFT_RULES.toolTokens.id, 'maxToolTokens');
  const maxNewToolTokens = numberOption(settings, DRIFT_RULES.newToolTokens.id, 'maxNewToolTokens');
  const maxGrowth = numberOption(settings, DRIFT_RULES.totalTokenGrowth.id, 'maxGrowth');
  if (maxToolTokens !== undefined) options.maxToolTokens = maxToolTokens;
  if (maxNewToolTokens !== undefined) options.maxNewToolTokens = maxNewToolTokens;
  if (maxGrowth !== undefined) options.maxGrowth = maxGrowth;
  return options;
}

/** The drift rule family against `baseline` (a snapshot or a recording's surface, see loadBaseline). */
export function driftAgainst(baseline: Surface): CheckerFactory {
  return (settings) => {
    const options = driftOptions(settings);
    const builder = new SurfaceBuilder();
    return {
      rules: Object.values(DRIFT_RULES),
      onEvent: (event) => void builder.add(event),
      finish(emit: Emit) {
        for (const finding of diffSurface(baseline, builder.build(), { ...options, lists: builder.listed })) emit(finding);
      },
    };
  };
}

/** The registry's drift family: judges against the context's baseline, and checks nothing without one. */
export const drift: CheckerFactory = (settings, context) =>
  context?.baseline
    ? driftAgainst(context.baseline)(settings)
    : {
        rules: Object.values(DRIFT_RULES),
        onEvent() {},
        finish() {},
        unjudged: new Map(Object.values(DRIFT_RULES).map((r) => [r.id, 'no --baseline'])),
      };
