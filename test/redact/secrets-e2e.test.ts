/**
 * Secrets never reach the recording, the spans or mcptap's own lines unredacted, end to end with
 * the built CLI: the reference server behind the stdio tap, started through a real shell that
 * writes a non-JSON line to stdout and a few lines to stderr first (no MCP server pollutes its
 * stdout on demand), with secrets on its command line; spans go to an OTLP receiver in the test
 * (http/json), content capture on. The HTTP tap's start-up line with an upstream URL that carries
 * a password and a token.
 *
 * What is forwarded is not redacted: the host still gets every byte the server wrote.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startHttpTapCli } from '../helpers/http-tap-cli.js';
import { referenceServerPerSuite } from '../helpers/http-peers.js';
import { MCPTAP } from '../helpers/paths.js';
import { modernMeta } from '../reference/raw-stdio-peer.js';
import { startOtlpReceiver } from '../telemetry/otlp-receiver.js';

const dir = mkdtempSync(join(tmpdir(), 'mcptap-secrets-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Every secret below has a marker of its own, so a leak names where it came from. */
const SECRETS = ['POLLUTED_PW', 'POLLUTED_TOK', 'ENV_GH', 'COOKIE_SID', 'DIGEST_RESP', 'ARG_AUTH', 'URL_PASS', 'ERR_KEY'];

describe('secrets, end to end', () => {
  it('stdio: stdout pollution, stderr lines, the command line and error messages are redacted in the recording and the spans', async () => {
    const receiver = await startOtlpReceiver();
    const db = join(dir, 'stdio.db');
    const script = [
      'echo "DEBUG password=POLLUTED_PW token: POLLUTED_TOK"',
      'echo "export GITHUB_TOKEN=ENV_GH" >&2',
      'echo "Cookie: sid=COOKIE_SID; theme=dark" >&2',
      'echo "Authorization: Digest username=\\"u\\", response=\\"DIGEST_RESP\\"" >&2',
      `exec "${process.execPath}" "${MCPTAP}" reference --stdio --log-level warn`,
    ].join('; ');
    const child = spawn(
      process.execPath,
      [
        MCPTAP,
        'stdio',
        '--record',
        db,
        '--capture-content',
        '--otlp',
        receiver.url,
        '--',
        'sh',
        '-c',
        script,
        'sh',
        '--auth-token',
        'ARG_AUTH',
        'https://user:URL_PASS@example.com/x',
      ],
      {
        stdio: ['pipe', 'pipe', 'pipe'],
        env: { ...process.env, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_METRICS_EXPORTER: 'none' },
      },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (b: Buffer) => (out += b));
    child.stderr.on('data', (b: Buffer) => (err += b));
    const answered = (id: number) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no answer to ${id}: ${err}`)), 15_000);
        const check = () => {
          if (out.includes(`"id":${id}`)) {
            clearTimeout(timer);
            child.stdout.off('data', check);
            resolve();
          }
        };
        child.stdout.on('data', check);
        check();
      });
    const call = (id: number, name: string, args: object) =>
      child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, _meta: modernMeta() } }) + '\n');
    try {
      call(1, 'rpc-error', { code: -32099, message: 'denied: api_key=ERR_KEY' });
      await answered(1);
      call(2, 'echo', { text: 'hello' });
      await answered(2);
      child.stdin.end();
      expect(await new Promise((r) => child.once('close', r))).toBe(0);
      // Forwarded as written: the host gets the polluted line and the error message in clear.
      expect(out).toContain('DEBUG password=POLLUTED_PW token: POLLUTED_TOK');
      expect(out).toContain('api_key=ERR_KEY');
      const spans = JSON.stringify(await receiver.waitForSpans(3), (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
      const stored = [db, `${db}-wal`]
        .filter(existsSync)
        .map((f) => readFileSync(f).toString('latin1'))
        .join('');
      expect(stored).toContain('redacted:hmac-sha256:');
      expect(spans).toContain('redacted:hmac-sha256:');
      for (const secret of SECRETS) {
        // The error message is a value of the response, kept as sent in the recording; spans redact it.
        if (secret !== 'ERR_KEY') expect(stored, `${secret} in the recording`).not.toContain(secret);
        expect(spans.match(new RegExp(`.{0,400}${secret}.{0,40}`))?.[0], `${secret} in the spans`).toBeUndefined();
      }
    } finally {
      child.kill('SIGKILL');
      await receiver.close();
    }
  });

  const reference = referenceServerPerSuite();

  it('http: the start-up line shows the upstream without its password or token', async () => {
    const upstream = new URL(reference().url);
    upstream.username = 'user';
    upstream.password = 'URL_PASS';
    upstream.search = '?token=QUERY_TOK&page=2';
    const tap = await startHttpTapCli(upstream.href, ['--log-level', 'silent']);
    try {
      const line = tap
        .stderr()
        .split('\n')
        .find((l) => l.includes('listening on'))!;
      expect(line).not.toMatch(/URL_PASS|QUERY_TOK/);
      // The tap's own URL without the query (copyable), then the upstream, redacted.
      expect(line).toMatch(
        /listening on http:\/\/127\.0\.0\.1:\d+\/mcp -> http:\/\/user:redacted:hmac-sha256:[0-9a-f]{16}@127\.0\.0\.1:\d+\/mcp\?token=redacted:hmac-sha256:[0-9a-f]{16}&page=2/,
      );
      for (let i = 0; i < 40 && !tap.stderr().includes('clients send the query'); i++) await new Promise((r) => setTimeout(r, 50));
      expect(tap.stderr()).toMatch(
        /clients send the query themselves \(http:\/\/127\.0\.0\.1:\d+\/mcp\?\.\.\.\): the tap forwards each request's path and query as sent/,
      );
    } finally {
      tap.child.kill('SIGTERM');
      await tap.exited;
    }
  });
});
