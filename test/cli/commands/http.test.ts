/** `mcptap http --listen` forms, parsed and as the built CLI takes them (requires `npx tsc -p .`). */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { parseListen } from '../../../src/cli/upstream.js';
import { DEFAULT_HTTP_TAP_HOST, DEFAULT_HTTP_TAP_PORT } from '../../../src/tap/http-tap.js';
import { MCPTAP } from '../../helpers/paths.js';

/** Runs `mcptap http` with `args`; SIGTERMs it once it listens. Bounded: 15 s. */
function runTap(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [MCPTAP, 'http', '--upstream', 'http://127.0.0.1:9/mcp', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  let stopping = false;
  child.stderr!.on('data', (b: Buffer) => {
    stderr += b.toString();
    // A moment later: the tap installs its signal handlers just after it says it listens.
    if (stopping || !stderr.includes('listening on')) return;
    stopping = true;
    setTimeout(() => child.kill('SIGTERM'), 200);
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    }),
  );
}

describe('mcptap http --listen', () => {
  it('takes HOST:PORT, a bare HOST (default port), a bare PORT (default host) and bracketed IPv6', () => {
    expect(parseListen('127.0.0.1:8080')).toEqual({ host: '127.0.0.1', port: 8080 });
    expect(parseListen('127.0.0.1')).toEqual({ host: '127.0.0.1', port: DEFAULT_HTTP_TAP_PORT });
    expect(parseListen('localhost')).toEqual({ host: 'localhost', port: DEFAULT_HTTP_TAP_PORT });
    expect(parseListen('7179')).toEqual({ host: DEFAULT_HTTP_TAP_HOST, port: 7179 });
    expect(parseListen(':7179')).toEqual({ host: DEFAULT_HTTP_TAP_HOST, port: 7179 });
    expect(parseListen('0')).toEqual({ host: DEFAULT_HTTP_TAP_HOST, port: 0 });
    expect(parseListen('[::1]:8080')).toEqual({ host: '::1', port: 8080 });
    expect(parseListen('[::1]')).toEqual({ host: '::1', port: DEFAULT_HTTP_TAP_PORT });
    for (const bad of ['', ':', 'host:', 'host:port', 'a:b:c', '::1', '[::1]:', '[::1', 'a b:1', '127.0.0.1:-1']) {
      expect(() => parseListen(bad), bad).toThrow(/^--listen must be HOST:PORT, HOST, PORT or \[IPv6\]:PORT, got /);
    }
    expect(() => parseListen('1.2.3.4:70000')).toThrow('--listen port must be 0-65535, got 70000');
  });

  it('a bare host listens on the default port (or says it cannot): never an internal error', async () => {
    const { code, stderr } = await runTap(['--listen', '127.0.0.1']);
    // The default port may be taken on this machine: then a one-line usage error, exit 2.
    if (code === 2) expect(stderr).toMatch(new RegExp(`^mcptap: cannot listen on 127\\.0\\.0\\.1: .*${DEFAULT_HTTP_TAP_PORT}.*\\n$`));
    else {
      expect(stderr).toContain(`listening on http://127.0.0.1:${DEFAULT_HTTP_TAP_PORT}/mcp`);
      expect(code, stderr).toBe(0);
    }
  });

  it('a port another process holds: exit 2, one line saying what to do', async () => {
    const holder = createServer();
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', () => r()));
    try {
      const port = (holder.address() as AddressInfo).port;
      const { code, stderr } = await runTap(['--listen', `127.0.0.1:${port}`]);
      expect(code, stderr).toBe(2);
      expect(stderr).toMatch(
        new RegExp(
          `^mcptap: cannot listen on 127\\.0\\.0\\.1:${port}: .*EADDRINUSE.* \\(another process has the port: pick another, or port 0 for a free one\\)\\n$`,
        ),
      );
    } finally {
      holder.close();
    }
  });

  it('anything else is refused before listening: exit 2, one line', async () => {
    for (const bad of ['a:b:c', '::1', 'host:']) {
      const { code, stderr } = await runTap(['--listen', bad]);
      expect(code, bad).toBe(2);
      expect(stderr).toBe(`mcptap: --listen must be HOST:PORT, HOST, PORT or [IPv6]:PORT, got ${JSON.stringify(bad)}\n`);
    }
  });

  it('--help says which forms --listen takes', async () => {
    const child = spawn(process.execPath, [MCPTAP, 'http', '--help'], { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
    await new Promise((resolve) => child.once('exit', resolve));
    expect(out.replace(/\s+/g, ' ')).toContain(`HOST:PORT, HOST (port ${DEFAULT_HTTP_TAP_PORT}), PORT (host ${DEFAULT_HTTP_TAP_HOST}) or [IPv6]:PORT`);
  });
});
