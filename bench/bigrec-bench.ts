/**
 * A big recording in bounded memory: builds a recording of 1,000,000 `tools/call echo` exchanges
 * (`--exchanges N` or MCPTAP_BIGREC_EXCHANGES) by `mcptap import` of a generated JSONL (stdio, one
 * call every millisecond, answers as the reference server gives them), then runs `mcptap ls`,
 * `show --limit 100`, `export --jsonl`, `check --json` (also its messages per second: at least 50,000), `replay --pace fast` against `mcptap reference --stdio` and
 * `mock --stdio` (its start-up, then a few calls: the first, middle and last echo), `mcp --stdio` (its tools: pages, the slowest, summaries), each as its own process, and reports each one's peak RSS (VmHWM from /proc, polled every 20 ms
 * while it runs; the replayed server's is shown apart). Target: 200 MB (10^6 bytes) each. Replaying
 * a million calls takes longer than the other commands together: `--replay-until` (default 100s,
 * the first 100,000 calls; `all` for every one) caps it with replay's own --until. `--only ls,replay`
 * (MCPTAP_BIGREC_ONLY) runs only the commands whose names start so (ls, show, export, check, replay, mock, mcp, ui).
 * `ui`: `mcptap ui`'s API calls timed and its peak RSS (ui-bench.ts; its own targets: 1 s a page, 300 MB).
 * With check, also where its time goes, in process: the rows and JSON.parse alone (the floor), the
 * event stream, the whole check (check-floor.ts; MCPTAP_BIGREC_FLOOR_ROUNDS interleaved rounds, 3).
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { hwmKiB, MCPTAP, table } from './bench-util.js';
import { checkStages, stageRows } from './check-floor.js';
import { runUiBench, UI_PAGE_TARGET_MS, UI_RSS_TARGET_BYTES } from './ui-bench.js';

const TARGET_BYTES = 200e6;
const POLL_MS = 20;
/** `mcptap check`: messages judged per second over the whole run (issue 32's target). */
const CHECK_TARGET_RATE = 50_000;
/** Rounds of the in-process stages of check (check-floor.ts; MCPTAP_BIGREC_FLOOR_ROUNDS). */
const FLOOR_ROUNDS = Number(process.env.MCPTAP_BIGREC_FLOOR_ROUNDS) || 3;

function options(argv: string[]): { exchanges: number; replayUntil: string; only?: string[] } {
  const arg = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  return {
    exchanges: Number(arg('exchanges') ?? process.env.MCPTAP_BIGREC_EXCHANGES ?? 1_000_000),
    replayUntil: arg('replay-until') ?? process.env.MCPTAP_BIGREC_REPLAY_UNTIL ?? '100s',
    ...((arg('only') ?? process.env.MCPTAP_BIGREC_ONLY) ? { only: (arg('only') ?? process.env.MCPTAP_BIGREC_ONLY)!.split(',') } : {}),
  };
}

/** JSONL of `n` echo calls over stdio, one a millisecond, each answered 200 µs later. */
export function writeJsonl(path: string, n: number): void {
  const fd = openSync(path, 'w');
  const t0 = Date.parse('2026-12-03T00:00:00Z') * 1000;
  const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
  const serverInfo = { 'io.modelcontextprotocol/serverInfo': { name: 'mcptap-reference', version: '0.1.0' } };
  let chunk = JSON.stringify({ mcptap: 'jsonl', version: 1, recording: { transport: 'stdio', target: 'mcptap reference --stdio' } }) + '\n';
  for (let i = 1; i <= n; i++) {
    const t = t0 + i * 1000;
    const text = `hello ${i}`;
    chunk +=
      JSON.stringify({ t, dir: 'c2s', message: { jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'echo', arguments: { text }, _meta: meta } } }) +
      '\n' +
      JSON.stringify({
        t: t + 200,
        dir: 's2c',
        message: { result: { content: [{ type: 'text', text }], resultType: 'complete', _meta: serverInfo }, jsonrpc: '2.0', id: i },
      }) +
      '\n';
    if (chunk.length > 1 << 20) {
      writeSync(fd, chunk);
      chunk = '';
    }
  }
  writeSync(fd, chunk);
  closeSync(fd);
}

function descendants(pid: number): number[] {
  const out: number[] = [];
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        for (const kid of readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ').filter(Boolean).map(Number)) out.push(kid, ...descendants(kid));
      } catch {
        /* thread gone */
      }
    }
  } catch {
    /* process gone */
  }
  return out;
}

interface Run {
  /** Exit code, or the signal that ended it. */
  code: number | string;
  seconds: number;
  /** Peak RSS of the mcptap process, bytes. */
  peak: number;
  /** Highest peak RSS among the processes it started (the replayed server), bytes. */
  childPeak: number;
  stderrTail: string;
  /** Lines it wrote to stdout, when `input` was given. */
  stdoutLines: string[];
}

