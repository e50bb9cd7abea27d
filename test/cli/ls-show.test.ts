/**
 * `mcptap ls` / `mcptap show` through the built CLI (run `npx tsc -p .` first), on a recording the
 * recorder wrote from the sample event stream.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, closeSync, copyFileSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import stringWidth from 'string-width';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteRecorder } from '../../src/sinks/sqlite-recorder.js';
import { silentLogger } from '../../src/util/logger.js';
import { MCPTAP } from '../helpers/paths.js';
import { EventScript, sampleEvents, T0 } from '../sinks/sample-events.js';

let dir: string;
let file: string;

function mcptap(...args: string[]): { code: number | null; out: string; err: string } {
  const r = spawnSync(process.execPath, [MCPTAP, ...args], { encoding: 'utf8', timeout: 20_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** A recorder of one stdio recording at `path`, started at T0 and closed a second later. */
function stdioRecorder(path: string, target: string): SqliteRecorder {
  return new SqliteRecorder({
    path,
    recording: { transport: 'stdio', target, startedUs: T0, mcptapVersion: '0.1.0' },
    logger: silentLogger,
    clock: { nowUs: () => T0 + 1_000_000 },
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mcptap-cli-'));
  file = join(dir, 'rec.db');
  const rec = new SqliteRecorder({
    path: file,
    recording: { transport: 'stdio', target: 'node server.mjs', startedUs: T0, mcptapVersion: '0.1.0' },
    logger: silentLogger,
    clock: { nowUs: () => T0 + 2_000_000 },
  });
  for (const e of sampleEvents()) rec.onEvent(e);
  const big = new EventScript({ seq: 5000, exchange: 5000 });
  const ex = big.request('{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"payload"}}', 200, { target: 'payload' });
  big.respond(ex, JSON.stringify({ jsonrpc: '2.0', id: 'big', result: { content: [{ type: 'text', text: 'z'.repeat(20_000) }] } }), 210, { outcome: 'ok' });
  for (const e of big.events) rec.onEvent(e);
  await rec.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('mcptap ls', () => {
  it('lists the recording with outcomes and a per-method latency table', () => {
    const r = mcptap('ls', file);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^recording 1 {2}stdio {2}node server\.mjs$/m);
    expect(r.out).toMatch(/duration 2\.00s/);
    expect(r.out).toMatch(/exchanges 8 \(ok 2, .*tool_error 1.*\) {2}anomalies 3 {2}dropped 0/);
    expect(r.out).toMatch(/^ +METHOD +N +OK +NOT OK +P50 +P95 +P99 +MAX$/m);
    // A row per tool: a slow tool's latencies are not mixed with a fast one's.
    expect(r.out).toMatch(/^ +tools\/call delay +2 +0 +cancelled 1, pending 1 +10\.0ms +10\.0ms +10\.0ms +10\.0ms$/m);
    expect(r.out).toMatch(/^ +tools\/call payload +1 +1 +- +10\.0ms +10\.0ms +10\.0ms +10\.0ms$/m);
    expect(r.out).toMatch(/^ +tools\/call progress +1 +0 +tool_error 1 +20\.0ms +20\.0ms +20\.0ms +20\.0ms$/m);
  });

  it('--json gives the listing and summary', () => {
    const r = mcptap('ls', file, '--json');
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out) as {
      recordings: { id: number; exchanges: number; durationUs: number; summary: { methods: { method: string; p99Us?: number }[] } }[];
    };
    expect(j.recordings).toHaveLength(1);
    expect(j.recordings[0]).toMatchObject({ id: 1, exchanges: 8, durationUs: 2_000_000 });
    expect(j.recordings[0]!.summary.methods.find((m) => m.method === 'initialize')?.p99Us).toBe(2000);
  });

  it('a missing file or a non-recording is a one-line error with exit code 4', () => {
    const missing = mcptap('ls', join(dir, 'nope.db'));
    expect(missing.code).toBe(4);
    expect(missing.err).toBe(`mcptap: no such recording file: ${join(dir, 'nope.db')}\n`);
    expect(missing.out).toBe('');
    const text = join(dir, 'notes.txt');
    writeFileSync(text, 'hello, not a database at all; long enough to fill a header page '.repeat(2));
    const bad = mcptap('show', text);
    expect(bad.code).toBe(4);
    expect(bad.err).toMatch(/^mcptap: .*notes\.txt is not an mcptap recording \(not an SQLite database\)\n$/);
    // A directory: said as such (SQLite said "unable to open database file").
    const folder = mcptap('ls', dir);
    expect(folder.code).toBe(4);
    expect(folder.err).toBe(`mcptap: ${dir} is a directory, not a recording file\n`);
  });

  it('a recording damaged past its header (a corrupt page) is exit 4 saying what to do, not an internal error', () => {
    const damaged = join(dir, 'damaged.db');
    copyFileSync(file, damaged);
    const db = new BetterSqlite3(damaged, { readonly: true });
    const root = (db.prepare("SELECT rootpage FROM sqlite_master WHERE name = 'exchanges'").get() as { rootpage: number }).rootpage;
    const pageSize = db.pragma('page_size', { simple: true }) as number;
    db.close();
    const fd = openSync(damaged, 'r+');
    writeSync(fd, Buffer.from([0xff]), 0, 1, (root - 1) * pageSize); // the page type: no such type
    closeSync(fd);
    for (const args of [
      ['ls', damaged],
      ['show', damaged],
      ['merge', join(dir, 'merged.db'), damaged],
    ]) {
      const r = mcptap(...args);
      expect(r.err).toMatch(/^mcptap: a recording file is damaged \(database disk image is malformed\): .*integrity_check.*\.recover/);
      expect(r.err).not.toContain('internal error');
      expect(r.err).not.toContain('cannot write');
      expect(r.code).toBe(4);
    }
  });

  // Needs another user to read as (root can write anywhere): setpriv to nobody, as root only.
  it.skipIf(process.getuid?.() !== 0)('a recording in a directory the reader cannot write: says why it cannot be read, not "not an mcptap recording"', () => {
    const ro = mkdtempSync(join(tmpdir(), 'mcptap-ro-'));
    try {
      chmodSync(ro, 0o755);
      const copy = join(ro, 'r.db');
      copyFileSync(file, copy);
      chmodSync(copy, 0o444);
      chmodSync(ro, 0o555);
      const r = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, MCPTAP, 'ls', copy], {
        encoding: 'utf8',
        timeout: 20_000,
      });
      expect(r.status).toBe(4);
      expect(r.stderr).toBe(
        `mcptap: cannot read ${copy} where it is: SQLite must create ${copy}-shm beside it and cannot (attempt to write a readonly database); copy the file to a directory you can write\n`,
      );
    } finally {
      chmodSync(ro, 0o755);
      rmSync(ro, { recursive: true, force: true });
    }
  });
});

