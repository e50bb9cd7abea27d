/**
 * 2026-07-28 traffic, where each request carries its protocol version (no initialize), from an mcptap
 * JSONL file: a valid call passes; the same call with `isError: "true"` fails, checked against the
 * 2026-07-28 schema (the request's own version), and says so.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mcptap } from './scripted-session.js';

const dir = mkdtempSync(join(tmpdir(), 'mcptap-check-modern-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };

function jsonl(result: Record<string, unknown>): string {
  const lines = [
    { mcptap: 'jsonl', version: 1, recording: { transport: 'stdio', target: 'server' } },
    {
      t: 1796256000001000,
      dir: 'c2s',
      message: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' }, _meta: META } },
    },
    { t: 1796256000001200, dir: 's2c', message: { jsonrpc: '2.0', id: 1, result } },
  ];
  const file = join(dir, `${Math.random().toString(36).slice(2)}.jsonl`);
  writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  return file;
}

const RESULT = { content: [{ type: 'text', text: 'hi' }], resultType: 'complete' };

describe('mcptap check on 2026-07-28 traffic (JSONL)', () => {
  it('passes a valid call, checked against the 2026-07-28 schema', () => {
    const r = mcptap('check', jsonl(RESULT), '--fail-on', 'note');
    expect(r.err).toBe('');
    expect(r.out).toContain('0 finding(s)');
    expect(r.code).toBe(0);
  });

  it('fails the same call with isError "true", naming the 2026-07-28 schema rule', () => {
    const r = mcptap('check', jsonl({ ...RESULT, isError: 'true' }), '--json', '-');
    expect(r.code).toBe(1);
    const report = JSON.parse(r.out) as { findings: Record<string, unknown>[] };
    expect(report.findings).toEqual([
      expect.objectContaining({
        ruleId: 'protocol/result-schema',
        pointer: '/result/isError',
        specVersion: '2026-07-28',
        schemaRule: '#/$defs/CallToolResult/properties/isError/type',
        where: expect.objectContaining({ method: 'tools/call', tool: 'echo', side: 'server', jsonRpcId: 1, row: 1 }),
      }),
    ]);
    expect(r.err).toContain('protocol/result-schema (error): 1 finding(s)');
  });
});