/** Runs `mcptap ARGS` (stdin `input` or none, stdout kept only then) and polls its and its children's VmHWM. */
function measure(args: string[], cwd: string, input?: string): Promise<Run> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, [MCPTAP, ...args], {
      cwd,
      stdio: [input === undefined ? 'ignore' : 'pipe', input === undefined ? 'ignore' : 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout?.on('data', (b: Buffer) => (out += b.toString()));
    child.stdin?.end(input);
    let err = '';
    // A crash's reason (V8's `FATAL ERROR: ...`) comes before a long native stack: kept apart.
    let fatal = '';
    child.stderr!.on('data', (b: Buffer) => {
      err = (err + b.toString()).slice(-2000);
      fatal ||= /FATAL ERROR[^\n]*/.exec(err)?.[0] ?? '';
    });
    const peaks = new Map<number, number>();
    const poll = () => {
      for (const pid of [child.pid!, ...descendants(child.pid!)]) peaks.set(pid, Math.max(peaks.get(pid) ?? 0, hwmKiB(pid)));
    };
    const timer = setInterval(poll, POLL_MS);
    poll();
    child.once('exit', (code, signal) => {
      clearInterval(timer);
      const childPeak = Math.max(0, ...[...peaks].filter(([pid]) => pid !== child.pid).map(([, kb]) => kb));
      resolve({
        code: code ?? String(signal),
        seconds: (performance.now() - t0) / 1000,
        peak: (peaks.get(child.pid!) ?? 0) * 1024,
        childPeak: childPeak * 1024,
        stderrTail: fatal || err.trim().split('\n').slice(-2).join(' | '),
        stdoutLines: out.split('\n').filter(Boolean),
      });
    });
  });
}

const mb = (b: number) => (b / 1e6).toFixed(0);

/** `mcptap mcp`'s tools on the big recording: pages, a filter, the slowest, one exchange, the summaries. */
const MCP_CALLS: Array<[string, Record<string, unknown>]> = [
  ['list_recordings', {}],
  ['find_exchanges', {}],
  ['find_exchanges', { tool: 'echo', minLatencyMs: 0.1, limit: 50 }],
  ['find_exchanges', { slowest: true, limit: 5 }],
  ['get_exchange', { row: 1 }],
  ['latency_summary', {}],
  ['anomalies', {}],
];

/** An initialize, then MCP_CALLS (get_exchange of the middle row); answered in order, then stdin ends. */
function mcpInput(exchanges: number): string {
  const init = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bigrec', version: '1' } };
  const lines: unknown[] = [
    { jsonrpc: '2.0', id: 0, method: 'initialize', params: init },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
  ];
  MCP_CALLS.forEach(([name, args], i) =>
    lines.push({
      jsonrpc: '2.0',
      id: i + 1,
      method: 'tools/call',
      params: { name, arguments: name === 'get_exchange' ? { row: Math.ceil(exchanges / 2) } : args },
    }),
  );
  return lines.map((l) => `${JSON.stringify(l)}\n`).join('');
}

