/**
 * The spec's own per-type examples (2026-07-28, vendored) pass their definition; mutated copies (a
 * required member removed, a member's type changed) fail naming the member's pointer and the schema rule.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expectedOf } from '../../src/check/ajv-issues.js';
import { ProtocolSchemas } from '../../src/check/protocol-schema.js';
import { readSchema, SCHEMA_VERSIONS } from '../../src/check/schema-files.js';
import { FIXTURES } from '../helpers/paths.js';

const VERSION = '2026-07-28';
const ROOT = join(FIXTURES, 'mcp-examples', VERSION);
const schemas = new ProtocolSchemas();
const vs = schemas.get(VERSION);
const defs = readSchema(VERSION).$defs as Record<string, { required?: string[]; properties?: Record<string, { type?: unknown; const?: unknown }> }>;

interface Example {
  type: string;
  file: string;
  value: Record<string, unknown>;
}

const examples: Example[] = readdirSync(ROOT).flatMap((type) =>
  readdirSync(join(ROOT, type)).map((file) => ({ type, file, value: JSON.parse(readFileSync(join(ROOT, type, file), 'utf8')) as Record<string, unknown> })),
);

/** (example, member) pairs: a required member at the example's root, present in it. */
const requiredCases = examples.flatMap((ex) =>
  typeof ex.value === 'object' && !Array.isArray(ex.value)
    ? (defs[ex.type]?.required ?? []).filter((m) => m in ex.value).map((member) => ({ ex, member }))
    : [],
);

/** (example, member) pairs: a root member declared `type: string|boolean|object|array` (no const). */
const typedCases = examples.flatMap((ex) =>
  Object.entries(defs[ex.type]?.properties ?? {})
    .filter(([m, p]) => m in ex.value && typeof p.type === 'string' && ['string', 'boolean', 'object', 'array'].includes(p.type) && p.const === undefined)
    .map(([member, p]) => ({ ex, member, declared: p.type as string })),
);

describe('the vendored MCP schemas', () => {
  it('has every version, each compiling', () => {
    for (const v of SCHEMA_VERSIONS) expect(schemas.get(v).methodDefinition('tools/call')).toBe('CallToolRequest');
  });

  it(`passes every ${VERSION} example of the spec against its type (${examples.length} examples)`, () => {
    expect(examples.length).toBeGreaterThan(100);
    for (const ex of examples) {
      expect(vs.has(ex.type), ex.type).toBe(true);
      expect(vs.validate(ex.type, ex.value), `${ex.type}/${ex.file}`).toEqual([]);
    }
  });

  it('fails an example without a required member, naming its pointer and the required rule', () => {
    expect(requiredCases.length).toBeGreaterThan(50);
    fc.assert(
      fc.property(fc.constantFrom(...requiredCases), ({ ex, member }) => {
        const { [member]: _gone, ...mutated } = ex.value;
        const issues = vs.validate(ex.type, mutated);
        expect(issues, `${ex.type}/${ex.file} without ${member}`).toContainEqual(
          expect.objectContaining({ pointer: `/${member}`, schemaRule: `#/$defs/${ex.type}/required` }),
        );
      }),
      { numRuns: 200 },
    );
  });

  it('fails an example with a member of the wrong type, naming its pointer and the type rule', () => {
    expect(typedCases.length).toBeGreaterThan(20);
    fc.assert(
      fc.property(fc.constantFrom(...typedCases), fc.constantFrom(42, null), ({ ex, member, declared }, wrong) => {
        const issues = vs.validate(ex.type, { ...ex.value, [member]: wrong });
        expect(issues, `${ex.type}/${ex.file} with ${member}: ${wrong}`).toContainEqual(
          expect.objectContaining({ pointer: `/${member}`, schemaRule: `#/$defs/${ex.type}/properties/${member}/type`, expected: declared }),
        );
      }),
      { numRuns: 200 },
    );
  });

  it.each([
    {
      name: 'keeps the branch a content block meant and drops the other branches of the union',
      method: 'tools/call',
      result: { content: [{ type: 'text', text: 1 }] },
      definition: 'CallToolResult',
      issue: {
        pointer: '/result/content/0/text',
        schemaRule: '#/definitions/TextContent/properties/text/type',
        message: 'must be string',
        expected: 'string',
        found: 'integer 1',
      },
    },
    {
      name: 'a text content with a relative uri is one issue, on the text branch, worded as a URI',
      method: 'resources/read',
      result: { contents: [{ uri: 'users/7', mimeType: 'text/plain', text: 'Ada' }] },
      definition: 'ReadResourceResult',
      issue: {
        pointer: '/result/contents/0/uri',
        schemaRule: '#/definitions/TextResourceContents/properties/uri/format',
        message: 'must be a URI (format uri)',
        expected: 'a URI (format uri)',
        found: '"users/7"',
      },
    },
  ])('$name', ({ method, result, definition, issue }) => {
    const v = schemas.get('2025-06-18');
    const checked = v.validateMessage('result', method, { jsonrpc: '2.0', id: 1, result });
    expect(checked.definition).toBe(definition);
    expect(checked.issues).toEqual([issue]);
  });

  it('words limits and null plainly', () => {
    const v = schemas.get('2025-06-18');
    expect(v.validate('Tool', { name: null, inputSchema: { type: 'object' } })).toContainEqual(expect.objectContaining({ pointer: '/name', found: 'null' }));
    const err = (keyword: string, params: object) => ({ keyword, params, instancePath: '', schemaPath: '', message: 'must NOT have fewer than 1 characters' });
    expect(expectedOf(err('minLength', { limit: 1 }))).toBe('at least 1 character');
    expect(expectedOf(err('exclusiveMinimum', { comparison: '>', limit: 0 }))).toBe('> 0');
    expect(expectedOf(err('format', { format: 'uri' }))).toBe('a URI (format uri)');
  });

  it('a single mutation of an example is exactly one issue', () => {
    fc.assert(
      fc.property(fc.constantFrom(...typedCases), fc.constantFrom(42, null), ({ ex, member }, wrong) => {
        expect(vs.validate(ex.type, { ...ex.value, [member]: wrong }), `${ex.type}/${ex.file} with ${member}: ${wrong}`).toHaveLength(1);
      }),
      { numRuns: 200 },
    );
    fc.assert(
      fc.property(fc.constantFrom(...requiredCases), ({ ex, member }) => {
        const { [member]: _gone, ...mutated } = ex.value;
        expect(vs.validate(ex.type, mutated), `${ex.type}/${ex.file} without ${member}`).toHaveLength(1);
      }),
      { numRuns: 200 },
    );
  });

  it('picks the definition by method and role: requests, notifications, results, errors', () => {
    const v = schemas.get('2025-06-18');
    const msg = { jsonrpc: '2.0', id: 1, result: {} };
    expect(v.definitionFor('request', 'tools/call', {})).toBe('CallToolRequest');
    expect(v.definitionFor('notification', 'notifications/progress', {})).toBe('ProgressNotification');
    expect(v.definitionFor('result', 'tools/list', msg)).toBe('ListToolsResult');
    expect(v.definitionFor('result', 'ping', msg)).toBe('EmptyResult');
    expect(v.definitionFor('error', 'tools/call', {})).toBe('JSONRPCError');
    expect(schemas.get('2025-11-25').definitionFor('error', 'tools/call', {})).toBe('JSONRPCErrorResponse');
    expect(v.definitionFor('request', 'x/custom', {})).toBeUndefined();
  });
});
