/**
 * Recordings of real servers through the tap, driven by the SDK 1.x client: server-everything and the
 * SDK notes server over stdio. `mcptap check` finds nothing at the error level (each finding is
 * printed so a new one can be judged a real deviation or a bug of ours).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { everythingCallSet } from '../helpers/everything-call-set.js';
import { NOTES_SERVER } from '../helpers/notes-peer.js';
import { BIN } from '../helpers/paths.js';
import { connectThroughTap } from '../helpers/tap-client.js';
import { mcptap } from './scripted-session.js';

const EVERYTHING = join(BIN, 'mcp-server-everything');

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'mcptap-check-real-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Report {
  totals: { error: number; warning: number; note: number };
  findings: { ruleId: string; severity: string; message: string; where: { method?: string } }[];
}

function check(db: string): { code: number | null; report: Report } {
  const json = join(dir, `${Math.random().toString(36).slice(2)}.json`);
  const r = mcptap('check', db, '--json', json);
  return { code: r.code, report: JSON.parse(readFileSync(json, 'utf8')) as Report };
}

/** Checks the recording: no error-level finding, and every message checked against a schema (no version unknown). */
async function expectNoErrors(db: string): Promise<void> {
  await new Promise((r) => setTimeout(r, 500)); // the tap finishes its recording after the client goes
  const { code, report } = check(db);
  expect(
    report.findings.filter((f) => f.severity === 'error'),
    JSON.stringify(report.findings, null, 2),
  ).toEqual([]);
  expect(report.findings.filter((f) => f.ruleId === 'protocol/unknown-version')).toEqual([]);
  expect(code).toBe(0);
}

describe('mcptap check on real servers', () => {
  it('finds no error in a server-everything session over stdio', async () => {
    const db = join(dir, 'everything.db');
    const tapped = await connectThroughTap(['--record', db], [EVERYTHING, 'stdio']);
    try {
      await everythingCallSet(tapped.client, []);
      await tapped.client.listPrompts();
      await tapped.client.listResources();
    } finally {
      await tapped.close();
    }
    await expectNoErrors(db);
  }, 60_000);

  it('finds no error in an SDK notes server session over stdio', async () => {
    const db = join(dir, 'notes.db');
    const tapped = await connectThroughTap(['--record', db], [process.execPath, NOTES_SERVER]);
    try {
      await tapped.client.listTools();
      await tapped.client.callTool({ name: 'search', arguments: { query: 'milk' } });
      await tapped.client.callTool({ name: 'create_note', arguments: { title: 't', body: 'b' } });
      await tapped.client.callTool({ name: 'delete_note', arguments: { id: 'nope' } });
    } finally {
      await tapped.close();
    }
    await expectNoErrors(db);
  }, 60_000);
});