export async function runBigrecBench(argv: string[] = []): Promise<string> {
  const { exchanges, replayUntil, only } = options(argv);
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-bigrec-'));
  try {
    const genT = performance.now();
    writeJsonl(join(dir, 'big.jsonl'), exchanges);
    const genS = (performance.now() - genT) / 1000;
    const imp = await measure(['import', 'big.jsonl', '--into', 'big.db'], dir);
    if (imp.code !== 0) throw new Error(`mcptap import exited ${imp.code}: ${imp.stderrTail}`);
    const dbBytes = statSync(join(dir, 'big.db')).size;
    const until = replayUntil === 'all' ? [] : ['--until', replayUntil];
    const runs: Array<[string, string[]]> = [
      ['ls', ['ls', 'big.db']],
      ['show --limit 100', ['show', 'big.db', '--limit', '100']],
      ['export --jsonl', ['export', 'big.db', '--jsonl', 'out.jsonl']],
      ['check --json', ['check', 'big.db', '--json', 'out.json']],
      [
        `replay --pace fast${until.length ? ` --until ${replayUntil}` : ''}`,
        ['replay', 'big.db', '--pace', 'fast', ...until, '--', process.execPath, MCPTAP, 'reference', '--stdio'],
      ],
    ];
    // The mock answers on stdio until its input ends: a few calls recorded at the start, middle and end.
    const asked = [1, Math.ceil(exchanges / 2), exchanges];
    const calls = asked.map(
      (n, i) => JSON.stringify({ jsonrpc: '2.0', id: i + 1, method: 'tools/call', params: { name: 'echo', arguments: { text: `hello ${n}` } } }) + '\n',
    );
    runs.push([`mock --stdio (${asked.length} calls)`, ['mock', 'big.db', '--stdio']]);
    runs.push([`mcp --stdio (${MCP_CALLS.length} tool calls)`, ['mcp', 'big.db', '--stdio']]);
    const rows: string[][] = [['import (building it)', String(imp.code), imp.seconds.toFixed(1), mb(imp.peak), '-', imp.peak <= TARGET_BYTES ? 'yes' : 'no']];
    let pass = true;
    const notes: string[] = [];
    for (const [name, args] of runs) {
      if (only && !only.some((o) => name.startsWith(o))) continue;
      const isMock = args[0] === 'mock';
      const isMcp = args[0] === 'mcp';
      const r = await measure(args, dir, isMock ? calls.join('') : isMcp ? mcpInput(exchanges) : undefined);
      if (isMcp) {
        const answered = r.stdoutLines.filter((l) => {
          const m = JSON.parse(l) as { id?: number; result?: { content?: unknown; isError?: boolean } };
          return (m.id ?? 0) >= 1 && m.result?.content !== undefined && m.result.isError !== true;
        });
        pass &&= answered.length === MCP_CALLS.length;
        if (answered.length !== MCP_CALLS.length)
          notes.push(`mcp: ${answered.length} of ${MCP_CALLS.length} tool calls answered: ${r.stderrTail.slice(0, 200)}`);
      }
      if (isMock) {
        const hits = r.stdoutLines.filter((l) => {
          const m = JSON.parse(l) as { id: number; result?: { content?: { text?: string }[] } };
          return m.result?.content?.[0]?.text === `hello ${asked[m.id - 1]}`;
        });
        pass &&= hits.length === asked.length;
        if (hits.length !== asked.length)
          notes.push(`mock: ${hits.length} of ${asked.length} calls got their recorded answer: ${r.stdoutLines.join(' ').slice(0, 200)}`);
      }
      const ok = r.peak <= TARGET_BYTES;
      pass &&= ok;
      rows.push([name, String(r.code), r.seconds.toFixed(1), mb(r.peak), r.childPeak ? mb(r.childPeak) : '-', ok ? 'yes' : 'NO']);
      if (args[0] === 'check') {
        // Every exchange is two messages; the target counts messages judged per second of the whole command.
        const rate = (2 * exchanges) / r.seconds;
        pass &&= rate >= CHECK_TARGET_RATE && (r.code === 0 || r.code === 1);
        notes.push(`check: ${Math.round(rate).toLocaleString('en')} messages/s (target >= ${CHECK_TARGET_RATE.toLocaleString('en')}), exit ${r.code}`);
      } else if (r.code !== 0) notes.push(`${name}: exit ${r.code}: ${r.stderrTail.slice(0, 200)}`);
      rmSync(join(dir, 'out.jsonl'), { force: true });
      rmSync(join(dir, 'out.json'), { force: true });
    }
    if (!only || only.some((o) => 'ui'.startsWith(o))) {
      const ui = await runUiBench(join(dir, 'big.db'), exchanges);
      pass &&= ui.pass;
      rows.push([
        'ui (the API calls below)',
        '-',
        '-',
        mb(ui.peakBytes),
        '-',
        ui.peakBytes < UI_RSS_TARGET_BYTES ? `yes (< ${mb(UI_RSS_TARGET_BYTES)})` : 'NO',
      ]);
      notes.push(
        `ui: the page's API calls, median of 3 (target for the first and filtered pages: under ${UI_PAGE_TARGET_MS} ms):`,
        table(['call', 'ms', 'rows', 'in target'], ui.rows),
        ...ui.notes,
      );
    }
    const stages = only && !only.some((o) => 'check'.startsWith(o)) ? [] : checkStages(join(dir, 'big.db'), 2 * exchanges, FLOOR_ROUNDS);
    if (stages.length) {
      notes.push(
        `check in this process, ${FLOOR_ROUNDS} interleaved rounds, messages/s, median (spread):`,
        table(['stage', 'wall', 'CPU (user + system)'], stageRows(stages)),
      );
    }
    return [
      `a recording of ${exchanges.toLocaleString('en')} tools/call echo exchanges (stdio), built by mcptap import of generated JSONL (generated in ${genS.toFixed(1)} s); ` +
        `file ${mb(dbBytes)} MB; ${cpus().length} CPUs, load average ${loadavg()[0]!.toFixed(2)}; peak RSS = VmHWM polled every ${POLL_MS} ms`,
      table(['command', 'exit', 'seconds', 'peak RSS MB', 'its server MB', `<= ${mb(TARGET_BYTES)} MB`], rows),
      ...notes,
      `target: ${only ? `${only.join(', ')} (--only)` : 'ls, show, export, check, replay, mock and mcp'} each within ${mb(TARGET_BYTES)} MB peak RSS (ui: ${mb(UI_RSS_TARGET_BYTES)} MB): ${pass ? 'PASS' : 'FAIL'}`,
    ].join('\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
