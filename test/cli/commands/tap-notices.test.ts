/** What the tap commands say on stderr at the default log level, through the built CLI (requires `npx tsc -p .`). */
import { spawn } from 'node:child_process';
import { expect, it } from 'vitest';
import { MCPTAP } from '../../helpers/paths.js';

/** Lines on stderr until `until` matches (or 15 s pass); the child is then stopped and waited for. */
async function stderrUntil(args: string[], until: RegExp, stdin?: string): Promise<{ stderr: string; code: number | null; signal: string | null }> {
  const child = spawn(process.execPath, [MCPTAP, ...args], { stdio: ['pipe', 'ignore', 'pipe'] });
  if (stdin) child.stdin.write(stdin);
  let stderr = '';
  const seen = new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, 15_000);
    child.stderr.on('data', (b: Buffer) => {
      stderr += b.toString();
      if (until.test(stderr)) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  await seen;
  const exited = new Promise<[number | null, string | null]>((resolve) => child.once('exit', (code, signal) => resolve([code, signal])));
  child.kill('SIGTERM');
  child.stdin.end();
  const [code, signal] = await exited;
  return { stderr, code, signal };
}

it('the Prometheus scrape URL is a notice at the default level, not a warning', async () => {
  // Echoes each line back: its first answer boots the tap's sinks.
  const echo = [process.execPath, '-e', 'process.stdin.pipe(process.stdout)'];
  const request = '{"jsonrpc":"2.0","id":1,"method":"ping"}\n';
  const r = await stderrUntil(['stdio', '--metrics', '127.0.0.1:0', '--', ...echo], /Prometheus metrics at http:\/\/127\.0\.0\.1:\d+\/metrics\n/, request);
  expect(r.stderr).toMatch(/^mcptap stdio: Prometheus metrics at http:\/\/127\.0\.0\.1:\d+\/metrics$/m);
  expect(r.stderr).not.toMatch(/warn: Prometheus/);
});

it('mcptap http handles SIGTERM from the moment it says it listens (exit 0, not killed by the signal)', async () => {
  const r = await stderrUntil(['http', '--upstream', 'http://127.0.0.1:9/mcp', '--listen', '127.0.0.1:0'], /listening on/);
  expect(r.signal).toBeNull();
  expect(r.code).toBe(0);
});
