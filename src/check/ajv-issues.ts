/**
 * Ajv's errors made readable: an `anyOf` over content types yields a failure per branch; keep the
 * branch the value meant (its discriminating `const` matched, its required members present, fewest
 * errors) and drop the others, then one issue per distinct place, with its schema rule as a pointer.
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
  // Of each failed union, keep the errors of the one branch the value meant; drop the other branches'.
  const dropped = new Set<ErrorObject>();
  for (const u of errors) {
    if ((u.keyword !== 'anyOf' && u.keyword !== 'oneOf') || !Array.isArray(u.schema)) continue;
    const branches = (u.schema as unknown[]).map((b) => branchErrors(errors, u.instancePath, branchRoot(b, pointers), ruleOf));
    if (branches.every((b) => b.length === 0)) continue;
    const meant = branches.reduce((best, b) => (score(b, u.instancePath) < score(best, u.instancePath) ? b : best));
    for (const b of branches) if (b !== meant) for (const e of b) if (!meant.includes(e)) dropped.add(e);
    if (meant.length > 0) dropped.add(u); // its branch's errors say more than "matches none"
  }
  const kept = errors.filter((e) => !dropped.has(e));
  const out = new Map<string, SchemaIssue>();
  // Never report a failed validation without an issue: fall back to Ajv's own list.
  for (const e of kept.length > 0 ? kept : errors) {
    const issue = toIssue(e, ruleOf(e), prefix);
    // One issue per place: a wrong type also fails its enum; the first (Ajv checks type first) says it.
    if (!out.has(issue.pointer)) out.set(issue.pointer, issue);
    if (out.size >= max) break;
  }
  return [...out.values()];
}

/** Where a union branch's errors point in the schema: its `$ref` definition, or the branch itself. */
function branchRoot(branch: unknown, pointers: WeakMap<object, string>): string | undefined {
  if (branch === null || typeof branch !== 'object') return undefined;
  const ref = (branch as { $ref?: unknown }).$ref;
  if (typeof ref === 'string' && ref.startsWith('#/')) return ownerDef(ref);
  return pointers.get(branch);
}

function branchErrors(errors: readonly ErrorObject[], at: string, root: string | undefined, ruleOf: (e: ErrorObject) => string): ErrorObject[] {
  if (root === undefined) return [];
  return errors.filter((e) => {
    const rule = ruleOf(e);
    return (e.instancePath === at || e.instancePath.startsWith(`${at}/`)) && (rule === root || rule.startsWith(`${root}/`));
  });
}

/** Lower is likelier meant: a failed discriminator (`const` of a member), then missing required members, then error count. */
function score(errs: readonly ErrorObject[], at: string): number {
  const direct = (e: ErrorObject) => e.instancePath.replace(/\/[^/]+$/, '') === at && e.instancePath !== at;
  const consts = errs.filter((e) => e.keyword === 'const' && direct(e)).length;
  const required = errs.filter((e) => e.keyword === 'required' && e.instancePath === at).length;
  return consts * 1_000_000 + required * 1_000 + errs.length;
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
      return { pointer: at, schemaRule, message: `must be ${String(p.type)}`, expected: String(p.type), found: typed(e.data) };
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
    default: {
      const expected = expectedOf(e);
      return { pointer: at, schemaRule, message: `must be ${expected}`, expected, found: short(e.data) };
    }
  }
}

const FORMATS: Record<string, string> = { uri: 'a URI', 'uri-reference': 'a URI reference', 'date-time': 'a date-time', email: 'an email address' };

/** What a keyword expected, in words: `at least 1 character`, `> 0`, `a URI (format uri)`. */
export function expectedOf(e: ErrorObject): string {
  const p = e.params as Record<string, unknown>;
  const n = Number(p.limit);
  const plural = (unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`;
  switch (e.keyword) {
    case 'format':
      return `${FORMATS[String(p.format)] ?? 'a value'} (format ${String(p.format)})`;
    case 'minLength':
      return `at least ${plural('character')}`;
    case 'maxLength':
      return `at most ${plural('character')}`;
    case 'minItems':
      return `at least ${plural('item')}`;
    case 'maxItems':
      return `at most ${plural('item')}`;
    case 'minProperties':
      return `at least ${plural('member')}`;
    case 'maxProperties':
      return `at most ${plural('member')}`;
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return `${String(p.comparison)} ${String(p.limit)}`;
    case 'pattern':
      return `a string matching ${String(p.pattern)}`;
    case 'multipleOf':
      return `a multiple of ${String(p.multipleOf)}`;
    case 'uniqueItems':
      return 'unique items';
    default:
      return e.message?.replace(/^must /, '') ?? `to satisfy ${e.keyword}`;
  }
}

/** A value with its JSON type, once: `null`, `integer 5`, `string "x"`. */
function typed(v: unknown): string {
  return v === null ? 'null' : `${jsonType(v)} ${short(v)}`;
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
