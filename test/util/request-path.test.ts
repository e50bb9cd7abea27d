/**
 * Request targets read as paths on this server: one starting with `//` names no other host, and one
 * that is no URL at all (`//%5C/`, which made `new URL(target, base)` throw and the reference, mock,
 * mcp and ui servers exit) is undefined, for a 400. The reference server, in process, stays up.
 */
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { startReferenceHttpServer } from '../../src/reference/reference-server.js';
import { requestUrl } from '../../src/util/request-path.js';

/** A raw GET of `path` (sent as is), its status. */
function status(port: number, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, timeout: 10_000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

describe('requestUrl', () => {
  it('keeps the target a path on this server, and says when it is none', () => {
    expect(requestUrl('//evil.example/mcp?x=1')?.pathname).toBe('//evil.example/mcp');
    expect(requestUrl('/mcp?token=t')?.searchParams.get('token')).toBe('t');
    expect(requestUrl(undefined)?.pathname).toBe('/');
    expect(requestUrl('//%5C/')?.pathname).toBe('//%5C/');
    expect(requestUrl('/[')).toBeDefined();
  });

  it('the reference server answers such targets and stays up', async () => {
    const server = await startReferenceHttpServer({ port: 0 });
    try {
      for (const path of ['//%5C/', '//[/', '//x:99999/', '//%/']) expect(await status(server.port, path), path).toBe(404);
      expect(await status(server.port, '/mcp')).not.toBe(0);
    } finally {
      await server.close();
    }
  });
});
