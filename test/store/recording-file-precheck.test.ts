/** What a tap refuses before any traffic: the recording's directory and first bytes. */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { precheckRecordingFile } from '../../src/store/recording-file-precheck.js';
import { RecordingStore } from '../../src/store/recording-store.js';
import { MCPTAP } from '../helpers/paths.js';

const dir = mkdtempSync(join(tmpdir(), 'mcptap-precheck-'));
const codeOf = (path: string) => {
  try {
    precheckRecordingFile(path);
    return 'ok';
  } catch (err) {
    return (err as { code: string }).code;
  }
};

describe('precheckRecordingFile', () => {
  it('accepts what can become or is a recording', () => {
    expect(codeOf(join(dir, 'new.db'))).toBe('ok');
    writeFileSync(join(dir, 'empty.db'), '');
    expect(codeOf(join(dir, 'empty.db'))).toBe('ok');
    // A file another tap is creating this instant: its first page not written yet.
    writeFileSync(join(dir, 'zeros.db'), Buffer.alloc(4096));
    expect(codeOf(join(dir, 'zeros.db'))).toBe('ok');
    RecordingStore.open(join(dir, 'rec.db'), { create: true }).close();
    expect(codeOf(join(dir, 'rec.db'))).toBe('ok');
  });

  it('refuses a missing or unwritable directory, a directory, and a file that is not SQLite', () => {
    expect(codeOf(join(dir, 'no', 'such', 'rec.db'))).toBe('MCPTAP_RECORD_OPEN');
    mkdirSync(join(dir, 'a-dir.db'));
    expect(codeOf(join(dir, 'a-dir.db'))).toBe('MCPTAP_RECORD_OPEN');
    writeFileSync(join(dir, 'notes.db'), 'hello\n');
    expect(codeOf(join(dir, 'notes.db'))).toBe('MCPTAP_NOT_A_RECORDING');
    writeFileSync(join(dir, 'long-notes.db'), 'these are notes, not a database\n'.repeat(10));
    expect(codeOf(join(dir, 'long-notes.db'))).toBe('MCPTAP_NOT_A_RECORDING');
  });

  it('mcptap stdio --record on a text file exits 4; the server spawned early gets no byte and is killed', async () => {
    // `mcptap stdio` spawns its server before it reads its flags (start-up, docs/performance.md): the
    // server may start, but a refused tap sends it nothing and leaves it not running.
    const pidFile = join(dir, 'server-pid');
    const got = join(dir, 'server-got');
    const server = `const fs = require('fs'); fs.writeFileSync(${JSON.stringify(pidFile)}, String(process.pid));
      process.stdin.on('data', (d) => fs.appendFileSync(${JSON.stringify(got)}, d)); setTimeout(() => {}, 20000);`;
    const r = spawnSync(process.execPath, [MCPTAP, 'stdio', '--record', join(dir, 'notes.db'), '--', process.execPath, '-e', server], {
      encoding: 'utf8',
      input: '{"jsonrpc":"2.0","id":1,"method":"ping"}\n',
      timeout: 15_000,
    });
    expect(r.status).toBe(4);
    expect(r.stderr).toContain('is not an mcptap recording (not an SQLite database)');
    expect(r.stdout).toBe('');
    expect(existsSync(got)).toBe(false);
    if (existsSync(pidFile)) {
      const pid = Number(readFileSync(pidFile, 'utf8'));
      // Gone, or a zombie waiting for init to reap it (its parent, the tap, has exited): bounded wait.
      const running = () => {
        try {
          return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
        } catch {
          return false;
        }
      };
      for (let i = 0; i < 100 && running(); i++) await new Promise((res) => setTimeout(res, 50));
      expect(running()).toBe(false);
    }
  });
});
