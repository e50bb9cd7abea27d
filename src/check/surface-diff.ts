/**
 * Drift: how a server's surface moved from a baseline (a committed snapshot, an earlier recording)
 * to the build under test. Pure: two surfaces in, findings out. Pointers in drift findings are JSON
 * Pointers into the item's definition (`/annotations/readOnlyHint`), not into a message.
 */
import { rulesOf } from './rules/rule-info.js';
import type { Finding, RuleInfo } from './finding.js';
import { isObject, SURFACE_LISTS, type Surface, type SurfaceItem, type SurfaceKind, type SurfaceList } from './surface-snapshot.js';
import { escapePointer } from './rules/surface-text.js';
import { TOKEN_ENCODING } from './token-cost.js';

const rule = rulesOf('drift');

export const DRIFT_RULES = {
  removed: rule(
    'removed',
    'error',
    'No tool, prompt or resource disappears',
    'Clients, agent prompts and workflows that call a removed item break. Restore it, or accept the change by committing a new baseline snapshot. A rename shows as one removed and one added item ("renamed?").',
  ),
  added: rule(
    'added',
    'note',
    'New tools, prompts and resources are noted',
    'A new item reaches every client and its model: review its description, schema and annotations, then commit a new baseline.',
  ),
  descriptionChanged: rule(
    'description-changed',
    'note',
    'Descriptions and titles stay as reviewed',
    'The description is what the model reads to choose a tool; a changed one changes behaviour without a code change on the client. Review it, then commit a new baseline.',
  ),
  schemaChanged: rule(
    'schema-changed',
    'warning',
    'Input and output schemas (prompt arguments) stay compatible',
    'A new required argument, a removed property or a narrowed type breaks callers built against the old schema. The finding lists the JSON Pointers that changed.',
  ),
  annotationsChanged: rule(
    'annotations-changed',
    'note',
    'Tool annotations stay as reviewed',
    'Annotations changed without claiming less risk (a tool now marked destructive, a new title): review and commit a new baseline.',
  ),
  annotationsLoosened: rule(
    'annotations-loosened',
    'error',
    'No tool claims less risk than before',
    'A hint moved to the less risky side (readOnlyHint false->true, destructiveHint true->false, idempotentHint false->true, openWorldHint true->false; missing hints take the spec defaults), so clients may now run the tool without asking. Confirm the tool really changed; a server cannot loosen its hints silently.',
  ),
  definitionChanged: rule(
    'definition-changed',
    'note',
    'Other members of a definition stay as reviewed',
    'Icons, _meta, MIME types, resource names and the like changed. Review and commit a new baseline.',
  ),
  toolTokens: rule(
    'tool-tokens',
    'warning',
    'No tool grows past the per-tool token budget (option maxToolTokens, default 1000)',
    `A tool definition that crossed the budget since the baseline (${TOKEN_ENCODING} tokens of its JSON as sent). Shorten its description or schema.`,
    ['maxToolTokens'],
  ),
  newToolTokens: rule(
    'new-tool-tokens',
    'warning',
    'A new tool fits the new-tool token budget (option maxNewToolTokens, default 500)',
    'A new tool costs every conversation its definition; keep it short.',
    ['maxNewToolTokens'],
  ),
  totalTokenGrowth: rule(
    'total-token-growth',
    'warning',
    'The tools that were already there do not grow by more than 10% in tokens (option maxGrowth, default 0.1)',
    'Counted over the tools present in both builds, so that adding tools is judged by new-tool-tokens instead. Trim what grew.',
    ['maxGrowth'],
  ),
  notListed: rule(
    'not-listed',
    'note',
    'The recording lists what the baseline has',
    'The recording holds no answer to this list method, so its items could not be compared. Record a session that lists them.',
  ),
} as const;

export interface DriftOptions {
  /** Per-tool budget a tool must not cross (default 1000). */
  maxToolTokens?: number;
  /** Budget of a new tool (default 500). */
  maxNewToolTokens?: number;
  /** Largest growth of the shared tools' total, as a fraction (default 0.1). */
  maxGrowth?: number;
  /** Lists to compare (default all): a list the current traffic never answered is not compared. */
  lists?: ReadonlySet<SurfaceList>;
}

export interface JsonChange {
  pointer: string;
  kind: 'added' | 'removed' | 'changed';
}

