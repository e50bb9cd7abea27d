/**
 * Tool contracts end to end: a raw JSON-RPC server (test/fixtures/scripted-server.mjs) breaks each
 * contract on the wire, through the built `mcptap stdio --record` CLI; the checker runs over the
 * recording's events. Each rule fires once per breach with its exchange and pointer, and stays
 * silent on the compliant twin sent in the same session.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Finding } from '../../src/check/finding.js';
import { TOOL_CONTRACT_RULES, toolContracts } from '../../src/check/rules/tool-contracts.js';
import { check, recordSession, type Step } from './tool-contracts-tap.js';

const dir = mkdtempSync(join(tmpdir(), 'mcptap-contracts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const text = (v: unknown) => ({ type: 'text', text: JSON.stringify(v) });
const object = (properties: object, required: string[] = []) => ({ type: 'object', properties, required });
const ITEMS = object({ items: { type: 'array', items: object({ id: { type: 'string' } }, ['id']) } }, ['items']);

const SCRIPT = {
  pages: {
    'tools/list': [
      {
        tools: [
          { name: 'strict_search', inputSchema: object({ query: { type: 'string' }, limit: { type: 'integer' } }, ['query']) },
          { name: 'rejecting', inputSchema: object({ n: { type: 'number' } }, ['n']) },
          { name: 'lenient', inputSchema: { ...object({ n: { type: 'number' } }), additionalProperties: false } },
          { name: 'bad_output', inputSchema: object({}), outputSchema: ITEMS },
          { name: 'good_output', inputSchema: object({}), outputSchema: ITEMS },
        ],
      },
      {
        tools: [
          { name: 'no_structured', inputSchema: object({}), outputSchema: ITEMS },
          { name: 'no_structured_error', inputSchema: object({}), outputSchema: ITEMS },
          { name: 'no_text', inputSchema: object({}) },
          { name: 'linker', inputSchema: object({}) },
          { name: 'broken_schema', inputSchema: { type: 'objekt' } },
          {
            name: 'draft07',
            inputSchema: { $schema: 'http://json-schema.org/draft-07/schema#', ...object({ t: { type: 'array', items: [{ type: 'string' }] } }) },
          },
        ],
      },
    ],
  },
  results: {
    'prompts/list': { prompts: [{ name: 'greet', arguments: [{ name: 'who', required: true }, { name: 'tone' }] }] },
    'resources/list': { resources: [{ uri: 'notes://n1', name: 'n1' }] },
    'resources/templates/list': { resourceTemplates: [{ uriTemplate: 'notes://{id}/body', name: 'body' }] },
  },
  calls: {
    rejecting: { content: [{ type: 'text', text: 'n must be a number' }], isError: true },
    lenient: { content: [{ type: 'text', text: 'ok' }] },
    bad_output: { content: [text({ items: [{ id: 7 }] })], structuredContent: { items: [{ id: 7 }] } },
    good_output: { content: [{ type: 'text', text: JSON.stringify({ items: [{ id: 'a' }] }, null, 2) }], structuredContent: { items: [{ id: 'a' }] } },
    no_structured: { content: [{ type: 'text', text: 'three items' }] },
    no_structured_error: { content: [{ type: 'text', text: 'failed' }], isError: true },
    no_text: { content: [{ type: 'text', text: 'see structured' }], structuredContent: { ok: true } },
    hidden: { content: [{ type: 'text', text: 'secret tool ran' }] },
    linker: { content: [{ type: 'resource_link', uri: 'notes://linked', name: 'linked' }] },
    draft07: { content: [{ type: 'text', text: 'ok' }] },
    broken_schema: { content: [{ type: 'text', text: 'ok' }] },
    'prompt:greet': { messages: [{ role: 'user', content: { type: 'text', text: 'hello' } }] },
    'resource:notes://n1': { contents: [{ uri: 'notes://n1', text: 'n1' }] },
    'resource:notes://n2/body': { contents: [{ uri: 'notes://n2/body', text: 'n2' }] },
    'resource:notes://linked': { contents: [{ uri: 'notes://linked', text: 'l' }] },
    'resource:other://served': { contents: [{ uri: 'other://served', text: 's' }] },
  },
  errors: {
    strict_search: { code: -32602, message: 'invalid params' },
    ghost: { code: -32602, message: 'unknown tool: ghost' },
    'resource:notes://zzz/x/y': { code: -32002, message: 'resource not found' },
  },
};

const call = (name: string, args?: object): Step => ['tools/call', { name, ...(args && { arguments: args }) }];

const STEPS: Step[] = [
  ['tools/list'],
  ['tools/list', { cursor: '1' }],
  ['prompts/list'],
  ['resources/list'],
  ['resources/templates/list'],
  // Breaches, each followed by its compliant twin.
  call('strict_search', { query: 'q', limit: 'ten' }), // #7: rejected (-32602) -> warning
  call('strict_search', { query: 'q', limit: 10 }),
  call('rejecting', { n: 'x' }), // #9: rejected (isError) -> warning
  call('rejecting', { n: 1 }),
  call('lenient', { n: 1, extra: true }), // #11: accepted -> error
  call('lenient', { n: 1 }),
  call('bad_output'), // #13
  call('good_output'),
  call('no_structured'), // #15
  call('no_structured_error'),
  call('no_text'), // #17
  call('ghost', { a: 1 }), // #18: unknown, rejected
  call('hidden'), // #19: undeclared, served
  call('draft07', { t: [1] }), // #20: accepted (draft-07 tuple items) -> error
  call('draft07', { t: ['a'] }),
  call('broken_schema', { x: 1 }), // unusable schema: nothing to judge the call by
  ['prompts/get', { name: 'greet', arguments: { tone: 'warm' } }], // #23
  ['prompts/get', { name: 'greet', arguments: { who: 'Ada' } }],
  ['resources/read', { uri: 'notes://zzz/x/y' }], // #25: unlisted, rejected -> warning
  ['resources/read', { uri: 'other://served' }], // #26: unlisted, served -> note
  ['resources/read', { uri: 'notes://n1' }],
  ['resources/read', { uri: 'notes://n2/body' }],
  call('linker'),
  ['resources/read', { uri: 'notes://linked' }],
  ['tools/list'], // listed again: the unusable schema is said once
];

let findings: Finding[] = [];
beforeAll(async () => {
  findings = check(await recordSession(dir, 'breaches', SCRIPT, STEPS), toolContracts);
}, 60_000);

const of = (ruleId: string) => findings.filter((f) => f.ruleId === ruleId);

describe('tool contracts on a recording of a server that breaks them', () => {
  it('every finding names a catalogued rule with its severity', () => {
    const ids = new Set(TOOL_CONTRACT_RULES.map((r) => r.id));
    for (const f of findings) expect(ids.has(f.ruleId), f.ruleId).toBe(true);
    expect(of('contract/check-failed')).toEqual([]);
  });

  it('arguments the server rejected are a warning, located in the request', () => {
    const got = of('contract/arguments-invalid');
    expect(got.map((f) => [f.where.jsonRpcId, f.pointer, f.schemaRule, f.severity])).toEqual([
      [7, '/params/arguments/limit', '#/properties/limit/type', 'warning'],
      [9, '/params/arguments/n', '#/properties/n/type', 'warning'],
    ]);
    const [first] = got;
    expect(first).toMatchObject({ expected: 'type integer', found: '"ten"', specVersion: '2025-06-18' });
    expect(first!.where).toMatchObject({
      method: 'tools/call',
      tool: 'strict_search',
      side: 'client',
      connectionId: expect.any(String),
      exchangeKey: expect.any(String),
    });
    expect(first!.message).toContain('JSON-RPC error -32602');
    expect(got[1]!.message).toContain('isError');
  });

  it('arguments the server accepted despite its schema are an error (both dialects)', () => {
    expect(of('contract/arguments-accepted').map((f) => [f.where.jsonRpcId, f.pointer, f.schemaRule, f.severity])).toEqual([
      [20, '/params/arguments/t/0', '#/properties/t/items/0/type', 'error'],
    ]);
  });

  it('an undeclared key the server accepted is a warning naming the key, not an error', () => {
    const got = of('contract/arguments-extra-accepted');
    expect(got.map((f) => [f.where.jsonRpcId, f.pointer, f.schemaRule, f.severity])).toEqual([
      [11, '/params/arguments/extra', '#/additionalProperties', 'warning'],
    ]);
    expect(got[0]!.message).toContain('"extra"');
    expect(got[0]!.message).toContain('ignored it');
  });

  it('structuredContent against outputSchema, and its absence', () => {
    expect(of('contract/output-invalid').map((f) => [f.where.jsonRpcId, f.pointer, f.schemaRule, f.found, f.where.side])).toEqual([
      [13, '/result/structuredContent/items/0/id', '#/properties/items/items/properties/id/type', '7', 'server'],
    ]);
    expect(of('contract/output-missing').map((f) => [f.where.jsonRpcId, f.pointer, f.severity])).toEqual([[15, '/result/structuredContent', 'error']]);
  });

  it('structured content with no text block carrying it', () => {
    expect(of('contract/output-no-text').map((f) => [f.where.jsonRpcId, f.pointer, f.severity])).toEqual([[17, '/result/content', 'warning']]);
  });

  it('an unknown tool is the client warning, an undeclared tool served is the server error', () => {
    expect(of('contract/unknown-tool').map((f) => [f.where.jsonRpcId, f.where.tool, f.pointer, f.severity])).toEqual([
      [18, 'ghost', '/params/name', 'warning'],
    ]);
    expect(of('contract/undeclared-tool').map((f) => [f.where.jsonRpcId, f.where.tool, f.severity, f.where.side])).toEqual([[19, 'hidden', 'error', 'server']]);
  });

  it('an uncompilable schema is said once, located in the tools/list', () => {
    const got = of('contract/schema-unusable');
    expect(got.map((f) => [f.where.method, f.where.tool, f.pointer, f.where.subject])).toEqual([
      ['tools/list', 'broken_schema', '/result/tools/4/inputSchema', { kind: 'tool', name: 'broken_schema' }],
    ]);
    expect(got[0]!.found).toMatch(/type must be JSONType/);
  });

  it('a prompt without a declared required argument', () => {
    expect(of('contract/prompt-argument-missing').map((f) => [f.where.jsonRpcId, f.where.tool, f.pointer, f.found])).toEqual([
      [23, 'greet', '/params/arguments/who', 'absent'],
    ]);
  });

  it('reads of unlisted URIs: warning when rejected, note when served; listed, templated and linked ones pass', () => {
    expect(of('contract/resource-unlisted').map((f) => [f.where.jsonRpcId, f.where.tool, f.severity, f.pointer])).toEqual([
      [25, 'notes://zzz/x/y', 'warning', '/params/uri'],
      [26, 'other://served', 'note', '/params/uri'],
    ]);
  });

  it('nothing else: the compliant twins are silent', () => {
    expect(findings).toHaveLength(13);
  });

  it('a rule set off in the settings says nothing', async () => {
    const db = join(dir, 'breaches.db');
    const quiet = check(db, toolContracts, new Map([['contract/resource-unlisted', { severity: 'off' as const }]]));
    expect(quiet.filter((f) => f.ruleId === 'contract/resource-unlisted')).toEqual([]);
    expect(quiet).toHaveLength(11);
  });

  it('output-no-text with match: any takes any text block', () => {
    const relaxed = check(join(dir, 'breaches.db'), toolContracts, new Map([['contract/output-no-text', { options: { match: 'any' } }]]));
    expect(relaxed.filter((f) => f.ruleId === 'contract/output-no-text')).toEqual([]);
    expect(relaxed).toHaveLength(12);
  });
});

describe('no evidence, no finding', () => {
  const script = {
    results: { 'tools/list': { tools: [{ name: 'adder', inputSchema: object({}) }] }, 'resources/list': { resources: [] } },
    calls: { adder: { content: [{ type: 'text', text: 'added' }] }, fresh: { content: [{ type: 'text', text: 'new tool' }] } },
    notify: { adder: [{ method: 'notifications/tools/list_changed' }, { method: 'notifications/resources/list_changed' }] },
    errors: { ghost: { code: -32602, message: 'unknown tool' }, 'resource:x://y': { code: -32002, message: 'not found' } },
  };
  const steps: Step[] = [
    call('ghost'), // no tools/list yet
    ['resources/read', { uri: 'x://y' }], // no resources/list yet
    ['tools/list'],
    ['resources/list'],
    call('adder'), // the server announces new tools and resources (when scripted to)
    call('fresh'),
    ['resources/read', { uri: 'x://y' }],
  ];

  it('without lists, or after list_changed, unknown names and URIs pass', async () => {
    expect(check(await recordSession(dir, 'no-evidence', script, steps), toolContracts)).toEqual([]);
  }, 30_000);

  it('the same calls with no list_changed are findings', async () => {
    const findings = check(await recordSession(dir, 'no-change', { ...script, notify: {} }, steps), toolContracts);
    expect(findings.map((f) => [f.ruleId, f.where.jsonRpcId])).toEqual([
      ['contract/undeclared-tool', 7],
      ['contract/resource-unlisted', 8],
    ]);
  }, 30_000);
});
