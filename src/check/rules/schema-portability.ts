/**
 * Tool schemas that valid JSON Schema allows but many clients and model APIs do not take: `$ref`
 * (function-calling APIs and several clients do not resolve references), a root `oneOf`/`anyOf`/
 * `allOf` (model APIs require a plain object at the root), and a `$schema` dialect other than the
 * ones validators and the MCP spec know (2020-12 is the spec's default; draft-07 and 2019-09 are
 * still read by Ajv and the SDKs).
 */
import { isObject } from '../surface-snapshot.js';
import { escapePointer } from './surface-text.js';

export const KNOWN_DIALECTS: ReadonlySet<string> = new Set(
  ['json-schema.org/draft/2020-12/schema', 'json-schema.org/draft/2019-09/schema', 'json-schema.org/draft-07/schema'].flatMap((u) =>
    ['http://', 'https://'].flatMap((p) => [`${p}${u}`, `${p}${u}#`]),
  ),
);

/** Keywords whose value is a map of subschemas, one subschema, or a list of subschemas. */
const MAP_KEYWORDS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
const ONE_KEYWORDS = new Set([
  'items',
  'not',
  'if',
  'then',
  'else',
  'additionalProperties',
  'contains',
  'propertyNames',
  'unevaluatedProperties',
  'unevaluatedItems',
  'additionalItems',
]);
const LIST_KEYWORDS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items']);

/** Pointers (from the schema's root) of every `$ref` keyword, walking subschemas only (a property named `$ref` is not one). */
export function refPointers(schema: unknown, at = ''): string[] {
  if (!isObject(schema)) return [];
  const found = typeof schema.$ref === 'string' ? [`${at}/$ref`] : [];
  for (const [k, v] of Object.entries(schema)) {
    const here = `${at}/${escapePointer(k)}`;
    if (MAP_KEYWORDS.has(k) && isObject(v)) for (const [name, sub] of Object.entries(v)) found.push(...refPointers(sub, `${here}/${escapePointer(name)}`));
    else if (LIST_KEYWORDS.has(k) && Array.isArray(v)) v.forEach((sub, i) => found.push(...refPointers(sub, `${here}/${i}`)));
    else if (ONE_KEYWORDS.has(k)) found.push(...refPointers(v, here));
  }
  return found;
}

export interface PortabilityProblem {
  rule: 'ref' | 'root-combinator' | 'dialect';
  /** From the schema's root. */
  pointer: string;
  message: string;
}

/** What makes a tool's input or output schema unportable. */
export function portabilityProblems(schema: unknown): PortabilityProblem[] {
  if (!isObject(schema)) return [];
  const problems: PortabilityProblem[] = [];
  const refs = refPointers(schema);
  if (refs.length) {
    const more = refs.length > 1 ? ` (and ${refs.length - 1} more)` : '';
    problems.push({ rule: 'ref', pointer: refs[0]!, message: `uses $ref${more}; inline the referenced schema` });
  }
  for (const k of ['oneOf', 'anyOf', 'allOf']) {
    if (schema[k] !== undefined)
      problems.push({ rule: 'root-combinator', pointer: `/${k}`, message: `has ${k} at its root; use one object schema with optional members` });
  }
  if (schema.$schema !== undefined && !(typeof schema.$schema === 'string' && KNOWN_DIALECTS.has(schema.$schema))) {
    problems.push({
      rule: 'dialect',
      pointer: '/$schema',
      message: `declares the dialect ${JSON.stringify(schema.$schema)}, not 2020-12, 2019-09 or draft-07`,
    });
  }
  return problems;
}
