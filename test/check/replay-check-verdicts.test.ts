/**
 * `mcptap replay --check` verdicts, each both ways, on a recording of the SDK 1.x notes server:
 * `--check-fail-on` with rule ids fails the replay only when a listed rule fires, and `--check`
 * beside `--update` writes the new baseline either way (accepting is the step's success) while its
 * findings at `--check-fail-on` still fail the run (README, "replay"; commands/replay.ts).
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCPTAP } from '../helpers/paths.js';
import { notesCommand } from '../helpers/notes-peer.js';
import { mcptap, stdioTransport } from '../replay/replay-helpers.js';
import { RecordingStore } from '../../src/store/recording-store.js';
import { rulesFile } from './live-check-helpers.js';

let dir: string;
let db: string;
/** The assertion fails on both searches (error); ... */
let failing: string;
/** ... and holds on both. */
let passing: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mcptap-replay-check-'));
  db = join(dir, 'notes.db');
  const client = new Client({ name: 'replay-check', version: '1.0.0' });
  const transport = stdioTransport([MCPTAP, 'stdio', '--record', db, '--', ...notesCommand()]);
  await client.connect(transport);
  await client.listTools();
  await client.callTool({ name: 'search', arguments: { query: 'milk' } });
  const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
  await client.close();
  await closed;
  failing = join(dir, 'fail.yaml');
  writeFileSync(failing, rulesFile('nope'));
  passing = join(dir, 'pass.yaml');
  writeFileSync(passing, rulesFile('n1'));
}, 60_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const replay = (...args: string[]) => mcptap(['replay', db, '--pace', 'fast', ...args, '--', ...notesCommand()]);

// Rule ids add to the level (error by default): `none` leaves the ids alone to decide.
describe('replay --check-fail-on with rule ids', () => {
  it('fails (exit 1) when a listed rule fires', async () => {
    const r = await replay('--check', failing, '--check-fail-on', 'none,assert/search-finds');
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toMatch(/✗ assert\/search-finds: 1 \(1 error/);
  }, 60_000);

  it('passes (exit 0) when the rule that fires is not listed, even at error', async () => {
    const r = await replay('--check', failing, '--check-fail-on', 'none,protocol/unknown-request-cancelled');
    expect(r.code, r.stderr).toBe(0);
    // Found and reported all the same: only the verdict follows --check-fail-on.
    expect(r.stdout).toContain('assert/search-finds');
  }, 60_000);
});

describe('replay --check with --update', () => {
  /** The search calls the written baseline holds. */
  const baselineSearches = (file: string): number => {
    const store = RecordingStore.open(file);
    try {
      return store.exchanges({ method: 'tools/call', target: 'search' }).length;
    } finally {
      store.close();
    }
  };

  it('findings: the baseline is written, and the run still fails (exit 1)', async () => {
    const next = join(dir, 'next-fail.db');
    const r = await replay('--check', failing, '--update', next);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(`wrote ${next}`);
    expect(existsSync(next)).toBe(true);
    expect(baselineSearches(next)).toBe(1);
  }, 60_000);

  it('no findings: the baseline is written and the run passes (exit 0)', async () => {
    const next = join(dir, 'next-pass.db');
    const r = await replay('--check', passing, '--update', next);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`wrote ${next}`);
    expect(baselineSearches(next)).toBe(1);
  }, 60_000);
});
