/**
 * Scenario pre-flight: before any load, the tools (and cancel probes), prompts and resources the
 * scenario's steps name are checked against the target's `tools/list`, `prompts/list`,
 * `resources/list` and `resources/templates/list`. A name the server lacks would make every call
 * fail (and a run without thresholds exit 0); it stops the run instead, naming the nearest real
 * one. Names built from templates cannot be known before a run and are skipped.
 */
import { McptapError } from '../../errors.js';
import type { StepSpec } from '../scenario/scenario.js';
import { nearest } from '../../data-file/validation.js';

/** The lists a server can be asked for, by what they hold. */
export type NameList = 'tools' | 'prompts' | 'resources' | 'resourceTemplates';

/** What the steps name, by kind: literal names only, in step order, once each. */
export interface NamedInScenario {
  tools: string[];
  prompts: string[];
  resources: string[];
}

/** The step's literal name (tool, prompt) or URI (resource), from its shorthand or its static params. */
function literalOf(s: StepSpec, field: 'name' | 'uri'): string | undefined {
  let v: unknown = s.target;
  if (v === undefined && s.params.isStatic)
    v = (s.params.render({ vu: 0, iteration: 0, phase: '', rows: {}, random: () => 0 }) as Record<string, unknown> | undefined)?.[field];
  return typeof v === 'string' && !v.includes('{{') ? v : undefined;
}

export function namedInScenario(steps: readonly StepSpec[]): NamedInScenario {
  const of = (method: string, field: 'name' | 'uri') => steps.flatMap((s) => (s.method === method ? [literalOf(s, field)].filter((n) => n !== undefined) : []));
  const probes = steps.flatMap((s) => (s.cancel?.probe && !s.cancel.probe.includes('{{') ? [s.cancel.probe] : []));
  return {
    tools: [...new Set([...of('tools/call', 'name'), ...probes])],
    prompts: [...new Set(of('prompts/get', 'name'))],
    resources: [...new Set(of('resources/read', 'uri'))],
  };
}

/** The lists to ask the target for, given what the scenario names. */
export function listsNeeded(n: NamedInScenario): NameList[] {
  return [
    ...(n.tools.length ? (['tools'] as const) : []),
    ...(n.prompts.length ? (['prompts'] as const) : []),
    ...(n.resources.length ? (['resources', 'resourceTemplates'] as const) : []),
  ];
}

/**
 * Throws MCPTAP_LOAD_UNKNOWN_TOOL, MCPTAP_LOAD_UNKNOWN_PROMPT or MCPTAP_LOAD_UNKNOWN_RESOURCE (exit 4) for the first kind
 * with a missing name. A list the server did not give (undefined) is not checked.
 */
export function checkNamed(named: NamedInScenario, listed: Partial<Record<NameList, string[]>>, target: string): void {
  if (listed.tools) checkTools(named.tools, listed.tools, target);
  if (listed.prompts) checkList('prompt', 'MCPTAP_LOAD_UNKNOWN_PROMPT', named.prompts, listed.prompts, target);
  if (listed.resources) {
    const templates = (listed.resourceTemplates ?? []).map(templatePattern);
    const missing = named.resources.filter((u) => !templates.some((t) => t.test(u)));
    const hint = templates.length ? ` and none of its ${templates.length} resource template(s) matches it` : '';
    checkList('resource', 'MCPTAP_LOAD_UNKNOWN_RESOURCE', missing, listed.resources, target, hint);
  }
}

/** Throws MCPTAP_LOAD_UNKNOWN_TOOL (exit 4) naming the first missing tool and the nearest listed one. */
export function checkTools(named: readonly string[], listed: readonly string[], target: string): void {
  checkList('tool', 'MCPTAP_LOAD_UNKNOWN_TOOL', named, listed, target);
}

function checkList(
  kind: 'tool' | 'prompt' | 'resource',
  code: 'MCPTAP_LOAD_UNKNOWN_TOOL' | 'MCPTAP_LOAD_UNKNOWN_PROMPT' | 'MCPTAP_LOAD_UNKNOWN_RESOURCE',
  named: readonly string[],
  listed: readonly string[],
  target: string,
  hint = '',
): void {
  const have = new Set(listed);
  const missing = named.filter((n) => !have.has(n));
  if (missing.length === 0) return;
  const first = missing[0]!;
  const near = nearest(first, listed, Math.max(2, Math.ceil(first.length / 2)));
  const others =
    missing.length > 1
      ? ` (nor ${missing
          .slice(1)
          .map((m) => `"${m}"`)
          .join(', ')})`
      : '';
  const list = listed.length <= 12 ? listed.join(', ') : `${listed.slice(0, 12).join(', ')}, … (${listed.length})`;
  const verb = kind === 'resource' ? 'reads resource' : kind === 'prompt' ? 'gets prompt' : 'calls tool';
  const plural = kind === 'resource' ? 'resources' : `${kind}s`;
  throw new McptapError(
    code,
    `the scenario ${verb} "${first}"${others}, but ${target} has no such ${kind}${hint}${near ? `; the nearest is "${near}"` : ''}. ` +
      `Its ${plural}: ${list || '(none)'}. Nothing was sent: fix the step's ${kind === 'resource' ? 'uri' : `${kind} name`} (or set preflight: false).`,
  );
}

/** An RFC 6570 URI template as a matcher: each `{...}` expression stands for any text. */
function templatePattern(uriTemplate: string): RegExp {
  const parts = uriTemplate.split(/\{[^}]*\}/).map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('.*')}$`);
}
