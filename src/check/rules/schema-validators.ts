/**
 * JSON Schemas that tools declare (`inputSchema`, `outputSchema`), compiled with Ajv once per
 * distinct schema text and turned into located violations: a JSON Pointer into the checked value,
 * the failing schema rule, what was expected and what was found.
 */
import { createRequire } from 'node:module';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { expectedOf } from '../ajv-issues.js';
import { formatPointer, parsePointer } from '../../data-file/json-pointer.js';

// Ajv and ajv-formats are CommonJS; `require` gives their constructors without default-import games.
const require = createRequire(import.meta.url);
type AjvClass = new (opts: object) => { compile(schema: object | boolean): ValidateFunction };
const AjvDraft07 = (require('ajv') as { default: AjvClass }).default;
const Ajv2019 = (require('ajv/dist/2019') as { default: AjvClass }).default;
const Ajv2020 = (require('ajv/dist/2020') as { default: AjvClass }).default;
const addFormats = (require('ajv-formats') as { default: (ajv: unknown) => void }).default;

export type Compiled = { ok: true; validate: ValidateFunction; dialect: string } | { ok: false; reason: string };

export interface Violation {
  /** Pointer into the validated value (prefix it with where the value sits in its message). */
  pointer: string;
  /** The failing keyword as a pointer into the schema, e.g. `#/properties/limit/type`. */
  schemaRule: string;
  /** The failing Ajv keyword (`type`, `additionalProperties`, ...). */
  keyword: string;
  expected: string;
  found: string;
}

const DIALECTS: Record<string, AjvClass> = { 'draft-07': AjvDraft07, '2019-09': Ajv2019, '2020-12': Ajv2020 };

/** The dialect a schema's `$schema` names; absent or unknown means 2020-12 (the MCP 2025-11-25 default). */
function dialectOf(schema: unknown): string {
  const uri = schema !== null && typeof schema === 'object' ? (schema as { $schema?: unknown }).$schema : undefined;
  if (typeof uri !== 'string') return '2020-12';
  if (/draft-0[3-7]/.test(uri)) return 'draft-07';
  if (uri.includes('2019-09')) return '2019-09';
  return '2020-12';
}

function compileWith(dialect: string, schema: object | boolean): Compiled {
  // A fresh Ajv per schema: two tools may reuse one `$id`, and dropping the validator frees it all.
  const ajv = new DIALECTS[dialect]!({ strict: false, allErrors: true, validateSchema: false, logger: false });
  addFormats(ajv);
  try {
    return { ok: true, validate: ajv.compile(schema), dialect };
  } catch (err) {
    return { ok: false, reason: (err as Error).message };
  }
}

/** A bounded cache of compiled schemas keyed by their JSON text (least recently used goes first). */
export class SchemaValidators {
  private readonly cache = new Map<string, Compiled>();
  /** The same schema object (a declaration judging call after call) skips even the JSON text. */
  private readonly byObject = new WeakMap<object, Compiled>();

  constructor(private readonly maxEntries = 512) {}

  compile(schema: unknown): Compiled {
    if (schema === null || (typeof schema !== 'object' && typeof schema !== 'boolean') || Array.isArray(schema)) {
      return { ok: false, reason: `a schema is an object or a boolean, not ${schema === null ? 'null' : Array.isArray(schema) ? 'an array' : typeof schema}` };
    }
    if (typeof schema === 'object') {
      let compiled = this.byObject.get(schema);
      if (!compiled) this.byObject.set(schema, (compiled = this.compileText(schema)));
      return compiled;
    }
    return this.compileText(schema);
  }

