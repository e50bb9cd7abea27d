/**
 * `mcptap load` and `mcptap merge-results` as users run them (the built CLI): exit codes, one-
 * paragraph messages without stack traces, JSON/JUnit outputs, and shards merged into one result.
 * Needs `npx tsc -p .` first (the CLI runs from dist/).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { LoadResult } from '../../src/load/results/load-result.js';
import { ROOT } from '../client/peers.js';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startEverything } from '../helpers/http-peers.js';
import { exitOf, signalAndWait } from '../helpers/signal-child.js';
import { exitCodeFor } from '../../src/cli/exit-codes.js';
import { runLoad } from '../../src/load/run/run-load.js';
import { loadScenarioFile } from '../../src/load/scenario/scenario-loader.js';
import { mergeResults } from '../../src/load/results/merge-results.js';
import { readLoadResult } from '../../src/cli/load-result-file.js';
import { parseShard, type ShardSpec } from '../../src/load/executors/iteration.js';
import { createLogger } from '../../src/util/logger.js';

const run = promisify(execFile);
const BIN = path.join(ROOT, 'bin/mcptap.js');

async function mcptap(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], { cwd, timeout: 45_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/**
 * What `mcptap merge-results FILE...` does with the files of `dir` before writing anything
 * (src/cli/commands/merge-results.ts): read each, merge them; the exit code of what it throws.
 */
async function mergeInProcess(files: string[]): Promise<{ code: number; message: string }> {
  try {
    mergeResults(await Promise.all(files.map((f) => readLoadResult(path.join(dir, f), 'MCPTAP_MERGE_UNREADABLE'))));
    return { code: 0, message: '' };
  } catch (err) {
    return { code: exitCodeFor(err), message: (err as Error).message };
  }
}

/**
 * What `mcptap load FILE` does with a file of `dir` (src/cli/commands/load.ts), in this process: the
 * exit code of what it throws, or its result; what its logger (at the CLI's level, warn) said.
 */
async function loadInProcess(file: string): Promise<{ code: number; message: string; result?: LoadResult; said: string[] }> {
  const said: string[] = [];
  try {
    const result = await runLoad(await loadScenarioFile(path.join(dir, file)), { logger: createLogger('warn', (l) => said.push(l)) });
    return { code: 0, message: '', result, said };
  } catch (err) {
    return { code: exitCodeFor(err), message: (err as Error).message, said };
  }
}

