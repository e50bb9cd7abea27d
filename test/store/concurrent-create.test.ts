/**
 * Several processes creating one new recording file at the same instant (taps started together,
 * recording into one file): each opens it as a recording. A reader used to see another creator's
 * tables before its application_id and version, and refused the file as "a different SQLite database".
 * Runs the built store (requires `npx tsc -p .`); bounded: 5 rounds of 6 processes.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, it } from 'vitest';
import { ROOT } from '../helpers/paths.js';

const STORE = pathToFileURL(join(ROOT, 'dist', 'src', 'store', 'recording-store.js')).href;

function opener(path: string): Promise<string> {
  const script = `import { RecordingStore } from ${JSON.stringify(STORE)};
try { RecordingStore.open(${JSON.stringify(path)}, { create: true, busyTimeoutMs: 10000 }).close(); process.stdout.write('ok'); }
catch (err) { process.stdout.write(String(err.message)); }`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  return new Promise((resolve) => child.once('close', () => resolve(out)));
}

it('processes creating one recording file at once each open it as a recording', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-create-'));
  for (let round = 0; round < 5; round++) {
    const path = join(dir, `r${round}.db`);
    const results = await Promise.all(Array.from({ length: 6 }, () => opener(path)));
    expect(results).toEqual(Array(6).fill('ok'));
  }
});
