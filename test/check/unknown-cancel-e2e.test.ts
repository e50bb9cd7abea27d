/**
 * A cancellation of a request the tap never saw, end to end: the scripted raw server, through the built
 * `mcptap stdio --record`, cancels a `sampling/createMessage` it sent (known: nothing) and request id 0
 * that no frame carried (the trace the GET-stream race leaves); `show --anomalies` and `check` name it.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcptap, recordScripted } from './scripted-session.js';

const cancel = (requestId: unknown) => ({ method: 'notifications/cancelled', params: { requestId, reason: 'timeout' } });

let dir: string;
let db: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mcptap-unknown-cancel-'));
  const sampling = { id: 's1', method: 'sampling/createMessage', params: { messages: [], maxTokens: 1 } };
  db = await recordScripted(
    dir,
    'race',
    { calls: { ask: { content: [{ type: 'text', text: 'done' }] } }, notify: { ask: [sampling, cancel('s1'), cancel(0)] } },
    [{ method: 'tools/call', params: { name: 'ask', arguments: {} } }],
  );
}, 60_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('unknown_request_cancelled through the real tap', () => {
  it('show --anomalies lists one, for id 0 only, with the likely cause', () => {
    const r = mcptap('show', db, '--anomalies', '--json');
    expect(r.code).toBe(0);
    const found = (JSON.parse(r.out) as { kind: string; detail: string; direction?: string }[]).filter((a) => a.kind === 'unknown_request_cancelled');
    expect(found).toEqual([
      expect.objectContaining({ direction: 's2c', detail: expect.stringMatching(/^cancellation of request id 0 that the tap never saw: /) }),
    ]);
    expect(mcptap('show', db, '--anomalies').out).toMatch(/unknown_request_cancelled .*cancellation of request id 0 that the tap never saw/);
  });

  it('check reports protocol/unknown-request-cancelled once, as a warning', () => {
    const json = join(dir, 'c.json');
    const r = mcptap('check', db, '--json', json);
    expect(r.out).toContain('protocol/unknown-request-cancelled');
    const report = JSON.parse(readFileSync(json, 'utf8')) as { findings: { ruleId: string; severity: string }[] };
    const found = report.findings.filter((f) => f.ruleId === 'protocol/unknown-request-cancelled');
    expect(found).toEqual([expect.objectContaining({ severity: 'warning' })]);
  });
});
