/**
 * `from: recording.db`: traffic recorded through the real stdio tap (`mcptap stdio --record`, the
 * built CLI) becomes the step mix and the arguments of a load run.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { McpSession, McpStdioClient, StdioChannel } from '../../src/client/index.js';
import { stepsFromRecording } from '../../src/load/scenario/recording-mix.js';
import { runLoad } from '../../src/load/run/run-load.js';
import { EVERYTHING_BIN, ROOT } from '../client/peers.js';
import { scenario } from './scenario-fixtures.js';

async function recordTraffic(db: string): Promise<void> {
  const client = await McpStdioClient.spawn({
    command: process.execPath,
    args: [path.join(ROOT, 'bin/mcptap.js'), 'stdio', '--record', db, '--', EVERYTHING_BIN, 'stdio'],
  });
  const s = new McpSession(new StdioChannel(client), { era: 'legacy' });
  await s.initialize();
  for (let i = 0; i < 6; i++) await s.request('tools/call', { name: 'echo', arguments: { message: `m${i}` } });
  for (let i = 0; i < 2; i++) await s.request('tools/call', { name: 'get-sum', arguments: { a: i, b: 10 } });
  await s.request('tools/list', {});
  await client.close();
}

describe('a mix taken from a recording', () => {
  it('replays the recorded methods, weights and arguments', async () => {
    const db = path.join(mkdtempSync(path.join(os.tmpdir(), 'mcptap-from-')), 'tap.db');
    await recordTraffic(db);
    const steps = await stepsFromRecording(db);
    expect(steps.map((s) => [s.name, s.weight])).toEqual([
      ['tools/call echo', 6],
      ['tools/call get-sum', 2],
      ['tools/list', 1],
    ]);
    const seen: string[] = [];
    const s = scenario(`
target: { command: "${EVERYTHING_BIN} stdio" }
from: ${db}
phases: [ { closed: { vus: 1, iterations: 18 } } ]
`);
    const r = await runLoad(s, { onRecord: (rec) => seen.push(JSON.stringify(rec.result?.response?.result ?? null)) });
    expect(r.tools.echo!.counters).toMatchObject({ requests: 12, ok: 12 });
    expect(r.tools['get-sum']!.counters).toMatchObject({ requests: 4, ok: 4 });
    expect(r.methods['tools/list']!.counters.requests).toBe(2);
    // the recorded arguments came back: echo m0..m5 and the sums 0+10, 1+10
    for (const m of ['m0', 'm5']) expect(seen.some((x) => x.includes(`Echo: ${m}`))).toBe(true);
    expect(seen.some((x) => x.includes('11'))).toBe(true);
  });
});