/** A `load --progress lines` run: `started` resolves once a progress line says iterations have started. */
function underWay(child: ChildProcess): { started: Promise<void>; exited: Promise<number | null>; stderr(): string } {
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const started = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no progress: ${stderr}`)), 30_000);
    child.stderr!.on('data', (b: Buffer) => {
      stderr += b.toString();
      if (/started [1-9]/.test(stderr)) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  return { started, exited, stderr: () => stderr };
}

let dir: string;
const write = (name: string, text: string) => writeFileSync(path.join(dir, name), text);

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'mcptap-load-cli-'));
});

/** Bad scenarios: file, text, the exit code, what the message says. */
const cases: [string, string, number, RegExp][] = [
  [
    'unknown-field.yaml',
    'target: { reference: true }\nphases:\n  - open: { rate: 1, duraton: 1s }\nsteps: [ { tool: echo } ]\n',
    4,
    /unknown-field\.yaml:3: phases\[0\]\.open\.duraton: unknown field \(did you mean "duration"\?\)/,
  ],
  [
    'bad-threshold.yaml',
    'target: { reference: true }\nphases: [ { open: { rate: 1, duration: 1s } } ]\nsteps: [ { tool: echo } ]\nthresholds: [ "p(99) < soon" ]\n',
    4,
    /bad-threshold\.yaml:4: thresholds\[0\]: cannot parse threshold "p\(99\) < soon"/,
  ],
  [
    'two-calls.yaml',
    'target: { reference: true }\nphases: [ { open: { rate: 1, duration: 1s } } ]\nsteps: [ { tool: echo, method: tools/list } ]\n',
    4,
    /two-calls\.yaml:3: steps\[0\]: give one of method, tool, prompt or uri \(got method and tool\)/,
  ],
  [
    'open-template.yaml',
    'target: { reference: true }\nphases: [ { open: { rate: 1, duration: 1s } } ]\nsteps: [ { tool: echo, arguments: { text: "x {{iteration" } } ]\n',
    4,
    /open-template\.yaml:3: .*"x \{\{iteration": a "\{\{" with no closing "\}\}"/,
  ],
  [
    'reversed-int.yaml',
    'target: { reference: true }\nphases: [ { open: { rate: 1, duration: 1s } } ]\nsteps: [ { tool: echo, arguments: { text: "{{random.int(9, 1)}}" } } ]\n',
    4,
    /random\.int\(MIN, MAX\) takes two integers with MIN <= MAX, got 9, 1/,
  ],
  // Found by probing: 1e12/s ran out of memory after 110 s; port 99999 was an internal error (exit 70).
  [
    'huge-rate.yaml',
    'target: { reference: true }\nphases: [ { open: { rate: 1e12, duration: 1s } } ]\nsteps: [ { tool: echo } ]\n',
    4,
    /huge-rate\.yaml:2: phases\[0\]\.open\.rate: 1000000000000\/s is past what one process drives \(at most 1000000\/s\): split the run with --shard/,
  ],
  [
    'bad-port.yaml',
    'target: { url: "http://127.0.0.1:99999/mcp" }\nphases: [ { open: { rate: 1, duration: 1s } } ]\nsteps: [ { tool: echo } ]\n',
    4,
    /bad-port\.yaml:1: target\.url: must be an http:\/\/ or https:\/\/ URL \(got "http:\/\/127\.0\.0\.1:99999\/mcp"\)/,
  ],
  [
    'zero-duration.yaml',
    'target: { reference: true }\nphases: [ { open: { rate: 5, duration: 0s } } ]\nsteps: [ { tool: echo } ]\n',
    4,
    /zero-duration\.yaml:2: phases\[0\]\.open\.duration: must be more than 0 \(got "0s"\)/,
  ],
  [
    'bare-duration.yaml',
    'target: { reference: true }\nphases:\n  - open: { rate: 5, duration: 30 }\nsteps: [ { tool: echo } ]\n',
    4,
    /bare-duration\.yaml:3: phases\[0\]\.open\.duration: 30 has no unit; write 30s or 30ms/,
  ],
  [
    'zero-timeout.yaml',
    'target: { reference: true }\ntimeout: 0\nphases: [ { open: { rate: 5, duration: 1s } } ]\nsteps: [ { tool: echo } ]\n',
    4,
    /zero-timeout\.yaml:2: timeout: must be more than 0 \(got 0\)/,
  ],
  [
    'quoted-command.yaml',
    `target: { command: "sh -c 'exit 3'" }\nphases: [ { open: { rate: 5, duration: 1s } } ]\nsteps: [ { tool: echo } ]\n`,
    4,
    /quoted-command\.yaml:1: target\.command: is split on spaces, not by a shell/,
  ],
  ['no-target.yaml', 'phases: [ { open: { rate: 1, duration: 1s } } ]\nsteps: [ { tool: echo } ]\n', 4, /no-target\.yaml(:\d+)?: target: is required/],
  [
    'no-data.yaml',
    'target: { reference: true }\ndata: { users: users.csv }\nphases: [ { open: { rate: 1, duration: 1s } } ]\nsteps: [ { tool: echo } ]\n',
    4,
    /no-data\.yaml:2: data\.users: data file .*users\.csv does not exist/,
  ],
  [
    'no-recording.yaml',
    'target: { reference: true }\nfrom: missing.db\nphases: [ { replay: { speed: 1 } } ]\n',
    4,
    /no-recording\.yaml: from: no such recording file: .*missing\.db\. Record one first: mcptap stdio --record FILE/,
  ],
  [
    'unreachable.yaml',
    'target: { url: "http://127.0.0.1:9/mcp" }\nphases: [ { open: { rate: 1, duration: 1s } } ]\nsteps: [ { tool: echo } ]\n',
    5,
    /cannot reach the target http:\/\/127\.0\.0\.1:9\/mcp: connection refused/,
  ],
  // With the era declared nothing is detected, but the target is still probed: every request failing at the transport would exit 0.
  [
    'unreachable-modern.yaml',
    'target: { url: "http://127.0.0.1:9/mcp" }\nera: 2026-07-28\nphases: [ { open: { rate: 1, duration: 1s } } ]\nsteps: [ { tool: echo } ]\n',
    5,
    /cannot reach the target http:\/\/127\.0\.0\.1:9\/mcp: connection refused/,
  ],
  [
    'unreachable-modern-raw.yaml',
    'target: { url: "http://127.0.0.1:9/mcp" }\nera: 2026-07-28\ndriver: raw\nphases: [ { closed: { vus: 1, duration: 1s } } ]\nsteps: [ { tool: echo } ]\n',
    5,
    /cannot reach the target http:\/\/127\.0\.0\.1:9\/mcp: connection refused/,
  ],
  // A stdio server that exits at once, era declared: said once (exit 5), not a child_exit per request.
  [
    'dead-stdio-modern.yaml',
    `target: { command: ${JSON.stringify(process.execPath)}, args: ["-e", "process.exit(3)"] }\nera: 2026-07-28\nphases: [ { open: { rate: 5, duration: 1s } } ]\nsteps: [ { tool: echo } ]\n`,
    5,
    /cannot use the stdio target ".*": server process exited \(code 3\)/,
  ],
];

describe.concurrent('bad scenarios: a clear message, the right exit code, no stack trace', () => {
  it('a URL that is no MCP endpoint (404 to everything), era detected: exit 5, as with a declared legacy era', async () => {
    // An ordinary web server, not an MCP server: what a wrong path reaches.
    const web = createServer((_req, res) => res.writeHead(404, { 'content-type': 'text/plain' }).end('not found'));
    await new Promise<void>((r) => web.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(web.address() as AddressInfo).port}/nope`;
      write('not-mcp.yaml', `target: { url: "${url}" }\nera: detect\nphases: [ { open: { rate: 5, duration: 1s } } ]\nsteps: [ { tool: echo } ]\n`);
      const r = await mcptap(['load', 'not-mcp.yaml', '--progress', 'none'], dir);
      expect(r.code).toBe(5);
      expect(r.stderr.trim()).toBe(`mcptap: ${url} refused the initialize handshake (HTTP 404); is /nope the server's MCP endpoint? (usually /mcp)`);
    } finally {
      web.close();
    }
  });

  it('a --progress-interval without a unit: exit 2, saying what to write instead', async () => {
    write('interval.yaml', 'target: { reference: true }\nphases: [ { open: { rate: 1, duration: 1s } } ]\nsteps: [ { tool: echo } ]\n');
    const r = await mcptap(['load', 'interval.yaml', '--progress', 'lines', '--progress-interval', '5'], dir);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe('mcptap: --progress-interval: 5 has no unit; write 5s or 5ms');
  });

  // Each case's message and exit code is the rule of the loader and the run (tested in-process
  // below, every case); how the CLI says it (`mcptap: ` and the message, the exit code of its
  // kind, no stack trace, nothing on stdout) is one path, tested end to end for each exit code and
  // for the check the load command makes itself (`from:`).
  const THROUGH_CLI = new Set(['unknown-field.yaml', 'no-recording.yaml', 'unreachable.yaml', 'dead-stdio-modern.yaml']);
  for (const [file, text, code, message] of cases.filter(([f]) => THROUGH_CLI.has(f))) {
    it(`${file} -> exit ${code} (the CLI)`, async () => {
      write(file, text);
      const r = await mcptap(['load', file, '--progress', 'none'], dir);
      expect(r.code).toBe(code);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).toMatch(/^mcptap: /m);
      expect(r.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
      expect(r.stdout).toBe('');
    });
  }
});

