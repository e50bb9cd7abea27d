/**
 * `mcptap http` (the built CLI, default log level) in front of an upstream that is down, then up
 * (the reference server started on its port), then down again: each outage is said once on stderr
 * per error class, the recovery once with the count of failed requests, and the upstream URL's
 * password and token never appear.
 */
import { describe, expect, it } from 'vitest';
import { startReferenceHttpServer } from '../../src/reference/reference-server.js';
import { startHttpTapCli } from '../helpers/http-tap-cli.js';
import { freePort, modernToolCallHeaders } from '../helpers/http-peers.js';

const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };

/** A 2026-07-28 `tools/call` of the reference server's echo tool: the HTTP status. */
async function echo(url: string, id: number): Promise<number> {
  const res = await fetch(url, {
    method: 'POST',
    headers: modernToolCallHeaders('echo'),
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' }, _meta: META } }),
  });
  await res.arrayBuffer();
  return res.status;
}

const upstreamLines = (stderr: string) => stderr.split('\n').filter((l) => l.startsWith('mcptap warn: upstream '));

describe('mcptap http: a failing upstream is said once per class, and its recovery once', () => {
  it('says the refusal once, counts the rest, says the recovery with the count; no secrets', async () => {
    const port = await freePort();
    const tap = await startHttpTapCli(`http://user:s3cret@127.0.0.1:${port}/mcp?token=t0psecret`);
    try {
      for (let id = 1; id <= 3; id++) expect(await echo(tap.url, id)).toBe(502);
      await expect.poll(() => upstreamLines(tap.stderr()), { timeout: 5_000 }).toHaveLength(1);
      expect(upstreamLines(tap.stderr())[0]).toMatch(
        new RegExp(
          `^mcptap warn: upstream http://user:redacted:\\S+@127\\.0\\.0\\.1:${port}/mcp\\?token=redacted:\\S+: connection refused: .*ECONNREFUSED.* \\(further failures of this kind counted, not logged\\)$`,
        ),
      );

      const server = await startReferenceHttpServer({ port });
      try {
        expect(await echo(tap.url, 4)).toBe(200);
        expect(await echo(tap.url, 5)).toBe(200);
        await expect.poll(() => upstreamLines(tap.stderr()), { timeout: 5_000 }).toHaveLength(2);
        expect(upstreamLines(tap.stderr())[1]).toMatch(/^mcptap warn: upstream http:\/\/user:redacted:\S+ answers again after 3 failed requests$/);
      } finally {
        await server.close();
      }

      // A new outage is news again (refused, or reset if a kept-alive connection was cut).
      expect(await echo(tap.url, 6)).toBe(502);
      await expect.poll(() => upstreamLines(tap.stderr()), { timeout: 5_000 }).toHaveLength(3);
      expect(upstreamLines(tap.stderr())[2]).toMatch(/: connection (refused|reset): .*\(further failures of this kind counted, not logged\)$/);
      expect(tap.stderr()).not.toMatch(/s3cret|t0psecret/);
    } finally {
      tap.child.kill('SIGTERM');
    }
    expect(await tap.exited).toBe(0);
  });
});