/** Where two JSON values differ, as JSON Pointers from `at` (objects by member, arrays by index). */
export function jsonDiff(a: unknown, b: unknown, at = ''): JsonChange[] {
  if (Array.isArray(a) && Array.isArray(b)) {
    const out: JsonChange[] = [];
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      if (i >= a.length) out.push({ pointer: `${at}/${i}`, kind: 'added' });
      else if (i >= b.length) out.push({ pointer: `${at}/${i}`, kind: 'removed' });
      else out.push(...jsonDiff(a[i], b[i], `${at}/${i}`));
    }
    return out;
  }
  if (isObject(a) && isObject(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    return keys.flatMap((k) => {
      const here = `${at}/${escapePointer(k)}`;
      if (a[k] === undefined) return b[k] === undefined ? [] : [{ pointer: here, kind: 'added' as const }];
      if (b[k] === undefined) return [{ pointer: here, kind: 'removed' as const }];
      return jsonDiff(a[k], b[k], here);
    });
  }
  return a === b ? [] : [{ pointer: at, kind: 'changed' }];
}

/** The four risk hints: the spec's default, and the value that claims less risk. */
export const RISK_HINTS = [
  { hint: 'readOnlyHint', absent: false, safe: true },
  { hint: 'destructiveHint', absent: true, safe: false },
  { hint: 'idempotentHint', absent: false, safe: true },
  { hint: 'openWorldHint', absent: true, safe: false },
] as const;

function effectiveHint(annotations: unknown, hint: (typeof RISK_HINTS)[number]): boolean {
  const v = isObject(annotations) ? annotations[hint.hint] : undefined;
  return typeof v === 'boolean' ? v : hint.absent;
}

/**
 * The hints that moved to their less risky value. destructiveHint and idempotentHint mean something
 * only for a tool that is not read-only, so they do not count while it is read-only before and after.
 */
export function loosenedHints(before: unknown, after: unknown): { hint: string; from: boolean; to: boolean }[] {
  const readOnly = RISK_HINTS[0];
  const stillReadOnly = effectiveHint(before, readOnly) && effectiveHint(after, readOnly);
  return RISK_HINTS.filter((h) => !(stillReadOnly && (h.hint === 'destructiveHint' || h.hint === 'idempotentHint')))
    .filter((h) => effectiveHint(before, h) !== h.safe && effectiveHint(after, h) === h.safe)
    .map((h) => ({ hint: h.hint, from: !h.safe, to: h.safe }));
}

type Category = 'description' | 'schema' | 'annotations' | 'other';
function category(kind: SurfaceKind, member: string): Category {
  if (member === 'description' || member === 'title') return 'description';
  if ((kind === 'tool' && (member === 'inputSchema' || member === 'outputSchema')) || (kind === 'prompt' && member === 'arguments')) return 'schema';
  if (kind === 'tool' && member === 'annotations') return 'annotations';
  return 'other';
}

const CATEGORY_RULE: Record<Category, RuleInfo> = {
  description: DRIFT_RULES.descriptionChanged,
  schema: DRIFT_RULES.schemaChanged,
  annotations: DRIFT_RULES.annotationsChanged,
  other: DRIFT_RULES.definitionChanged,
};

const short = (v: unknown) => {
  const s = typeof v === 'string' ? v : (JSON.stringify(v) ?? 'nothing');
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
};
const said = (changes: JsonChange[]) =>
  changes
    .slice(0, 8)
    .map((c) => `${c.pointer} (${c.kind})`)
    .join(', ') + (changes.length > 8 ? `, and ${changes.length - 8} more` : '');
const sameSchema = (a: SurfaceItem, b: SurfaceItem) =>
  jsonDiff(a.definition.inputSchema ?? a.definition.arguments, b.definition.inputSchema ?? b.definition.arguments).length === 0;

/** The findings of one item present in both surfaces. */
function itemChanges(kind: SurfaceKind, before: SurfaceItem, after: SurfaceItem, make: Make): Finding[] {
  const out: Finding[] = [];
  const loosened = kind === 'tool' ? loosenedHints(before.definition.annotations, after.definition.annotations) : [];
  for (const l of loosened) {
    out.push(
      make(
        DRIFT_RULES.annotationsLoosened,
        `${l.hint} ${l.from} -> ${l.to} (claims less risk than the baseline)`,
        `/annotations/${l.hint}`,
        String(l.from),
        String(l.to),
      ),
    );
  }
  const byCategory = new Map<Category, JsonChange[]>();
  for (const change of jsonDiff(before.definition, after.definition)) {
    if (kind === 'tool' && loosened.some((l) => change.pointer === `/annotations/${l.hint}`)) continue;
    const member = unescapePointer(change.pointer.split('/')[1] ?? '');
    const cat = category(kind, member);
    byCategory.set(cat, [...(byCategory.get(cat) ?? []), change]);
  }
  for (const [cat, changes] of byCategory) {
    const first = changes[0]!.pointer;
    const member = `/${first.split('/')[1]}`;
    const [expected, found] =
      cat === 'description' ? [short(pointerGet(before.definition, first)), short(pointerGet(after.definition, first))] : [undefined, undefined];
    out.push(
      make(CATEGORY_RULE[cat], `${cat === 'other' ? 'definition' : cat} changed: ${said(changes)}`, changes.length === 1 ? first : member, expected, found),
    );
  }
  return out;
}

