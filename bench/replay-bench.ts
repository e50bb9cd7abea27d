/**
 * Replay benchmark, two ratios measured in the same run, in interleaved rounds:
 *
 * 1. `mcptap replay --pace fast` of a recording of EXCHANGES exchanges against the reference server,
 *    exchanges/s, vs `mcptap load` driving the same mix (`from:` the same recording, the same number
 *    of requests and virtual users) at the same server. Both are timed the same way: wall clock of
 *    the child process, start to exit (both read the recording and start a client).
 * 2. `mcptap mock` serving that recording to `mcptap load` (the same scenario) vs the reference server
 *    itself, requests/s as the load run reports it.
 *
 * The recording is taken first, through `mcptap http --record` in front of the reference server, by
 * a closed-model load run of VUS virtual users (so the replay keeps about VUS requests in flight).
 * Targets: replay >= 0.8x load, mock >= 0.8x the reference server.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MCPTAP, median, stopChild, table } from './bench-util.js';

const EXCHANGES = 10_000;
const VUS = 8;
const ROUNDS = 3;

interface Listening {
  url: string;
  child: ChildProcess;
}

/** Starts `mcptap ARGS` and resolves with the first http:// URL it prints on stderr. */
function startListening(args: string[]): Promise<Listening> {
  const child = spawn(process.execPath, [MCPTAP, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  return new Promise((resolve, reject) => {
    let err = '';
    child.stderr!.on('data', (b: Buffer) => {
      err += b.toString();
      const m = /(http:\/\/[^\s"',]+)/.exec(err);
      if (m) resolve({ url: m[1]!, child });
    });
    child.once('exit', (code) => reject(new Error(`mcptap ${args[0]} exited ${code}: ${err}`)));
  });
}

/** Runs `mcptap ARGS` to its end; resolves with its wall time in ms, rejects on an unexpected exit code. */
function runTimed(args: string[], okCodes = [0]): Promise<number> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [MCPTAP, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (b: Buffer) => (err += b.toString()));
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => {
      if (okCodes.includes(code ?? -1)) resolve(performance.now() - t0);
      else reject(new Error(`mcptap ${args.join(' ')} exited ${code}: ${err.slice(-2000)}`));
    });
  });
}

function scenario(dir: string, name: string, url: string, from?: string): string {
  const mix = from
    ? `from: ${JSON.stringify(from)}\nsteps: []\n`
    : [
        'steps:',
        '  - { tool: echo, weight: 6, arguments: { text: "replay bench {{iteration}}" } }',
        '  - { tool: payload, weight: 2, arguments: { kb: 1 } }',
        '  - { method: tools/list, weight: 1 }',
        '  - { tool: delay, weight: 1, arguments: { ms: 0 } }',
        '',
      ].join('\n');
  const file = join(dir, `${name}.yaml`);
  writeFileSync(
    file,
    [
      `name: ${name}`,
      `target: { url: ${JSON.stringify(url)} }`,
      'era: 2026-07-28',
      'timeout: 10s',
      'phases:',
      `  - closed: { vus: ${VUS}, iterations: ${EXCHANGES / VUS} }`,
      mix,
    ].join('\n'),
  );
  return file;
}

function loadRps(resultFile: string): number {
  const r = JSON.parse(readFileSync(resultFile, 'utf8')) as { wallMs: number; overall: { count?: number; counters?: { requests?: number } } };
  const requests = r.overall.counters?.requests ?? r.overall.count ?? EXCHANGES;
  return requests / (r.wallMs / 1000);
}

/** Exchanges the replay sent and compared (its JSON report's counts), with how many differed. */
function replayCount(reportFile: string): number {
  const r = JSON.parse(readFileSync(reportFile, 'utf8')) as { counts: { exchanges: number; different: number; noResponse: number } };
  if (r.counts.noResponse > 0) throw new Error(`replay: ${r.counts.noResponse} exchanges without response`);
  return r.counts.exchanges;
}

export async function runReplayBench(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'mcptap-replay-bench-'));
  const ref = await startListening(['reference', '--http', '127.0.0.1:0', '--log-level', 'warn']);
  try {
    const recording = join(dir, 'traffic.db');
    const tap = await startListening(['http', '--upstream', ref.url, '--listen', '127.0.0.1:0', '--record', recording, '--log-level', 'info']);
    await runTimed(['load', scenario(dir, 'record', tap.url), '--progress', 'none']);
    await stopChild(tap.child, 'SIGTERM');

    const fromRecording = scenario(dir, 'same-mix', ref.url, recording);
    const replayMs: number[] = [];
    const replayed: number[] = [];
    const loadMs: number[] = [];
    const mockRps: number[] = [];
    const refRps: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const replay = async () => {
        const ms = await runTimed(['replay', recording, '--url', ref.url, '--pace', 'fast', '--json', join(dir, 'replay.json')], [0, 1]);
        replayed.push(replayCount(join(dir, 'replay.json')));
        return ms;
      };
      const load = () => runTimed(['load', fromRecording, '--progress', 'none']);
      if (round % 2 === 0) {
        replayMs.push(await replay());
        loadMs.push(await load());
      } else {
        loadMs.push(await load());
        replayMs.push(await replay());
      }

      const mock = await startListening(['mock', recording, '--http', '127.0.0.1:0']);
      try {
        const viaMock = async () => {
          await runTimed(['load', scenario(dir, 'mock', mock.url, recording), '--progress', 'none', '--json', join(dir, 'mock.json')]);
          mockRps.push(loadRps(join(dir, 'mock.json')));
        };
        const viaRef = async () => {
          await runTimed(['load', fromRecording, '--progress', 'none', '--json', join(dir, 'ref.json')]);
          refRps.push(loadRps(join(dir, 'ref.json')));
        };
        if (round % 2 === 0) {
          await viaMock();
          await viaRef();
        } else {
          await viaRef();
          await viaMock();
        }
      } finally {
        await stopChild(mock.child, 'SIGTERM');
      }
    }

    const replayRatios = replayMs.map((ms, i) => replayed[i]! / ms / (EXCHANGES / loadMs[i]!));
    const mockRatios = mockRps.map((r, i) => r / refRps[i]!);
    const rows = replayMs.map((ms, i) => [
      String(i + 1),
      (replayed[i]! / (ms / 1000)).toFixed(0),
      (EXCHANGES / (loadMs[i]! / 1000)).toFixed(0),
      replayRatios[i]!.toFixed(2),
      mockRps[i]!.toFixed(0),
      refRps[i]!.toFixed(0),
      mockRatios[i]!.toFixed(2),
    ]);
    const spread = (v: number[]) => `${Math.min(...v).toFixed(2)}-${Math.max(...v).toFixed(2)}`;
    return [
      `${EXCHANGES} exchanges recorded through mcptap http --record from the reference server (${VUS} VUs, 2026-07-28).`,
      table(['round', 'replay ex/s', 'load req/s', 'ratio', 'mock req/s', 'reference req/s', 'ratio'], rows),
      `replay --pace fast vs load, same mix: median ${median(replayRatios).toFixed(2)}x (spread ${spread(replayRatios)}; target >= 0.8x)`,
      `mock vs reference server, same client: median ${median(mockRatios).toFixed(2)}x (spread ${spread(mockRatios)}; target >= 0.8x)`,
    ].join('\n');
  } finally {
    await stopChild(ref.child, 'SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}
