/**
 * `mcptap ui` on a big recording (bigrec-bench.ts builds it): starts the built CLI, takes the
 * cookie, and times the API calls the page makes (first page, filtered pages, a deep page, one
 * exchange, a waterfall, the recordings list), each the median of a few rounds, while polling the
 * server's peak RSS (VmHWM). Targets: the first page and a filtered page under 1 s, RSS under 300 MB.
 */
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { hwmKiB, MCPTAP, median } from './bench-util.js';

export const UI_PAGE_TARGET_MS = 1000;
export const UI_RSS_TARGET_BYTES = 300e6;
const ROUNDS = 3;

function get(url: string, cookie?: string): Promise<{ status: number; body: string; setCookie?: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: cookie ? { cookie } : {} }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, ...(res.headers['set-cookie'] ? { setCookie: res.headers['set-cookie'][0] } : {}) }));
    });
    req.on('error', reject);
    req.end();
  });
}

export interface UiBenchResult {
  /** [what, median ms, rows returned, within target ('yes', 'NO' or '-')] */
  rows: string[][];
  peakBytes: number;
  pass: boolean;
  notes: string[];
}

/** The page's calls on a recording of `exchanges` echo calls (rows 1..N, one connection). */
export async function runUiBench(db: string, exchanges: number): Promise<UiBenchResult> {
  const child = spawn(process.execPath, [MCPTAP, 'ui', db, '--listen', '127.0.0.1:0'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`mcptap ui did not start: ${err}`)), 60_000);
    child.stderr!.on('data', (b: Buffer) => {
      err += b.toString();
      const m = /open (http:\/\/\S+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once('exit', (code) => reject(new Error(`mcptap ui exited ${code}: ${err}`)));
  });
  let peakBytes = 0;
  const poll = setInterval(() => (peakBytes = Math.max(peakBytes, hwmKiB(child.pid!) * 1024)), 20);
  try {
    const first = await get(url);
    const cookie = first.setCookie!.split(';')[0]!;
    const origin = new URL(url).origin;
    const connection = (JSON.parse((await get(`${origin}/api/exchanges?limit=1`, cookie)).body) as { exchanges: { connection: string }[] }).exchanges[0]!
      .connection;
    const slowCursor = String((JSON.parse((await get(`${origin}/api/exchanges?limit=200&sort=duration`, cookie)).body) as { cursor?: string }).cursor);
    const calls: Array<[string, string, boolean]> = [
      ['recordings list (counts by outcome)', 'recordings', false],
      ['first page (100 rows)', 'exchanges?limit=100', true],
      ['filtered page: tool=echo', 'exchanges?limit=100&tool=echo', true],
      ['filtered page: tool=echo, 0.1..1 ms', 'exchanges?limit=100&tool=echo&minMs=0.1&maxMs=1', true],
      ['page 9,000 rows from the end (cursor)', `exchanges?limit=100&cursor=${exchanges - 9000}`, false],
      ['filtered: text of the last exchange (scans all)', `exchanges?limit=100&text=${encodeURIComponent(`"hello ${exchanges}"`)}`, false],
      ['filtered: outcome=tool_error (none: scans all)', 'exchanges?limit=100&outcome=tool_error', false],
      ['sorted by duration (the slowest 200)', 'exchanges?limit=200&sort=duration', false],
      ['sorted by duration, the next page (cursor)', `exchanges?limit=200&sort=duration&cursor=${encodeURIComponent(slowCursor)}`, false],
      ['one exchange (the middle one)', `exchange?row=${Math.ceil(exchanges / 2)}`, false],
      [`waterfall of the connection (its first 2,000)`, `waterfall?connection=${encodeURIComponent(connection)}`, false],
      ['live tail poll (nothing new)', `exchanges?limit=200&cursor=${exchanges}`, false],
    ];
    const rows: string[][] = [];
    const notes: string[] = [];
    let pass = true;
    for (const [what, path, targeted] of calls) {
      const times: number[] = [];
      let count = '';
      for (let i = 0; i < ROUNDS; i++) {
        const t0 = performance.now();
        const r = await get(`${origin}/api/${path}`, cookie);
        times.push(performance.now() - t0);
        if (r.status !== 200) notes.push(`${what}: HTTP ${r.status} ${r.body.slice(0, 200)}`);
        const body = JSON.parse(r.body) as { exchanges?: unknown[]; recordings?: unknown[] };
        count = String(body.exchanges?.length ?? body.recordings?.length ?? 1);
      }
      const mid = median(times);
      const ok = mid < UI_PAGE_TARGET_MS;
      if (targeted) pass &&= ok;
      rows.push([what, mid.toFixed(0), count, targeted ? (ok ? 'yes' : 'NO') : '-']);
    }
    peakBytes = Math.max(peakBytes, hwmKiB(child.pid!) * 1024);
    pass &&= peakBytes < UI_RSS_TARGET_BYTES;
    return { rows, peakBytes, pass, notes };
  } finally {
    clearInterval(poll);
    child.kill('SIGTERM');
  }
}
