/** `mcptap reference` flags and the `--http` mode of the built CLI (requires `npx tsc -p .`). */
import { spawn, spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { parseHostPort } from '../../../src/cli/serve-flags.js';
import { MCPTAP } from '../../helpers/paths.js';

describe('mcptap reference', () => {
  it('parses HOST:PORT forms', () => {
    expect(parseHostPort('127.0.0.1:3333')).toEqual({ host: '127.0.0.1', port: 3333 });
    expect(parseHostPort('localhost:0')).toEqual({ host: 'localhost', port: 0 });
    expect(parseHostPort('[::1]:8080')).toEqual({ host: '::1', port: 8080 });
    expect(parseHostPort(':3000')).toEqual({ host: '127.0.0.1', port: 3000 });
    expect(parseHostPort('3000')).toEqual({ host: '127.0.0.1', port: 3000 });
    for (const bad of ['', 'host', 'h:p', '1.2.3.4:70000']) expect(() => parseHostPort(bad)).toThrow(/HOST:PORT/);
  });

  it('exits 2 without a mode, with both modes, or with a bad --stall', () => {
    for (const args of [[], ['--stdio', '--http', '127.0.0.1:0'], ['--stdio', '--stall', '5:5']]) {
      const run = spawnSync(process.execPath, [MCPTAP, 'reference', ...args], { encoding: 'utf8', timeout: 10_000, input: '' });
      expect(run.status, `${args.join(' ')}: ${run.stderr}`).toBe(2);
      expect(run.stdout).toBe('');
    }
  });

  it('--http prints the endpoint on stderr, serves it, and exits 0 on SIGTERM; a taken port exits 2', async () => {
    const child = spawn(process.execPath, [MCPTAP, 'reference', '--http', '127.0.0.1:0', '--log-level', 'warn'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no URL on stderr within 10 s')), 10_000);
        let err = '';
        child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
          err += chunk;
          const m = /(http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(err);
          if (m) {
            clearTimeout(timer);
            resolve(m[1]!);
          }
        });
      });
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'cli', version: '0' } },
        }),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('mcp-session-id')).toBeTruthy();
      expect(await res.text()).toContain('"protocolVersion":"2025-06-18"');
      // A second server on the same port: a usage error saying what to do, exit 2.
      const taken = spawnSync(process.execPath, [MCPTAP, 'reference', '--http', new URL(url).host], { encoding: 'utf8', timeout: 10_000 });
      expect(taken.status, taken.stderr).toBe(2);
      expect(taken.stderr).toMatch(
        /^mcptap: cannot listen on 127\.0\.0\.1:\d+: .*EADDRINUSE.*\(another process has the port: pick another, or port 0 for a free one\)\n$/,
      );
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  });
});
