/**
 * Property: whatever the bytes and however they are cut, the stdio tap forwards them unchanged in
 * both directions. Random message sequences (multi-byte UTF-8, 8 MB messages, non-JSON lines, CRLF,
 * no trailing newline) are cut at random boundaries, including empty chunks. Bounded: 4 seeds.
 */
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MCPTAP, FIXTURES } from '../helpers/paths.js';

function prng(seed: number) {
  let s = seed >>> 0;
  return () => (s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32;
}

function randomTraffic(rand: () => number, withHuge: boolean): Buffer {
  const parts: string[] = [];
  const n = 20 + Math.floor(rand() * 40);
  for (let i = 0; i < n; i++) {
    const r = rand();
    const eol = rand() < 0.2 ? '\r\n' : '\n';
    if (r < 0.1) parts.push(`not json at all ${i} ✓${eol}`);
    else if (r < 0.15)
      parts.push(`{"jsonrpc":"2.0","id":${i},"res${eol}`); // truncated JSON
    else
      parts.push(
        JSON.stringify({
          jsonrpc: '2.0',
          id: rand() < 0.5 ? i : `s-${i}`,
          method: 'tools/call',
          params: { name: 'echo', arguments: { text: 'ünï©ødé 🎉 '.repeat(1 + Math.floor(rand() * 50)) } },
        }) + eol,
      );
  }
  if (withHuge) parts.splice(3, 0, JSON.stringify({ jsonrpc: '2.0', id: 'big', result: { data: 'é'.repeat(4 * 1024 * 1024) } }) + '\n'); // 8 MB of UTF-8
  parts.push('{"jsonrpc":"2.0","method":"last/no-newline"}');
  return Buffer.from(parts.join(''));
}

async function runThroughTap(seed: number, withHuge: boolean) {
  const rand = prng(seed);
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-transp-'));
  const toHost = randomTraffic(rand, withHuge);
  const fromHost = randomTraffic(rand, withHuge);
  writeFileSync(join(dir, 'out.bin'), toHost);
  const child = spawn(process.execPath, [MCPTAP, 'stdio', '--record', join(dir, 'rec.db'), '--', process.execPath, join(FIXTURES, 'byte-server.mjs')], {
    env: { ...process.env, OUT_FILE: join(dir, 'out.bin'), IN_COPY: join(dir, 'in.bin'), SEED: String(seed) },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const stdout: Buffer[] = [];
  child.stdout.on('data', (b: Buffer) => stdout.push(b));
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => (stderr += b));
  // Write the host side in random cuts too, including empty writes.
  let pos = 0;
  while (pos < fromHost.length) {
    const n = rand() < 0.1 ? 0 : Math.floor(rand() * (rand() < 0.5 ? 8 : 300_000));
    const piece = fromHost.subarray(pos, pos + n);
    pos += piece.length;
    if (!child.stdin.write(piece)) await new Promise((r) => child.stdin.once('drain', r));
  }
  child.stdin.end();
  const code = await new Promise<number | null>((r) => child.on('close', r));
  return { code, stderr, hostReceived: Buffer.concat(stdout), toHost, serverReceived: readFileSync(join(dir, 'in.bin')), fromHost };
}

describe('stdio tap transparency', () => {
  for (const [seed, huge] of [
    [1, true],
    [2, false],
    [3, false],
    [4, true],
  ] as const) {
    it(`forwards every byte unchanged both ways (seed ${seed}${huge ? ', with 8 MB messages' : ''})`, async () => {
      const r = await runThroughTap(seed, huge);
      expect(r.code, r.stderr).toBe(0);
      expect(r.hostReceived.equals(r.toHost)).toBe(true);
      expect(r.serverReceived.equals(r.fromHost)).toBe(true);
    });
  }
});