// One at a time: each watches process.stdout.
describe('bad scenarios in-process: the message and exit code of each', () => {
  // `from:` is checked by the load command itself, not the loader: its test is the CLI's above.
  for (const [file, text, code, message] of cases.filter(([f]) => f !== 'no-recording.yaml')) {
    it(`${file} -> exit ${code} (in-process: the loader and the run)`, async () => {
      const f = path.join(dir, `in-process-${file}`);
      writeFileSync(f, text);
      const printed: unknown[] = [];
      const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: unknown) => (printed.push(chunk), true));
      let caught: unknown;
      try {
        // What `mcptap load FILE` does before and for the run (src/cli/commands/load.ts).
        await runLoad(await loadScenarioFile(f));
      } catch (err) {
        caught = err;
      } finally {
        spy.mockRestore();
      }
      expect(caught).toBeInstanceOf(Error);
      expect(exitCodeFor(caught)).toBe(code);
      const said = (caught as Error).message;
      expect(said).toMatch(message);
      expect(said).not.toMatch(/\n\s+at .+:\d+:\d+/);
      expect(printed).toEqual([]);
    });
  }
});

describe('runs, thresholds, shards', () => {
  const scenario = `name: cli-shards
target: { reference: true }
era: 2026-07-28
phases:
  - open: { rate: 60, duration: 1s }
  - closed: { vus: 4, iterations: 5 }
steps:
  - { name: ok, tool: echo, weight: 3, arguments: { text: "it {{iteration}}" } }
  - { name: err, tool: fail, weight: 1 }
thresholds:
  all: [ "tool_errors < 30%", "transport_errors == 0" ]
`;

  // The runs below read what these two write (strict.yaml, shards.yaml, a.json, b.json, single.json).
  describe('runs', () => {
    it.concurrent('a failed threshold exits 3 and shows in the summary and the JUnit file', async () => {
      write('strict.yaml', scenario.replace('"tool_errors < 30%"', '"tool_errors < 1%"').replace('rate: 60', 'rate: 20'));
      const r = await mcptap(['load', 'strict.yaml', '--progress', 'none', '--junit', 'strict.xml', '--json', 'strict.json'], dir);
      expect(r.code).toBe(3);
      expect(r.stdout).toMatch(/thresholds: 1 of 2 FAILED/);
      expect(r.stdout).toMatch(/FAIL {2}all: tool_errors < 1% {2}\(observed 25\.00%\)/);
      const xml = readFileSync(path.join(dir, 'strict.xml'), 'utf8');
      expect(xml).toContain('<testsuite name="cli-shards" tests="2" failures="1"');
      expect(xml).toContain('<failure message="observed 25.00%"');
    });

    it.concurrent("two shards run in parallel, merged, give the single run's counts exactly", async () => {
      write('shards.yaml', scenario);
      const [single, a, b] = await Promise.all([
        mcptap(['load', 'shards.yaml', '--progress', 'none', '--json', 'single.json'], dir),
        mcptap(['load', 'shards.yaml', '--progress', 'none', '--shard', '1/2', '--json', 'a.json', '--junit', 'a.xml'], dir),
        mcptap(['load', 'shards.yaml', '--progress', 'none', '--shard', '2/2', '--json', 'b.json'], dir),
      ]);
      expect([single.code, a.code, b.code]).toEqual([0, 0, 0]);
      // A shard's thresholds are for merge-results to judge: its JUnit skips them, neither passed nor failed.
      const shardXml = readFileSync(path.join(dir, 'a.xml'), 'utf8');
      expect(shardXml).toMatch(/<testsuite name="[^"]+" tests="(\d+)" failures="0" errors="0" skipped="\1"/);
      expect(shardXml).toContain('judged on the merged result by mcptap merge-results');
      const m = await mcptap(['merge-results', 'a.json', 'b.json', '--json', 'merged.json'], dir);
      expect(m.code).toBe(0);
      expect(m.stdout).toMatch(/\[shards 1\/2, 2\/2\]/);
      const load = (f: string) => JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as LoadResult;
      const [s, merged, ra] = [load('single.json'), load('merged.json'), load('a.json')];
      expect(ra.phases.map((p) => p.scheduled)).toEqual([30, 10]);
      expect(merged.phases.map((p) => [p.scheduled, p.started, p.dropped])).toEqual(s.phases.map((p) => [p.scheduled, p.started, p.dropped]));
      for (const step of ['ok', 'err']) expect(merged.steps[step]!.counters).toEqual(s.steps[step]!.counters);
      expect(merged.overall.counters.requests).toBe(80);
      expect(merged.overall.counters.toolErrors).toBe(20);
      expect(merged.thresholds.every((t) => t.ok)).toBe(true);
    });
  });

  // Independent of one another: each writes files of its own.
  describe.concurrent('signals, flags and merges', () => {
    it('SIGTERM stops the run: in-flight requests finish, what ran is reported and written, and it exits 143, never 0', async () => {
      write('long.yaml', scenario.replace('rate: 60, duration: 1s', 'rate: 20, duration: 60s'));
      // Shard 2 of 2, so that it merges below with shard 1 of the full run.
      const child = spawn(
        process.execPath,
        [BIN, 'load', 'long.yaml', '--shard', '2/2', '--progress', 'lines', '--progress-interval', '500ms', '--json', 'long.json', '--junit', 'long.xml'],
        { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stdout = '';
      child.stdout!.on('data', (b: Buffer) => (stdout += b.toString()));
      const run = underWay(child);
      await run.started;
      child.kill('SIGTERM');
      expect(await run.exited).toBe(143);
      expect(run.stderr()).toContain('mcptap: SIGTERM: stopping (in-flight requests finish');
      expect(stdout).toContain('STOPPED EARLY (SIGTERM): the run is incomplete');
      const r = JSON.parse(readFileSync(path.join(dir, 'long.json'), 'utf8')) as LoadResult;
      expect(r.stopped).toBe('SIGTERM');
      // The second phase never started; the first scheduled only the arrivals that came due.
      expect(r.phases).toHaveLength(1);
      const [p] = r.phases;
      expect(p!.started).toBeGreaterThan(0);
      expect(p!.scheduled).toBe(p!.started + p!.dropped);
      // Arrivals after the stop are not drops (20/s against the reference server never runs short of capacity).
      expect(p!.dropped).toBe(0);
      expect(p!.scheduled).toBeLessThan(1200);
      expect(p!.completed).toBe(p!.started);
      expect(r.overall.counters.requests).toBe(p!.started);
      expect(readFileSync(path.join(dir, 'long.xml'), 'utf8')).toContain(
        '<error message="stopped early (SIGTERM): the figures and thresholds cover only what ran" type="stopped">',
      );

      // Merged with a shard that ran everything, the result is still a stopped one, with every phase.
      write('full.json', readFileSync(path.join(dir, 'a.json')));
      const m = await mcptap(['merge-results', 'full.json', 'long.json', '--json', 'merged-stopped.json'], dir);
      const merged = JSON.parse(readFileSync(path.join(dir, 'merged-stopped.json'), 'utf8')) as LoadResult;
      expect(merged.stopped).toBe('SIGTERM');
      expect(merged.phases).toHaveLength(2);
      expect(m.stdout).toContain('STOPPED EARLY (SIGTERM)');
    });

    it('Ctrl-C at a terminal (SIGINT to the whole process group) lets the calls in flight finish: the bundled server is not in that group', async () => {
      write(
        'ctrl-c.yaml',
        'name: ctrl-c\ntarget: { reference: true }\nera: 2026-07-28\nphases: [ { open: { rate: 20, duration: 60s } } ]\nsteps: [ { tool: delay, arguments: { ms: 300 } } ]\n',
      );
      // A group of its own, as a shell gives a foreground job; the signal goes to every process in it.
      const child = spawn(process.execPath, [BIN, 'load', 'ctrl-c.yaml', '--progress', 'lines', '--progress-interval', '500ms', '--json', 'ctrl-c.json'], {
        cwd: dir,
        stdio: ['ignore', 'ignore', 'pipe'],
        detached: true,
      });
      const run = underWay(child);
      await run.started;
      process.kill(-child.pid!, 'SIGINT');
      expect(await run.exited).toBe(130);
      const r = JSON.parse(readFileSync(path.join(dir, 'ctrl-c.json'), 'utf8')) as LoadResult;
      expect(r.stopped).toBe('SIGINT');
      // Every call that started (several were in flight: 300 ms each, 20 a second) got its answer.
      expect(r.overall.counters.transport).toEqual({});
      expect(r.overall.counters.ok).toBe(r.phases[0]!.started);
      expect(r.phases[0]!.completed).toBe(r.phases[0]!.started);
    });

    /** Processes of the silent "server" below (its command line is unique to this test). */
    const silentServers = () =>
      readdirSync('/proc')
        .filter((p) => /^\d+$/.test(p))
        .filter((p) => {
          try {
            return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('setTimeout(() => {}, 60001)');
          } catch {
            return false; // gone meanwhile
          }
        });

    it('Ctrl-C while a silent target is still being checked stops at once (exit 130), not after its 30 s start-up allowance', async () => {
      // A "server" that never answers: the first request waits up to 30 s for a process to start.
      write(
        'silent.yaml',
        `name: silent\ntarget: { command: [${JSON.stringify(process.execPath)}, "-e", "setTimeout(() => {}, 60001)"] }\ntimeout: 1s\nphases: [ { open: { rate: 5, duration: 1s } } ]\nsteps: [ { tool: echo } ]\n`,
      );
      const child = spawn(process.execPath, [BIN, 'load', 'silent.yaml', '--progress', 'none', '--json', 'silent.json'], {
        cwd: dir,
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
      const exited = exitOf(child);
      // Signal once the target runs (mcptap's handlers are in place by then), however slow the machine.
      for (let i = 0; i < 200 && silentServers().length === 0; i++) await new Promise((r) => setTimeout(r, 100));
      await new Promise((r) => setTimeout(r, 300));
      // Bounded well under the 30 s it used to take (it then exited 5, 'no response within 30000 ms').
      const code = await signalAndWait(child, exited, 'SIGINT');
      expect(code).toBe(130);
      expect(stderr).toContain('mcptap: stopped before the run started (SIGINT), while the target was still being checked');
      // The silent server went with the run (it ignores its stdin: it had to be signalled; left
      // alone it would run 60 s). Waited for, bounded (10 s), rather than a fixed pause.
      for (let i = 0; i < 100 && silentServers().length > 0; i++) await new Promise((r) => setTimeout(r, 100));
      const alive = silentServers();
      expect(alive).toEqual([]);
    });

    it('an unknown --progress mode is a usage error (exit 2), not silently a default', async () => {
      const r = await mcptap(['load', 'strict.yaml', '--progress', 'bogus'], dir);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/option '--progress <mode>' argument 'bogus' is invalid\. Allowed choices are auto, live, lines, none/);
      expect(r.stdout).toBe('');
    });

    it('a --metrics-linger without a unit is a usage error (exit 2), before anything runs', async () => {
      const r = await mcptap(['load', 'strict.yaml', '--progress', 'none', '--metrics', '127.0.0.1:0', '--metrics-linger', '30'], dir);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/--metrics-linger: .*30/);
      expect(r.stdout).toBe('');
    });

    it('a stdio target that exits mid-run is said once, with its exit and its last stderr line', async () => {
      // exit-on-tool.mjs runs the reference server until tools/call fail arrives: then it says so on stderr and exits 3.
      const command = [process.execPath, path.join(ROOT, 'test/fixtures/exit-on-tool.mjs'), 'fail', process.execPath, BIN, 'reference', '--stdio'];
      write('dies.yaml', `target: { command: ${JSON.stringify(command)} }\nphases: [ { closed: { vus: 1, iterations: 3 } } ]\nsteps: [ { tool: fail } ]\n`);
      const r = await mcptap(['load', 'dies.yaml', '--progress', 'none'], dir);
      const said = r.stderr.split('\n').filter((l) => l.includes('the stdio target exited mid-run'));
      expect(said).toEqual([
        'mcptap warn: the stdio target exited mid-run: server process exited (code 3); its stderr ended with: exit-on-tool: fail called, exiting; its calls fail from now on (transport child_exit)',
      ]);
      expect(r.stdout).toMatch(/child_exit/);
      // Its last words are shown escaped: a server's stderr never drives the terminal.
      const env = { EXIT_ON_TOOL_SAYS: 'dying \u001b[31mred\u001b[0m\r\u0007bell\n' };
      write(
        'dies-loudly.yaml',
        `target: { command: ${JSON.stringify(command)}, env: ${JSON.stringify(env)} }\nphases: [ { closed: { vus: 1, iterations: 3 } } ]\nsteps: [ { tool: fail } ]\n`,
      );
      const loud = await mcptap(['load', 'dies-loudly.yaml', '--progress', 'none'], dir);
      const line = loud.stderr.split('\n').find((l) => l.includes('the stdio target exited mid-run'))!;
      expect(line).toContain('its stderr ended with: dying \\u001b[31mred\\u001b[0m\\u000d\\u0007bell;');
      expect(line).not.toMatch(/[\u0000-\u001f]/);
    });

    it('a --metrics-linger with nothing serving metrics says it is ignored, and the run goes on', async () => {
      write('linger.yaml', scenario.replace('"tool_errors < 30%"', '"tool_errors < 1%"').replace('rate: 60', 'rate: 20'));
      const r = await mcptap(['load', 'linger.yaml', '--progress', 'none', '--metrics-linger', '2s'], dir);
      expect(r.code).toBe(3); // its threshold fails (the fail tool answers isError): the run itself went on
      expect(r.stderr).toContain('--metrics-linger waits for a Prometheus scrape, and without --metrics nothing serves one: ignored');
    });

    it('an unwritable --json or --junit path is refused before the run (exit 2), not found after it', async () => {
      const started = Date.now();
      const r = await mcptap(['load', 'shards.yaml', '--progress', 'none', '--json', 'no/such/dir/r.json'], dir);
      expect(r.code).toBe(2);
      expect(r.stderr.trim()).toMatch(/^mcptap: --json no\/such\/dir\/r\.json: cannot write there \(ENOENT\)$/);
      expect(r.stdout).toBe(''); // no run happened
      expect(Date.now() - started).toBeLessThan(20_000);
      // A directory is writable, but not as a file: found after the run, it lost the results (exit 4).
      const d = await mcptap(['load', 'shards.yaml', '--progress', 'none', '--junit', '.'], dir);
      expect(d.stderr.trim()).toBe('mcptap: --junit .: cannot write there (EISDIR)');
      expect(d.code).toBe(2);
      expect(d.stdout).toBe('');
    });

    // How the CLI refuses a set it cannot merge (exit 4, the message): end to end. Which sets are
    // refused, and why, is the rule of readLoadResult and mergeResults: in-process below.
    it('merge-results refuses an incomplete or mixed set of shards (exit 4)', async () => {
      const [r, mixed] = await Promise.all([mcptap(['merge-results', 'a.json'], dir), mcptap(['merge-results', 'single.json', 'a.json'], dir)]);
      expect(r.code).toBe(4);
      expect(r.stderr).toMatch(/^mcptap: cannot merge these results: shard 2\/2 is missing/);
      expect(r.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
      expect(mixed.code).toBe(4);
      expect(mixed.stderr).toContain('cannot merge these results: they are shards of differently split runs (of 1, of 2)');
    });

    it('merge-results says a damaged result is unreadable (exit 4), not an internal error (in-process)', async () => {
      write('damaged.json', JSON.stringify({ format: 'mcptap-load-result/1', scenario: 'shard' }));
      const r = await mergeInProcess(['damaged.json', 'a.json']);
      expect(r.code).toBe(4);
      expect(r.message).toBe(
        `${path.join(dir, 'damaged.json')}: an incomplete mcptap load result (no shards, phases, thresholdSpecs, scheduleLag, overall, methods, tools, steps)`,
      );
    });

    it('merge-results refuses the same result twice, and a shard of an edited version of the scenario (exit 4, in-process)', async () => {
      const twice = await mergeInProcess(['single.json', 'single.json']);
      expect(twice.code).toBe(4);
      expect(twice.message).toMatch(/cannot merge these results: the same result is given twice \(started /);
      // Same name, thresholds edited: its shard 2/2 used to be summed with shard 1/2 of the other version.
      // Run as `mcptap load edited.yaml --shard 2/2 --json edited.json` runs it, and written as it writes it.
      write('edited.yaml', scenario.replace('"tool_errors < 30%"', '"tool_errors < 31%"'));
      const edited = await runLoad(await loadScenarioFile(path.join(dir, 'edited.yaml')), { shard: parseShard('2/2') as ShardSpec });
      write('edited.json', JSON.stringify(edited, null, 1) + '\n');
      const mixed = await mergeInProcess(['a.json', 'edited.json']);
      expect(mixed.code).toBe(4);
      expect(mixed.message).toContain('cannot merge these results: they come from different versions of scenario "cli-shards" (thresholds differ)');
    });

    it('merge-results refuses results of different scenarios (in-process)', async () => {
      const other = JSON.parse(readFileSync(path.join(dir, 'a.json'), 'utf8')) as LoadResult;
      other.scenario = 'something-else';
      write('other.json', JSON.stringify(other));
      const r = await mergeInProcess(['b.json', 'other.json']);
      expect(r.code).toBe(4);
      expect(r.message).toMatch(/cannot merge these results: they come from different scenarios/);
    });
  });
});

describe.concurrent('the raw driver (autocannon) and timeouts', () => {
  it('a timeout is counted as one, with the time it waited; a timeout under 1 s is refused, not rounded up', async () => {
    const d = mkdtempSync(path.join(os.tmpdir(), 'mcptap-load-raw-'));
    const body = (timeout: string) =>
      `name: raw-timeouts\ntarget: { reference: true }\ndriver: raw\ntimeout: ${timeout}\nphases: [ { closed: { vus: 1, iterations: 2 } } ]\nsteps: [ { name: slow, tool: delay, arguments: { ms: 1500 } } ]\n`;
    writeFileSync(path.join(d, 'raw.yaml'), body('1s'));
    const r = await mcptap(['load', 'raw.yaml', '--progress', 'none', '--json', 'r.json'], d);
    expect(r.code).toBe(0);
    const result = JSON.parse(readFileSync(path.join(d, 'r.json'), 'utf8')) as LoadResult;
    // Before: class 'other', latency 0 us.
    expect(result.overall.counters.transport).toEqual({ timeout: 2 });
    expect(result.overall.latency.summary.min).toBeGreaterThanOrEqual(990_000); // 1 s, within the histogram's precision
    writeFileSync(path.join(d, 'short.yaml'), body('200ms'));
    const short = await mcptap(['load', 'short.yaml', '--progress', 'none'], d);
    expect(short.code).toBe(4);
    expect(short.stderr).toContain("the raw driver (autocannon) times requests out after 1 s at the least; the scenario's timeout is 200 ms");
  });
});

describe.concurrent('SSE streams in the summary', () => {
  it('streams of one event (server-everything answers every call as SSE): gaps say none, not "p50 0us"', async () => {
    const everything = await startEverything('streamableHttp');
    try {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'mcptap-load-sse-'));
      const file = path.join(dir, 'sse.yaml');
      writeFileSync(
        file,
        `name: sse\ntarget: { url: ${JSON.stringify(everything.url)} }\nera: legacy\nphases: [ { closed: { vus: 2, iterations: 6 } } ]\nsteps: [ { tool: echo, arguments: { message: hi } } ]\n`,
      );
      const r = await mcptap(['load', file, '--progress', 'none', '--json', path.join(dir, 'r.json')], dir);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const result = JSON.parse(readFileSync(path.join(dir, 'r.json'), 'utf8')) as LoadResult;
      expect(result.overall.sse?.final.summary.count).toBeGreaterThan(0);
      expect(result.overall.sse?.gap.summary.count).toBe(0);
      expect(r.stdout).toMatch(
        /sse \(\d+ streams\): headers p50 \S+ p99 \S+; first event p50 \S+ p99 \S+; final response .*\n\s+gaps none \(one event per stream\); progress every n\/a/,
      );
    } finally {
      await everything.stop();
    }
  });
});

// The pre-flight's refusals are runLoad's rule: in-process but for one (how the CLI says it, and
// that nothing runs or is written), end to end.
describe.concurrent('pre-flight and cancel verdicts', () => {
  it('a step naming a tool the server lacks exits 4 before any load, naming the nearest tool', async () => {
    write(
      'typo-tool.yaml',
      'target: { reference: { transport: stdio } }\nphases: [ { closed: { vus: 1, iterations: 5 } } ]\nsteps: [ { tool: echoo, arguments: { text: x } }, { tool: progres } ]\n',
    );
    const r = await mcptap(['load', 'typo-tool.yaml', '--progress', 'none', '--json', 'typo.json'], dir);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/the scenario calls tool "echoo" \(nor "progres"\), but .* has no such tool; the nearest is "echo"\. Its tools: .*in-flight/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    // Nothing ran: no summary, no result file.
    expect(r.stdout).toBe('');
    expect(readdirSync(dir)).not.toContain('typo.json');
  });

  it('preflight: false loads the unknown-tool error path on purpose: the calls run and fail as JSON-RPC errors (in-process)', async () => {
    write(
      'typo-tool-on-purpose.yaml',
      'target: { reference: { transport: stdio } }\nphases: [ { closed: { vus: 1, iterations: 5 } } ]\nsteps: [ { tool: echoo, arguments: { text: x } }, { tool: progres } ]\npreflight: false\n',
    );
    const onPurpose = await loadInProcess('typo-tool-on-purpose.yaml');
    expect(onPurpose.code).toBe(0);
    expect(onPurpose.result!.overall.counters.requests).toBe(5);
    expect(onPurpose.result!.overall.counters.errors).toBe(5);
  });

  it('a cancel probe naming no tool of the server is caught the same way (in-process)', async () => {
    write(
      'typo-probe.yaml',
      'target: { reference: { transport: stdio } }\nphases: [ { closed: { vus: 1, iterations: 1 } } ]\nsteps:\n  - tool: progress\n    cancel: { after: 50ms, probe: inflight }\n',
    );
    const r = await loadInProcess('typo-probe.yaml');
    expect(r.code).toBe(4);
    expect(r.message).toMatch(/calls tool "inflight", .* the nearest is "in-flight"/);
  });

  it('a prompt or a resource the server lacks exits 4 before any load, naming the nearest (reference over HTTP and stdio; in-process)', async () => {
    write(
      'typo-prompt.yaml',
      'target: { reference: { transport: http } }\nera: 2026-07-28\nphases: [ { closed: { vus: 1, iterations: 3 } } ]\nsteps: [ { prompt: gret, arguments: { name: x } } ]\n',
    );
    const p = await loadInProcess('typo-prompt.yaml');
    expect(p.code).toBe(4);
    expect(p.message).toMatch(/the scenario gets prompt "gret", but .* has no such prompt; the nearest is "greet"\. Its prompts: greet\./);
    write(
      'typo-uri.yaml',
      'target: { reference: { transport: stdio } }\nphases: [ { closed: { vus: 1, iterations: 3 } } ]\nsteps: [ { uri: "mcptap://reference/inof" } ]\n',
    );
    const u = await loadInProcess('typo-uri.yaml');
    expect(u.code).toBe(4);
    expect(u.message).toMatch(/reads resource "mcptap:\/\/reference\/inof", but .* has no such resource; the nearest is "mcptap:\/\/reference\/info"/);
  });

  it('a URI that only a resource template of server-everything matches passes; one no template matches is named (in-process)', async () => {
    const everything = await startEverything('streamableHttp');
    try {
      const scenario = (uri: string) =>
        `target: { url: ${JSON.stringify(everything.url)} }\nera: legacy\nphases: [ { closed: { vus: 1, iterations: 2 } } ]\nsteps: [ { uri: ${JSON.stringify(uri)} }, { prompt: simple-prompt } ]\n`;
      write('template-ok.yaml', scenario('demo://resource/dynamic/text/7'));
      write('template-miss.yaml', scenario('demo://resource/dynamik/text/7'));
      const [ok, miss] = await Promise.all([loadInProcess('template-ok.yaml'), loadInProcess('template-miss.yaml')]);
      expect(ok.said).toEqual([]);
      expect(ok.code).toBe(0);
      expect(ok.result!.overall.counters.errors).toBe(0);
      expect(miss.code).toBe(4);
      expect(miss.message).toMatch(
        /reads resource "demo:\/\/resource\/dynamik\/text\/7", but .* has no such resource and none of its 2 resource template\(s\) matches it/,
      );
    } finally {
      await everything.stop();
    }
  });

  // Alone: its verdict rests on the server's timers during a 200 ms observation.
  it.sequential('cancel: honoured fails (exit 3) against --ignore-cancel, with the verdict in the summary', async () => {
    write(
      'cancel-ignored.yaml',
      'target: { reference: { transport: stdio, ignoreCancel: true } }\nphases: [ { closed: { vus: 1, iterations: 2 } } ]\nsteps:\n  - tool: progress\n    arguments: { steps: 20, intervalMs: 20 }\n    cancel: { afterProgress: 1, observe: 200ms, probe: in-flight }\nthresholds:\n  tool:progress:\n    - cancel: honoured\n',
    );
    const r = await mcptap(['load', 'cancel-ignored.yaml', '--progress', 'none', '--json', 'cancel.json'], dir);
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(/progress: IGNORED: work went on after the cancel in 2 of 2: for at least p50 \S+ p99 \S+/);
    expect(r.stdout).toMatch(/FAIL {2}tool:progress: cancel: honoured {2}\(observed ignored \(2 of 2 cancelled\)\)/);
    const json = JSON.parse(readFileSync(path.join(dir, 'cancel.json'), 'utf8')) as LoadResult;
    expect(json.cancel!.progress).toMatchObject({ verdict: 'ignored', cancelled: 2, ignored: 2 });
  });
});