describe('mcptap show', () => {
  it('lists exchanges one per line, ids as typed (1 vs "1")', () => {
    const r = mcptap('show', file);
    expect(r.code).toBe(0);
    const lines = r.out.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ROW +ID +METHOD +TARGET +OUTCOME +CODE +LATENCY +PROG +FLAGS$/);
    expect(lines).toHaveLength(9);
    expect(lines[1]).toMatch(/^#1 +1 +initialize +- +ok +- +2\.0ms +0 +-$/);
    expect(lines[2]).toMatch(/^#2 +"1" +tools\/call +progress +tool_error +- +20\.0ms +1 +isError$/);
    expect(lines[3]).toMatch(/cancelled +-32800 .*cancelled-by-c2s,response-after-cancel$/);
  });

  it('a long id does not widen every row: the list cuts ids, methods and targets at 40 characters', async () => {
    const path = join(dir, 'long-id.db');
    const rec = stdioRecorder(path, 'node server.mjs');
    const s = new EventScript({ seq: 1, exchange: 1 });
    const longId = 'x'.repeat(5000);
    const a = s.request(`{"jsonrpc":"2.0","id":"${longId}","method":"tools/call","params":{"name":"echo"}}`, 1, { target: 'echo' });
    s.respond(a, `{"jsonrpc":"2.0","id":"${longId}","result":{"content":[]}}`, 2, { outcome: 'ok' });
    const b = s.request('{"jsonrpc":"2.0","id":2,"method":"tools/list"}', 3);
    s.respond(b, '{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}', 4, { outcome: 'ok' });
    for (const e of s.events) rec.onEvent(e);
    await rec.close();
    const lines = mcptap('show', path).out.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(Math.max(...lines.map((l) => l.length))).toBeLessThan(120);
    expect(lines[1]).toMatch(/^#1 +"x{38}… +tools\/call +echo +ok /);
    // The whole id is one --exchange #ROW away.
    expect(mcptap('show', path, '--exchange', '#1').out).toContain(`id "${longId}" (string)`);
  });

  it('filters by outcome and method', () => {
    expect(mcptap('show', file, '--outcome', 'cancelled').out.trimEnd().split('\n')).toHaveLength(2);
    expect(mcptap('show', file, '--method', 'initialize', '--json').out).toMatch(/"method": "initialize"/);
    const bad = mcptap('show', file, '--outcome', 'nonsense');
    expect(bad.code).toBe(2);
  });

  it('--json says pending for an exchange still in flight, as the text and --outcome do (it said unanswered)', () => {
    const pending = JSON.parse(mcptap('show', file, '--outcome', 'pending', '--json').out) as { state: string; outcome: string; rowid: number }[];
    expect(pending.map((e) => [e.state, e.outcome])).toEqual([['started', 'pending']]);
    const all = JSON.parse(mcptap('show', file, '--json').out) as { outcome: string }[];
    expect(all.filter((e) => e.outcome === 'pending')).toHaveLength(1);
    const one = JSON.parse(mcptap('show', file, '--exchange', `#${pending[0]!.rowid}`, '--json').out) as { exchange: { outcome: string } };
    expect(one.exchange.outcome).toBe('pending');
  });

  it('--exchange shows one exchange with its frames and anomalies', () => {
    const num = mcptap('show', file, '--exchange', '1');
    expect(num.code).toBe(0);
    expect(num.out).toMatch(/id 1 \(number\) {2}method initialize/);
    const str = mcptap('show', file, '--exchange', '"1"');
    expect(str.out).toMatch(/id "1" \(string\) {2}method tools\/call {2}target progress/);
    expect(str.out).toMatch(/frames \(3\):/);
    expect(str.out).toMatch(/\+5\.0ms {2}s2c {2}stdio {2}seq 5 {2}notification notifications\/progress/);
    const cancelled = mcptap('show', file, '--exchange', '2');
    expect(cancelled.out).toMatch(/cancelled by c2s at \+5\.0ms \(user\)/);
    expect(cancelled.out).toMatch(/anomalies \(1\):[\s\S]*response_after_cancel/);
  });

  it('truncates huge payloads unless --full', () => {
    const cut = mcptap('show', file, '--exchange', 'big');
    expect(cut.out).toMatch(/more characters; --full shows all\)/);
    expect(cut.out.length).toBeLessThan(15_000);
    const full = mcptap('show', file, '--exchange', 'big', '--full');
    expect(full.out).toContain('z'.repeat(20_000));
    const json = JSON.parse(mcptap('show', file, '--exchange', 'big', '--json').out) as { frames: { raw: string }[] };
    expect(json.frames).toHaveLength(2);
  });

  it('--anomalies lists them; unknown recording or exchange is exit code 4', () => {
    const a = mcptap('show', file, '--anomalies');
    expect(a.out).toMatch(/orphan_response/);
    expect(a.out.trimEnd().split('\n')).toHaveLength(4);
    const noRec = mcptap('show', file, '--recording', '9');
    expect(noRec.code).toBe(4);
    expect(noRec.err).toMatch(/has no recording 9 \(it has 1\)/);
    const noEx = mcptap('show', file, '--exchange', '"404"');
    expect(noEx.code).toBe(4);
    expect(noEx.err).toMatch(/no exchange with id "404" \(ids as shown in the ID column/);
    expect(noEx.err).not.toMatch(/row #/);
    const noRow = mcptap('show', file, '--exchange', '#9999');
    expect(noRow.code).toBe(4);
    expect(noRow.err).toMatch(/has no exchange in row #9999 \(rows as shown in the ROW column of mcptap show\)\n$/);
  });

  it('two views at once (--exchange, --anomalies, --streams) are a usage error, not one silently dropped', () => {
    const r = mcptap('show', file, '--exchange', '1', '--anomalies');
    expect(r.code).toBe(2);
    expect(r.err).toBe('mcptap: --anomalies and --exchange are views of their own: give one of them\n');
    expect(r.out).toBe('');
  });

  it('a row number given as an id: the error names the row and how to pick it', () => {
    const rows = JSON.parse(mcptap('show', file, '--json').out) as { rowid: number; id: unknown }[];
    const row = rows.find((r) => !rows.some((o) => o.id === r.rowid));
    expect(row).toBeDefined();
    const r = mcptap('show', file, '--exchange', String(row!.rowid));
    expect(r.code).toBe(4);
    expect(r.err).toContain(`has no exchange with id ${row!.rowid}; row #${row!.rowid} is id ${JSON.stringify(row!.id)}: --exchange '#${row!.rowid}'`);
    const byRow = mcptap('show', file, '--exchange', `#${row!.rowid}`);
    expect(byRow.code).toBe(0);
    expect(byRow.out).toMatch(new RegExp(`^exchange #${row!.rowid} `));
  });
});

describe('terminal safety', () => {
  it('shows control characters from recorded traffic escaped, never raw (a tool named with an escape sequence)', async () => {
    const evil = 'x\u001b]0;PWNED\u0007\u001b[2J\u009b';
    const path = join(dir, 'evil.db');
    const rec = new SqliteRecorder({
      path,
      recording: { transport: 'stdio', target: `node server.mjs ${evil}`, startedUs: T0, mcptapVersion: '0.1.0' },
      logger: silentLogger,
      clock: { nowUs: () => T0 + 1_000_000 },
    });
    const s = new EventScript();
    const ex = s.request(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: evil } }), 10, { target: evil });
    s.respond(ex, '{"jsonrpc":"2.0","id":1,"result":{"content":[]}}', 20, { outcome: 'ok' });
    for (const e of s.events) rec.onEvent(e);
    await rec.close();
    for (const args of [
      ['ls', path],
      ['show', path],
      ['show', path, '--exchange', '1'],
    ]) {
      const r = mcptap(...args);
      expect(r.code, args.join(' ')).toBe(0);
      expect(r.out).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
      expect(r.out).toContain('x\\u001b]0;PWNED\\u0007\\u001b[2J\\u009b');
    }
  });

  it('keeps the columns of ls and show aligned and their lines whole when a name holds escapes, a tab, a line break, wide or bidi characters', async () => {
    const odd = 'we\u001b[31mird\tna\nme';
    const path = join(dir, 'odd.db');
    const rec = stdioRecorder(path, 'node server.mjs\t--name\nx');
    const s = new EventScript();
    const calls = [
      { method: odd, target: undefined },
      { method: 'tools/call', target: odd },
      { method: 'ping', target: undefined },
      { method: 'tools/call', target: '漢字ツール' }, // two terminal columns each
      { method: 'tools/call', target: 'rtl\u202egnp.exe' }, // shows as "rtlexe.png" if left raw
    ];
    calls.forEach((c, i) => {
      const params = c.target ? { name: c.target } : {};
      const ex = s.request(JSON.stringify({ jsonrpc: '2.0', id: i + 1, method: c.method, params }), 10 + i, c.target ? { target: c.target } : {});
      s.respond(ex, `{"jsonrpc":"2.0","id":${i + 1},"result":{}}`, 20 + i, { outcome: 'ok' });
    });
    for (const e of s.events) rec.onEvent(e);
    await rec.close();
    const escaped = 'we\\u001b[31mird\\tna\\nme';
    // Each table keeps one line per row, and a column starts at the same terminal column on every line.
    const show = mcptap('show', path).out.trimEnd().split('\n');
    expect(show).toHaveLength(6);
    const outcomeAt = stringWidth(show[0]!.slice(0, show[0]!.indexOf('OUTCOME')));
    for (const line of show.slice(1)) expect(stringWidth(line.slice(0, line.indexOf(' ok ') + 1)), line).toBe(outcomeAt);
    expect(show.join('\n')).toContain(escaped);
    expect(show.join('\n')).toContain('rtl\\u202egnp.exe');
    // One-line fields elsewhere: the recording's target in ls, the method in one exchange's view.
    expect(mcptap('ls', path).out.split('\n')[0]).toBe('recording 1  stdio  node server.mjs\\t--name\\nx');
    const one = mcptap('show', path, '--exchange', '1').out;
    expect(one).toContain(`method ${escaped}`);
    const ls = mcptap('ls', path).out.split('\n');
    const head = ls.findIndex((l) => l.includes('METHOD'));
    const rows = ls.slice(head + 1).filter(Boolean);
    expect(rows.map((l) => l.trim().split(/\s{2,}/)[0])).toEqual(expect.arrayContaining([escaped, 'ping', `tools/call ${escaped}`]));
    // The N column ends at the header's N, counted in terminal columns (a tool's name may be wide).
    const nEnd = ls[head]!.indexOf('  N') + 3;
    for (const line of rows) expect(stringWidth(/^.*?\S\s{2,}\d+/.exec(line)?.[0] ?? ''), line).toBe(nEnd);
  });
});
