/**
 * `defineScenario` for TypeScript/JavaScript scenario files: the same fields as a YAML scenario,
 * plus an optional `iteration` function for scripted runs. Returns its argument unchanged (it
 * exists for the types); the loader validates it exactly like YAML.
 *
 *   export default defineScenario({
 *     target: { reference: true },
 *     phases: [{ open: { rate: 50, duration: '10s' } }],
 *     async iteration(ctx) {
 *       const r = await ctx.tool('echo', { text: `hello ${ctx.iteration}` });
 *       ctx.check('echoed', r?.result !== undefined);
 *       // Cancel mid-flight and judge the server, as a step's `cancel:` does:
 *       await ctx.tool('progress', { steps: 40 }, { cancel: { afterProgress: 2, probe: 'in-flight' } });
 *     },
 *   });
 */
import type { IterationContext } from './scenario.js';

/** With its unit (`'10s'`, `'500ms'`, `'2m'`): a bare number is refused at validation, except 0. */
type Duration = string | 0;
type Rate = string | number;

export interface ScenarioInput {
  name?: string;
  target:
    | string
    | { url: string; headers?: Record<string, string>; connections?: number }
    | { command: string | string[]; args?: string[]; env?: Record<string, string>; cwd?: string; pool?: number }
    | {
        reference: true | { transport?: 'http' | 'stdio'; stall?: string | { everyMs: number; forMs: number }; inProcess?: boolean; ignoreCancel?: boolean };
        pool?: number;
      };
  era?: 'legacy' | 'modern' | '2026-07-28' | 'detect';
  protocolVersion?: string;
  clientCapabilities?: Record<string, unknown>;
  session?: { churn?: number };
  timeout?: Duration;
  seed?: number;
  mix?: 'weighted' | 'random';
  driver?: 'auto' | 'raw';
  data?: Record<string, string | { file: string; format?: 'csv' | 'jsonl'; order?: 'sequential' | 'random' }>;
  phases: (
    | { name?: string; open: { rate?: Rate; from?: Rate; to?: Rate; duration: Duration; maxInFlight?: number } }
    | { name?: string; closed: { vus: number; iterations?: number; duration?: Duration; thinkTime?: Duration | { min: Duration; max: Duration }; rate?: Rate } }
    | { name?: string; replay: { speed?: number | `${number}x`; maxInFlight?: number } }
  )[];
  steps?: Record<string, unknown>[];
  thresholds?: string[] | Record<string, string | string[]>;
  from?: string | { file: string; recording?: number };
  iteration?: (ctx: IterationContext) => Promise<void>;
}

export function defineScenario(s: ScenarioInput): ScenarioInput {
  return s;
}
