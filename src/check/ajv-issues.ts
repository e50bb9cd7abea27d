/**
 * Ajv's errors made readable: an `anyOf` over content types yields a failure per branch; keep the
 * branch the value meant (its discriminating `const` matched) and drop the others, then one issue per
 * distinct place, each with the schema rule as a pointer into the schema document.
 */
import type { ErrorObject } from 'ajv';

export interface SchemaIssue {
  /** JSON Pointer into the validated message (from its root). */
  pointer: string;
  /** JSON Pointer into the schema document: `#/$defs/Tool/properties/name/type`. */
  schemaRule: string;
  message: string;
  expected?: string;
  found?: string;
}

/** Where each schema object sits in its document (Ajv's errors point at objects, not at paths). */
export function schemaPointers(doc: unknown): WeakMap<object, string> {
  const map = new WeakMap<object, string>();
  const walk = (node: unknown, at: string): void => {
    if (node === null || typeof node !== 'object' || map.has(node)) return;
    map.set(node, at);
    for (const [k, v] of Object.entries(node)) walk(v, `${at}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`);
  };
  walk(doc, '#');
  return map;
}

/** The definition a schema pointer is inside (`#/$defs/Tool/...` -> `#/$defs/Tool`). */
function ownerDef(rule: string): string {
  return /^#\/(?:\$defs|definitions)\/[^/]+/.exec(rule)?.[0] ?? rule;
}

/** Readable issues from Ajv errors (run with `verbose: true`), `prefix` prepended to every pointer; at most `max`. */
export function readableIssues(errors: readonly ErrorObject[], pointers: WeakMap<object, string>, prefix = '', max = 5): SchemaIssue[] {
  const ruleOf = (e: ErrorObject) => `${pointers.get(e.parentSchema as object) ?? '#'}/${e.keyword}`;
  // A branch whose discriminator (`type: {const}`) failed was not the one meant: drop all of its errors.
  // Only inside a union (an anyOf/oneOf failed at that object): a lone definition's const failure is the issue itself.
  const unions = new Set(errors.filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf').map((e) => e.instancePath));
  const rejected = new Set<string>();
  for (const e of errors) {
    const base = e.instancePath.replace(/\/[^/]+$/, '');
    if (e.keyword === 'const' && base !== e.instancePath && unions.has(base)) rejected.add(`${ownerDef(ruleOf(e))}@${base}`);
  }
  const kept = errors.filter((e) => {
    for (const r of rejected) {
      const [def, base] = r.split('@') as [string, string];
      if (ownerDef(ruleOf(e)) === def && (e.instancePath === base || e.instancePath.startsWith(`${base}/`))) return false;
    }
    return true;
  });
  // An anyOf/oneOf summary says nothing its kept branch errors do not, unless no branch is left.
  const specific = kept.filter(
    (e) =>
      !((e.keyword === 'anyOf' || e.keyword === 'oneOf') && kept.some((o) => o !== e && o.instancePath.startsWith(e.instancePath) && o.keyword !== e.keyword)),
  );
  const out = new Map<string, SchemaIssue>();
  // Never report a failed validation without an issue: fall back to Ajv's own list.
  for (const e of specific.length > 0 ? specific : errors) {
    const issue = toIssue(e, ruleOf(e), prefix);
    const key = `${issue.pointer} ${issue.schemaRule}`;
    if (!out.has(key)) out.set(key, issue);
    if (out.size >= max) break;
  }
  return [...out.values()];
}

function toIssue(e: ErrorObject, schemaRule: string, prefix: string): SchemaIssue {
  const p = e.params as Record<string, unknown>;
  const at = prefix + e.instancePath;
  switch (e.keyword) {
    case 'required':
      return {
        pointer: `${at}/${escape(String(p.missingProperty))}`,
        schemaRule,
        message: `required member "${String(p.missingProperty)}" is missing`,
        expected: 'present',
        found: 'absent',
      };
    case 'type':
      return { pointer: at, schemaRule, message: `must be ${String(p.type)}`, expected: String(p.type), found: `${jsonType(e.data)} ${short(e.data)}` };
    case 'const':
      return { pointer: at, schemaRule, message: `must be ${short(p.allowedValue)}`, expected: short(p.allowedValue), found: short(e.data) };
    case 'enum':
      return { pointer: at, schemaRule, message: 'must be one of the allowed values', expected: short(p.allowedValues), found: short(e.data) };
    case 'additionalProperties':
      return {
        pointer: `${at}/${escape(String(p.additionalProperty))}`,
        schemaRule,
        message: `member "${String(p.additionalProperty)}" is not allowed here`,
        found: 'present',
      };
    case 'anyOf':
    case 'oneOf':
      return { pointer: at, schemaRule, message: 'matches none of the allowed shapes', found: short(e.data) };
    default:
      return { pointer: at, schemaRule, message: e.message ?? e.keyword, found: short(e.data) };
  }
}

function escape(seg: string): string {
  return seg.replace(/~/g, '~0').replace(/\//g, '~1');
}

function jsonType(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v;
}

function short(v: unknown): string {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}
