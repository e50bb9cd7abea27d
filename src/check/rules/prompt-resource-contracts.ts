/**
 * The prompt and resource contracts of tool-contracts.ts: `prompts/get` against the arguments
 * prompts/list declared required, `resources/read` against listed resources, templates and links.
 */
import type { Emit } from '../checker.js';
import type { Exchange } from '../../model/exchange.js';
import { formatPointer } from '../../data-file/json-pointer.js';
import { paramsOf, spec, verdictOf, verdictText, whereOf, type Item, type Snapshot } from './contract-exchange.js';
import { shown } from './schema-validators.js';
import { CONTRACT } from './tool-contract-rules.js';

/** `prompts/get` without a required argument its prompts/list declared. */
export function judgePrompt(ex: Exchange, snap: Snapshot, emit: Emit): void {
  const declared = snap.declared?.item.arguments;
  if (!Array.isArray(declared)) return;
  const params = paramsOf(ex.request);
  const given = (params.arguments ?? {}) as Item;
  const verdict = verdictOf(ex);
  for (const arg of declared as Item[]) {
    if (arg?.required !== true || typeof arg.name !== 'string' || given[arg.name] !== undefined) continue;
    emit({
      ruleId: CONTRACT.promptArgumentMissing,
      severity: 'warning',
      message: `prompts/get ${String(params.name)}: required argument "${arg.name}" (declared in prompts/list) is missing; ${verdictText(ex, verdict)}`,
      where: whereOf(ex, 'client', String(params.name)),
      pointer: '/params/arguments' + formatPointer([arg.name]),
      expected: `argument "${arg.name}" (required)`,
      found: 'absent',
      ...spec(ex),
    });
  }
}

/** `resources/read` of a URI nothing listed or linked offers (only where the lists are evidence). */
export function judgeRead(ex: Exchange, snap: Snapshot, emit: Emit): void {
  if (!snap.evidence) return;
  const uri = String(paramsOf(ex.request).uri);
  const verdict = verdictOf(ex);
  emit({
    ruleId: CONTRACT.resourceUnlisted,
    // A server may serve resources it does not list (resource links): then only a note.
    severity: verdict === 'accepted' ? 'note' : 'warning',
    message: `resources/read ${uri}: no listed resource, resource template or resource link matches this URI; ${verdictText(ex, verdict)}`,
    where: whereOf(ex, 'client', uri),
    pointer: '/params/uri',
    expected: 'a URI from resources/list, a match of resources/templates/list, or a linked resource',
    found: shown(uri),
    ...spec(ex),
  });
}
