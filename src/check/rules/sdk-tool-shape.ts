/**
 * The shape the MCP TypeScript SDK (1.x, `ListToolsResultSchema` in its types.js) requires of a
 * `tools/list` result. Its client parses the whole result with that zod schema, so one value of the
 * wrong type (`"readOnlyHint": "true"`, a numeric description, a missing inputSchema) fails the
 * request and the client sees no tool at all; the Go SDK fails the same way decoding into its
 * typed fields. Mirrored here member by member (test/check/surface-sdk.test.ts holds the two
 * together) so that a finding can name the pointer and the expected type.
 */
import { isObject } from '../surface-snapshot.js';
import { escapePointer } from './surface-text.js';

export interface ShapeProblem {
  /** JSON Pointer from the `result`'s root, e.g. `/tools/3/annotations/readOnlyHint`. */
  pointer: string;
  expected: string;
  found: string;
}

/** A value as a finding shows it: short JSON and its JSON type. */
export function describeValue(v: unknown): string {
  if (v === undefined) return 'nothing (missing)';
  const type = v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
  const json = JSON.stringify(v) ?? String(v);
  return `${json.length > 40 ? `${json.slice(0, 37)}...` : json} (${type})`;
}

type Check = (v: unknown) => boolean;
const str: Check = (v) => typeof v === 'string';
const bool: Check = (v) => typeof v === 'boolean';
const strArray: Check = (v) => Array.isArray(v) && v.every(str);

/** Each optional member: its check and how the expectation is said. */
function optional(problems: ShapeProblem[], obj: Record<string, unknown>, at: string, members: Record<string, [Check, string]>): void {
  for (const [key, [check, expected]] of Object.entries(members)) {
    if (obj[key] !== undefined && !check(obj[key])) problems.push({ pointer: `${at}/${key}`, expected, found: describeValue(obj[key]) });
  }
}

/** An object member; returns it when it is one (the caller checks inside), else records the problem. */
function object(problems: ShapeProblem[], v: unknown, pointer: string, required: boolean): Record<string, unknown> | undefined {
  if (isObject(v)) return v;
  if (v !== undefined || required) problems.push({ pointer, expected: 'an object', found: describeValue(v) });
  return undefined;
}

/** `inputSchema` / `outputSchema`: an object with `type: "object"`, object-valued `properties`, string `required`. */
function schemaShape(problems: ShapeProblem[], v: unknown, at: string, required: boolean): void {
  const schema = object(problems, v, at, required);
  if (!schema) return;
  if (schema.type !== 'object') problems.push({ pointer: `${at}/type`, expected: '"object" (the root of a tool schema)', found: describeValue(schema.type) });
  const props = object(problems, schema.properties, `${at}/properties`, false);
  for (const [name, p] of Object.entries(props ?? {})) {
    if (typeof p !== 'object' || p === null)
      problems.push({ pointer: `${at}/properties/${escapePointer(name)}`, expected: 'a schema object', found: describeValue(p) });
  }
  optional(problems, schema, at, { required: [strArray, 'an array of strings'] });
}

/** What the SDK rejects in one tool definition (pointers from the tool's root). */
export function toolShapeProblems(tool: unknown): ShapeProblem[] {
  const problems: ShapeProblem[] = [];
  const t = object(problems, tool, '', true);
  if (!t) return problems;
  if (typeof t.name !== 'string') problems.push({ pointer: '/name', expected: 'a string', found: describeValue(t.name) });
  optional(problems, t, '', { title: [str, 'a string'], description: [str, 'a string'] });
  schemaShape(problems, t.inputSchema, '/inputSchema', true);
  schemaShape(problems, t.outputSchema, '/outputSchema', false);
  const annotations = object(problems, t.annotations, '/annotations', false);
  if (annotations) {
    optional(problems, annotations, '/annotations', {
      title: [str, 'a string'],
      readOnlyHint: [bool, 'a boolean'],
      destructiveHint: [bool, 'a boolean'],
      idempotentHint: [bool, 'a boolean'],
      openWorldHint: [bool, 'a boolean'],
    });
  }
  const execution = object(problems, t.execution, '/execution', false);
  if (execution)
    optional(problems, execution, '/execution', {
      taskSupport: [(v) => v === 'required' || v === 'optional' || v === 'forbidden', '"required", "optional" or "forbidden"'],
    });
  object(problems, t._meta, '/_meta', false);
  if (t.icons !== undefined && !Array.isArray(t.icons)) problems.push({ pointer: '/icons', expected: 'an array of icons', found: describeValue(t.icons) });
  (Array.isArray(t.icons) ? t.icons : []).forEach((icon, i) => {
    const at = `/icons/${i}`;
    const o = object(problems, icon, at, true);
    if (!o) return;
    if (typeof o.src !== 'string') problems.push({ pointer: `${at}/src`, expected: 'a string', found: describeValue(o.src) });
    optional(problems, o, at, {
      mimeType: [str, 'a string'],
      sizes: [strArray, 'an array of strings'],
      theme: [(v) => v === 'light' || v === 'dark', '"light" or "dark"'],
    });
  });
  return problems;
}

/** What the SDK rejects in the list itself, besides its tools: `tools` an array, `nextCursor` a string. */
export function listShapeProblems(result: Record<string, unknown>): ShapeProblem[] {
  const problems: ShapeProblem[] = [];
  if (!Array.isArray(result.tools)) problems.push({ pointer: '/tools', expected: 'an array of tools', found: describeValue(result.tools) });
  optional(problems, result, '', { nextCursor: [str, 'a string'] });
  object(problems, result._meta, '/_meta', false);
  return problems;
}
