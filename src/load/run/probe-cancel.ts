/**
 * `mcptap probe-cancel`: a server's cancellation behaviour on one long-running tool, as a small
 * load scenario (one virtual user calling the tool a few times, each call cancelled by the era's
 * mechanism) whose cancel verdict is the answer. Pure: builds the scenario and reads the verdict.
 */
import type { CancelGroupResult } from '../results/cancel-stats.js';
import type { LoadResult } from '../results/load-result.js';
import { loadYaml } from '../scenario/scenario-loader.js';
import type { Scenario } from '../scenario/scenario.js';

export interface ProbeCancelOptions {
  tool: string;
  args?: Record<string, unknown>;
  /** Exactly one of url and command. */
  url?: string;
  command?: string[];
  /** Calls made, one after another. */
  times: number;
  /** Cancel this long after the send (`300ms`), else after `afterProgress` progress notifications. */
  after?: string;
  afterProgress: number;
  /** How long each cancelled call is watched for work going on. */
  observe: string;
  /** A tool of the server that reports its work in flight (`in-flight` on the reference server). */
  probe?: string;
  era?: 'legacy' | '2026-07-28';
  timeout: string;
}

export function probeCancelScenario(o: ProbeCancelOptions): Scenario {
  const cancel: Record<string, unknown> = o.after !== undefined ? { after: o.after } : { afterProgress: o.afterProgress };
  cancel.observe = o.observe;
  if (o.probe !== undefined) cancel.probe = o.probe;
  const doc = {
    name: `probe-cancel ${o.tool}`,
    target: o.url !== undefined ? { url: o.url } : { command: o.command![0], args: o.command!.slice(1) },
    ...(o.era ? { era: o.era } : {}),
    timeout: o.timeout,
    phases: [{ closed: { vus: 1, iterations: o.times } }],
    steps: [{ tool: o.tool, arguments: o.args ?? {}, cancel }],
  };
  // JSON is YAML: the scenario goes through the same validation as a file's.
  return loadYaml(JSON.stringify(doc), { source: 'probe-cancel', baseDir: process.cwd() });
}

/** The tool's cancel figures; `unknown` with none when no call was cancelled. */
export function probeVerdict(result: LoadResult, tool: string): { verdict: CancelGroupResult['verdict']; group?: CancelGroupResult } {
  const group = result.cancel?.[tool];
  return group ? { verdict: group.verdict, group } : { verdict: 'unknown' };
}
