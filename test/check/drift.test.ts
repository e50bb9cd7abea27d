import fc from 'fast-check';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { driftAgainst } from '../../src/check/rules/drift.js';
import { diffSurface, jsonDiff, loosenedHints, RISK_HINTS } from '../../src/check/surface-diff.js';
import { extractSurface, parseSnapshot, readSnapshot, snapshotText, writeSnapshot, type Surface } from '../../src/check/surface-snapshot.js';
import { listEvent, runChecker, toolsEvent } from './surface-events.js';

const tool = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  description: `The ${name} tool.`,
  inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
  ...extra,
});
const surfaceOf = (...tools: Record<string, unknown>[]): Surface => extractSurface([toolsEvent(tools)]);
const ids = (s: { ruleId: string; where: { subject?: { name: string } } }[]) => s.map((f) => `${f.ruleId} ${f.where.subject?.name ?? ''}`.trim());

const dir = mkdtempSync(join(tmpdir(), 'mcptap-drift-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Arbitrary JSON-ish tool definitions with arbitrary annotations.
const hintValue = fc.constantFrom(true, false, undefined);
const annotationsArb = fc.record({ readOnlyHint: hintValue, destructiveHint: hintValue, idempotentHint: hintValue, openWorldHint: hintValue });
const toolArb = fc.record({
  name: fc.string({ minLength: 1, maxLength: 12 }),
  description: fc.string({ maxLength: 60 }),
  inputSchema: fc.record({
    type: fc.constant('object'),
    properties: fc.dictionary(fc.string({ maxLength: 6 }), fc.record({ type: fc.constantFrom('string', 'number') })),
  }),
  annotations: fc.option(annotationsArb, { nil: undefined }),
});
const clean = (v: unknown) => JSON.parse(JSON.stringify(v)) as Record<string, unknown>;

describe('diffSurface', () => {
  it('a surface diffed against itself has no findings (property)', () => {
    fc.assert(
      fc.property(fc.uniqueArray(toolArb, { selector: (t) => t.name, maxLength: 6 }), (tools) => {
        const s = surfaceOf(...tools.map(clean));
        expect(diffSurface(s, s)).toEqual([]);
        expect(diffSurface(s, parseSnapshot(snapshotText(s), 'x'))).toEqual([]);
      }),
      { numRuns: 100 },
    );
  });

  it('any loosening of a risk hint is an error; a tightening never is (property)', () => {
    fc.assert(
      fc.property(annotationsArb, fc.constantFrom(...RISK_HINTS), (annotations, h) => {
        const before = clean({ ...annotations, readOnlyHint: h.hint === 'readOnlyHint' ? annotations.readOnlyHint : false });
        const effective = typeof before[h.hint] === 'boolean' ? before[h.hint] : h.absent;
        fc.pre(effective !== h.safe);
        const after = { ...before, [h.hint]: h.safe };
        const findings = diffSurface(surfaceOf(tool('t', { annotations: before })), surfaceOf(tool('t', { annotations: after })));
        expect(findings.filter((f) => f.severity === 'error').map((f) => [f.ruleId, f.pointer])).toEqual([
          ['drift/annotations-loosened', `/annotations/${h.hint}`],
        ]);
        // The other way round claims more risk: a note at most.
        const back = diffSurface(surfaceOf(tool('t', { annotations: after })), surfaceOf(tool('t', { annotations: before })));
        expect(back.filter((f) => f.severity === 'error')).toEqual([]);
      }),
      { numRuns: 200 },
    );
  });

  it('missing hints take the spec defaults', () => {
    expect(loosenedHints(undefined, { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true })).toEqual([]);
    expect(loosenedHints({}, { destructiveHint: false })).toEqual([{ hint: 'destructiveHint', from: true, to: false }]);
    expect(loosenedHints({ openWorldHint: true }, {})).toEqual([]);
    // destructive/idempotent mean nothing for a tool read-only before and after.
    expect(loosenedHints({ readOnlyHint: true, destructiveHint: true }, { readOnlyHint: true, destructiveHint: false })).toEqual([]);
  });

  it('names a rename, a loosened hint and a grown description; token growth', () => {
    const base = surfaceOf(tool('search'), tool('delete_file', { annotations: { destructiveHint: true } }), tool('read'));
    const current = surfaceOf(
      tool('web_search'),
      tool('delete_file', { annotations: { destructiveHint: false } }),
      tool('read', { description: 'Reads a file. '.repeat(300) }),
      tool('huge', { inputSchema: { type: 'object', properties: { a: { type: 'string', description: 'x '.repeat(600) } } } }),
    );
    const findings = diffSurface(base, current);
    expect(ids(findings)).toEqual([
      'drift/removed search',
      'drift/added huge',
      'drift/new-tool-tokens huge',
      'drift/added web_search',
      'drift/annotations-loosened delete_file',
      'drift/description-changed read',
      'drift/tool-tokens read',
      'drift/total-token-growth',
    ]);
    const byId = (id: string) => findings.find((f) => f.ruleId === id)!;
    expect(byId('drift/removed').message).toBe('tool search: removed (renamed to web_search? same schema)');
    expect(byId('drift/removed').severity).toBe('error');
    expect(byId('drift/annotations-loosened')).toMatchObject({ severity: 'error', pointer: '/annotations/destructiveHint', expected: 'true', found: 'false' });
    expect(byId('drift/description-changed')).toMatchObject({ pointer: '/description', expected: 'The read tool.' });
    expect(byId('drift/tool-tokens').severity).toBe('warning');
  });

  it('schema changes list the JSON Pointers that changed', () => {
    const after = tool('t', { inputSchema: { type: 'object', properties: { q: { type: 'number' }, n: { type: 'integer' } }, required: ['q', 'n'] } });
    const [f] = diffSurface(surfaceOf(tool('t')), surfaceOf(after));
    expect(f).toMatchObject({ ruleId: 'drift/schema-changed', severity: 'warning', pointer: '/inputSchema', where: { subject: { kind: 'tool', name: 't' } } });
    expect(f!.message).toBe(
      'tool t: schema changed: /inputSchema/properties/n (added), /inputSchema/properties/q/type (changed), /inputSchema/required/1 (added)',
    );
    expect(jsonDiff({ a: [1, 2] }, { a: [1], b: null })).toEqual([
      { pointer: '/a/1', kind: 'removed' },
      { pointer: '/b', kind: 'added' },
    ]);
  });

  it('prompts and resources drift too; a list not answered is not compared', () => {
    const prompts = (p: unknown[]) => listEvent('prompts/list', { prompts: p });
    const base = extractSurface([
      toolsEvent([tool('a')]),
      prompts([{ name: 'p', arguments: [{ name: 'x' }] }]),
      listEvent('resources/list', { resources: [{ uri: 'file:///a', name: 'a' }] }),
    ]);
    const findings = runChecker(driftAgainst(base), [toolsEvent([tool('a')]), prompts([{ name: 'p', arguments: [{ name: 'x', required: true }] }])]);
    expect(findings.map((f) => [f.ruleId, f.where.subject?.kind, f.pointer])).toEqual([
      ['drift/schema-changed', 'prompt', '/arguments/0/required'],
      ['drift/not-listed', undefined, undefined],
    ]);
  });
});

describe('snapshot files', () => {
  it('round-trips, stable: sorted lists and keys, same text for the same surface', async () => {
    const s = surfaceOf(tool('b', { annotations: { readOnlyHint: true } }), tool('a'));
    const file = join(dir, 'tools.json');
    await writeSnapshot(file, s);
    const back = readSnapshot(file);
    expect(back.tools.map((t) => t.name)).toEqual(['a', 'b']);
    expect(snapshotText(back)).toBe(snapshotText(s));
    expect(snapshotText(surfaceOf(tool('a'), tool('b', { annotations: { readOnlyHint: true } })))).toBe(snapshotText(s));
    expect(JSON.parse(snapshotText(s))).toMatchObject({ format: 'mcptap-surface', version: 1, encoding: 'o200k_base', totals: { tools: 2 } });
    expect(diffSurface(s, back)).toEqual([]);
  });

  it.each([
    ['{"format": "mcptap-surface",\n  "version": 1,,}', /bad\.json:2:16: not JSON/],
    ['{"tools": []}', /bad\.json: not an mcptap surface snapshot/],
    ['{"format": "mcptap-surface", "version": 9, "encoding": "o200k_base"}', /bad\.json: \/version: snapshot format version 9/],
    ['{"format": "mcptap-surface", "version": 1, "encoding": "cl100k_base"}', /bad\.json: \/encoding/],
    [
      '{"format": "mcptap-surface", "version": 1, "encoding": "o200k_base", "tools": [{"name": "a", "tokens": -1, "definition": {}}]}',
      /bad\.json: \/tools\/0\/tokens: expected a non-negative integer/,
    ],
    [
      '{"format": "mcptap-surface", "version": 1, "encoding": "o200k_base", "prompts": [{"name": "a", "tokens": 1}]}',
      /bad\.json: \/prompts\/0\/definition: expected an object/,
    ],
  ])('bad input is an invalid_input error located in the file: %s', (text, message) => {
    const file = join(dir, 'bad.json');
    writeFileSync(file, text);
    expect(() => readSnapshot(file)).toThrow(message);
    try {
      readSnapshot(file);
    } catch (err) {
      expect(err).toMatchObject({ name: 'McptapError', code: 'MCPTAP_CHECK_SNAPSHOT_INVALID', kind: 'invalid_input' });
    }
  });
});

describe('extractSurface', () => {
  it('joins pages; a fresh listing replaces the connection’s previous one; connections are united', () => {
    const s = extractSurface([
      toolsEvent([tool('old')]),
      toolsEvent([tool('a')], { nextCursor: 'p2' }),
      toolsEvent([tool('b')], { cursor: 'p2' }),
      toolsEvent([tool('c', { description: 'first' })], { connectionId: 'c2' }),
      toolsEvent([tool('c', { description: 'second' })], { connectionId: 'c3' }),
    ]);
    expect(s.tools.map((t) => t.name)).toEqual(['a', 'b', 'c']);
    expect(s.tools[2]!.definition.description).toBe('second');
    expect(s.tools[0]!.tokens).toBeGreaterThan(10);
  });

  it('keeps every connection in the union past the open listings (bounded memory)', () => {
    const events = Array.from({ length: 200 }, (_, i) => toolsEvent([tool(`t${i}`), tool('shared', { description: `from ${i}` })], { connectionId: `c${i}` }));
    const s = extractSurface([...events, toolsEvent([tool('t199b')], { connectionId: 'c199' })]);
    expect(s.tools).toHaveLength(201); // t0-t198, t199b, shared
    expect(s.tools.map((t) => t.name)).not.toContain('t199');
    expect(s.tools.find((t) => t.name === 'shared')!.definition.description).toBe('from 198');
  });
});