const unescapePointer = (part: string) => part.replace(/~1/g, '/').replace(/~0/g, '~');

function pointerGet(v: unknown, pointer: string): unknown {
  for (const part of pointer.split('/').slice(1)) {
    const key = unescapePointer(part);
    v = Array.isArray(v) ? v[Number(key)] : isObject(v) ? v[key] : undefined;
  }
  return v;
}

type Make = (info: RuleInfo, message: string, pointer?: string, expected?: string, found?: string) => Finding;

/** Every difference between two surfaces that the drift rules judge. */
export function diffSurface(baseline: Surface, current: Surface, options: DriftOptions = {}): Finding[] {
  const maxTool = options.maxToolTokens ?? 1000;
  const maxNew = options.maxNewToolTokens ?? 500;
  const maxGrowth = options.maxGrowth ?? 0.1;
  const out: Finding[] = [];
  for (const { list, kind } of SURFACE_LISTS) {
    const maker =
      (name: string): Make =>
      (info, message, pointer, expected, found) => ({
        ruleId: info.id,
        severity: info.severity,
        message: `${kind} ${name}: ${message}`,
        where: { tool: name, subject: { kind, name } },
        ...(pointer !== undefined ? { pointer } : {}),
        ...(expected !== undefined ? { expected } : {}),
        ...(found !== undefined ? { found } : {}),
      });
    if (options.lists && !options.lists.has(list)) {
      if (baseline[list].length) {
        const method = SURFACE_LISTS.find((s) => s.list === list)!.method;
        out.push({
          ruleId: DRIFT_RULES.notListed.id,
          severity: DRIFT_RULES.notListed.severity,
          message: `no ${method} answer: ${baseline[list].length} ${list} of the baseline not compared`,
          where: {},
        });
      }
      continue;
    }
    const was = new Map(baseline[list].map((i) => [i.name, i]));
    const now = new Map(current[list].map((i) => [i.name, i]));
    const removed = baseline[list].filter((i) => !now.has(i.name));
    const added = current[list].filter((i) => !was.has(i.name));
    const renames = new Map<SurfaceItem, SurfaceItem>();
    for (const r of removed) {
      const to = added.find((a) => ![...renames.values()].includes(a) && sameSchema(r, a));
      if (to && kind !== 'resource' && kind !== 'resourceTemplate') renames.set(r, to);
    }
    for (const r of removed) {
      const to = renames.get(r);
      out.push(maker(r.name)(DRIFT_RULES.removed, to ? `removed (renamed to ${to.name}? same schema)` : 'removed'));
    }
    for (const a of added) {
      const from = [...renames.entries()].find(([, to]) => to === a)?.[0];
      out.push(maker(a.name)(DRIFT_RULES.added, from ? `added (renamed from ${from.name}? same schema)` : 'added'));
      if (kind === 'tool' && a.tokens > maxNew)
        out.push(maker(a.name)(DRIFT_RULES.newToolTokens, `new tool is ${a.tokens} tokens, over ${maxNew}`, undefined, `<= ${maxNew}`, String(a.tokens)));
    }
    for (const item of current[list]) {
      const before = was.get(item.name);
      if (!before) continue;
      out.push(...itemChanges(kind, before, item, maker(item.name)));
      if (kind === 'tool' && item.tokens > maxTool && before.tokens <= maxTool) {
        out.push(
          maker(item.name)(
            DRIFT_RULES.toolTokens,
            `grew from ${before.tokens} to ${item.tokens} tokens, over ${maxTool}`,
            undefined,
            `<= ${maxTool}`,
            String(item.tokens),
          ),
        );
      }
    }
    if (kind === 'tool') {
      const shared = current.tools.filter((t) => was.has(t.name));
      const then = shared.reduce((s, t) => s + was.get(t.name)!.tokens, 0);
      const total = shared.reduce((s, t) => s + t.tokens, 0);
      if (then > 0 && total > then * (1 + maxGrowth)) {
        const pct = Math.round(((total - then) / then) * 1000) / 10;
        out.push({
          ruleId: DRIFT_RULES.totalTokenGrowth.id,
          severity: DRIFT_RULES.totalTokenGrowth.severity,
          message: `the ${shared.length} tools of the baseline grew from ${then} to ${total} tokens (+${pct}%, over +${Math.round(maxGrowth * 1000) / 10}%)`,
          where: {},
          expected: `<= ${Math.floor(then * (1 + maxGrowth))}`,
          found: String(total),
        });
      }
    }
  }
  return out;
}