  private compileText(schema: object | boolean): Compiled {
    const key = JSON.stringify(schema);
    const hit = this.cache.get(key);
    if (hit) {
      this.cache.delete(key);
      this.cache.set(key, hit);
      return hit;
    }
    // Most servers emit draft-07-style schemas without `$schema`: if the named dialect cannot compile
    // it, the other one may (dialect portability is the tool-surface rules' business, not ours).
    const dialect = dialectOf(schema);
    let compiled = compileWith(dialect, structuredClone(schema));
    if (!compiled.ok) {
      const other = compileWith(dialect === 'draft-07' ? '2020-12' : 'draft-07', structuredClone(schema));
      if (other.ok) compiled = other;
    }
    this.cache.set(key, compiled);
    if (this.cache.size > this.maxEntries) this.cache.delete(this.cache.keys().next().value!);
    return compiled;
  }
}

/** Runs a compiled schema over `value`: one violation per failing place, at most `max`. */
export function violations(validate: ValidateFunction, value: unknown, max = 10): Violation[] {
  if (validate(value)) return [];
  const errors = validate.errors ?? [];
  // Errors inside the branches of a failing anyOf/oneOf say the same thing again, less clearly.
  const combinators = errors.filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf').map((e) => e.schemaPath + '/');
  const out: Violation[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    if (combinators.some((c) => e.schemaPath.startsWith(c))) continue;
    const v = describe(e, value);
    if (seen.has(v.pointer)) continue;
    seen.add(v.pointer);
    out.push(v);
    if (out.length >= max) break;
  }
  return out;
}

function describe(e: ErrorObject, root: unknown): Violation {
  const p = e.params as Record<string, unknown>;
  const at = (pointer: string, expected: string): Violation => ({
    pointer,
    schemaRule: e.schemaPath,
    keyword: e.keyword,
    expected,
    found: shown(valueAt(root, pointer)),
  });
  switch (e.keyword) {
    case 'required':
      return at(e.instancePath + formatPointer([String(p.missingProperty)]), `required member "${String(p.missingProperty)}"`);
    case 'additionalProperties':
      return at(e.instancePath + formatPointer([String(p.additionalProperty)]), `no member "${String(p.additionalProperty)}" (additionalProperties)`);
    case 'unevaluatedProperties':
      return at(e.instancePath + formatPointer([String(p.unevaluatedProperty)]), `no member "${String(p.unevaluatedProperty)}" (unevaluatedProperties)`);
    case 'enum':
      return at(e.instancePath, `one of ${clip(JSON.stringify(p.allowedValues))}`);
    case 'const':
      return at(e.instancePath, clip(JSON.stringify(p.allowedValue)));
    case 'type':
      return at(e.instancePath, `type ${Array.isArray(p.type) ? p.type.join(' or ') : String(p.type)}`);
    case 'format':
      return at(e.instancePath, `${FORMAT_WORDS[String(p.format)] ?? `a "${String(p.format)}" value`} (format)`);
    default:
      return at(e.instancePath, expectedOf(e)); // ">= 0", "at most 3 items"
  }
}

/** A format in words, as a finding says it: `expected a date-time string (format), found "yesterday"`. */
const FORMAT_WORDS: Record<string, string> = {
  date: 'a date string',
  time: 'a time string',
  'date-time': 'a date-time string',
  duration: 'a duration string',
  uri: 'a URI',
  'uri-reference': 'a URI reference',
  'uri-template': 'a URI template',
  url: 'a URL',
  email: 'an email address',
  hostname: 'a hostname',
  ipv4: 'an IPv4 address',
  ipv6: 'an IPv6 address',
  uuid: 'a UUID',
  regex: 'a regular expression',
  'json-pointer': 'a JSON Pointer',
};

const ABSENT = Symbol('absent');

/** The value at a pointer, or ABSENT. */
export function valueAt(root: unknown, pointer: string): unknown {
  let node: unknown = root;
  for (const seg of parsePointer(pointer)) {
    if (node === null || typeof node !== 'object' || !Object.prototype.hasOwnProperty.call(node, seg)) return ABSENT;
    node = (node as Record<string, unknown>)[seg];
  }
  return node;
}

/** A value as a finding shows it: compact JSON, clipped; `absent` for a missing member. */
export function shown(value: unknown): string {
  return value === ABSENT ? 'absent' : clip(JSON.stringify(value) ?? String(value));
}

function clip(text: string, max = 120): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
