/**
 * `mcptap load` with a cancel step and no cancel threshold (issue 31, item 1): an *unknown* verdict
 * (no evidence) is said and exits 1, as probe-cancel's does; a verdict with evidence (honoured, on the
 * probe's word) exits 0. Real peer: the SDK 1.x notes server over stdio, summarize cancelled after its
 * first progress, one call.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MCPTAP } from '../helpers/paths.js';
import { notesCommand } from '../helpers/notes-peer.js';
import { exitOf } from '../helpers/signal-child.js';

async function load(probe: boolean): Promise<{ code: number | null; stderr: string }> {
  const [command, ...args] = notesCommand();
  const file = join(mkdtempSync(join(tmpdir(), 'mcptap-cancel-unjudged-')), 'cancel.yaml');
  // JSON is YAML: one summarize call cancelled after its first progress, and no threshold.
  const cancel = { afterProgress: 1, observe: '1s', ...(probe ? { probe: 'in_flight' } : {}) };
  const doc = {
    target: { command, args },
    timeout: '10s',
    phases: [{ closed: { vus: 1, iterations: 1 } }],
    steps: [{ tool: 'summarize', arguments: { seconds: 1 }, cancel }],
  };
  writeFileSync(file, JSON.stringify(doc));
  const child = spawn(process.execPath, [MCPTAP, 'load', file], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const code = await exitOf(child);
  clearTimeout(timer);
  return { code, stderr };
}

describe('load: a cancel verdict no threshold judged', () => {
  it('unknown (no probe): says so and exits 1', { timeout: 90_000 }, async () => {
    const r = await load(false);
    expect(r.stderr).toMatch(/cancel verdict of summarize is unknown \(.*give --probe.*\); no cancel threshold judged it: exit 1/);
    expect(r.code).toBe(1);
  });

  it('honoured (the probe says so): exit 0, nothing said', { timeout: 90_000 }, async () => {
    const r = await load(true);
    expect(r.stderr).not.toMatch(/is unknown/);
    expect(r.code).toBe(0);
  });
});
