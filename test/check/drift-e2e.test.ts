/**
 * Drift between two builds of a server, both recorded through the real tap (built CLI): a renamed
 * tool, a loosened annotation and a description grown past the token budget are each named; a
 * recording against itself, and against its own snapshot, has no findings.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { driftAgainst } from '../../src/check/rules/drift.js';
import { extractSurface, loadBaseline, writeSnapshot } from '../../src/check/surface-snapshot.js';
import { runChecker } from './surface-events.js';
import { recordedEvents, recordScripted } from './surface-tap.js';

const dir = mkdtempSync(join(tmpdir(), 'mcptap-drift-e2e-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const schema = (p: string) => ({ type: 'object', properties: { [p]: { type: 'string' } }, required: [p] });
const build = (tools: object[]) => ({
  results: { 'tools/list': { tools }, 'prompts/list': { prompts: [{ name: 'summarise', arguments: [{ name: 'text' }] }] } },
});
const V1 = build([
  { name: 'search', description: 'Searches the docs.', inputSchema: schema('q'), annotations: { readOnlyHint: true, openWorldHint: false } },
  { name: 'delete_page', description: 'Deletes a page.', inputSchema: schema('id'), annotations: { destructiveHint: true } },
  { name: 'read_page', description: 'Reads a page.', inputSchema: schema('id'), annotations: { readOnlyHint: true } },
]);
const V2 = build([
  { name: 'find', description: 'Searches the docs.', inputSchema: schema('q'), annotations: { readOnlyHint: true, openWorldHint: false } },
  { name: 'delete_page', description: 'Deletes a page.', inputSchema: schema('id'), annotations: { destructiveHint: false } },
  {
    name: 'read_page',
    description: 'Reads a page of the docs, with its history and comments. '.repeat(120),
    inputSchema: schema('id'),
    annotations: { readOnlyHint: true },
  },
]);
const METHODS = ['tools/list', 'prompts/list'];

describe('drift through the tap', () => {
  it('two builds: the rename, the loosened hint and the grown description are each named; a build against itself is clean', async () => {
    const [v1, v2] = [await recordScripted(dir, 'v1', V1, METHODS), await recordScripted(dir, 'v2', V2, METHODS)];
    const [e1, e2] = [recordedEvents(v1), recordedEvents(v2)];

    // Baseline from the recording itself, and from the snapshot written of it: the same verdicts.
    const snapshot = join(dir, 'tools.json');
    await writeSnapshot(snapshot, extractSurface(e1));
    for (const baseline of [loadBaseline(v1), loadBaseline(snapshot)]) {
      expect(runChecker(driftAgainst(baseline), e1)).toEqual([]);
      const findings = runChecker(driftAgainst(baseline), e2);
      expect(findings.map((f) => [f.ruleId, f.severity, f.where.subject?.name])).toEqual([
        ['drift/removed', 'error', 'search'],
        ['drift/added', 'note', 'find'],
        ['drift/annotations-loosened', 'error', 'delete_page'],
        ['drift/description-changed', 'note', 'read_page'],
        ['drift/tool-tokens', 'warning', 'read_page'],
        ['drift/total-token-growth', 'warning', undefined],
      ]);
      expect(findings[0]!.message).toBe('tool search: removed (renamed to find? same schema)');
      expect(findings[2]).toMatchObject({ pointer: '/annotations/destructiveHint', expected: 'true', found: 'false' });
      expect(findings[4]!.message).toMatch(/^tool read_page: grew from \d+ to \d+ tokens, over 1000$/);
    }
    expect(runChecker(driftAgainst(loadBaseline(v2)), e2)).toEqual([]);
  }, 90_000);
});
