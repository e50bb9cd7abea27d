/**
 * The tap's anomalies as check rules, end to end: a misbehaving raw server (test/fixtures/misbehaving-server.mjs)
 * through the built `mcptap stdio --record`; each breach fires its rule once, and the clean scripted
 * session of check-cli.test.ts shows the other way (no findings).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES, MCPTAP } from '../helpers/paths.js';
import { mcptap } from './scripted-session.js';

let dir: string;
let db: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mcptap-check-anomalies-'));
  db = join(dir, 'mis.db');
  const child = spawn(process.execPath, [MCPTAP, 'stdio', '--record', db, '--', process.execPath, join(FIXTURES, 'misbehaving-server.mjs')], {
    env: { ...process.env, WROTE: join(dir, 'wrote.txt') },
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  let answers = '';
  const answered = new Promise<void>((resolve) =>
    child.stdout.on('data', (b: Buffer) => {
      answers += b.toString('utf8');
      if (answers.includes('"id":2')) resolve();
    }),
  );
  const send = (id: number, method: string) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method })}\n`);
  send(1, 'pollute'); // a log line on stdout, then the answer
  send(2, 'orphan'); // an answer to a request never made, then the answer
  await answered;
  send(3, 'hold'); // never answered...
  send(3, 'hold'); // ...and its id reused while in flight
  await new Promise((r) => setTimeout(r, 300));
  const exited = new Promise((r) => child.on('exit', r));
  child.stdin.end();
  await exited;
}, 60_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('anomaly rules on a misbehaving server', () => {
  it('fires each rule once per breach, at the frame, and fails the run', () => {
    const json = join(dir, 'c.json');
    const r = mcptap('check', db, '--json', json);
    expect(r.code).toBe(1);
    const report = JSON.parse(readFileSync(json, 'utf8')) as {
      counts: Record<string, { error: number; warning: number; note: number }>;
      findings: { ruleId: string; where: Record<string, unknown> }[];
    };
    const total = (id: string) => Object.values(report.counts[id] ?? { n: 0 }).reduce((a, b) => a + b, 0);
    expect(total('protocol/stdout-pollution')).toBe(1);
    expect(total('protocol/orphan-response')).toBe(1);
    expect(total('protocol/duplicate-id')).toBe(1);
    expect(total('protocol/unanswered')).toBe(2); // both hold requests: the tap keeps the duplicate as its own exchange
    expect(report.findings.find((f) => f.ruleId === 'protocol/stdout-pollution')!.where).toMatchObject({ side: 'server', frameSeq: expect.any(Number) });
    expect(report.findings.find((f) => f.ruleId === 'protocol/duplicate-id')!.where).toMatchObject({ side: 'client' });
    // No initialize: nothing was checked against a schema, and the note says so instead of guessing.
    expect(total('protocol/unknown-version')).toBe(1);
  });

  it('passes with the anomaly rules turned down to notes and --fail-on warning', () => {
    const rules = join(dir, 'rules.yaml');
    const ids = ['stdout-pollution', 'orphan-response', 'duplicate-id', 'unanswered'];
    writeFileSync(rules, `rules:\n${ids.map((i) => `  protocol/${i}: note\n`).join('')}`);
    expect(mcptap('check', db, '--rules', rules, '--fail-on', 'warning').code).toBe(0);
  });
});
