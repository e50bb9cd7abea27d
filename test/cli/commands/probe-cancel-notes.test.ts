/**
 * `mcptap probe-cancel` against an SDK 1.x server as users write them (test/fixtures/notes-server.mjs,
 * real peer), over stdio and Streamable HTTP, its summarize honouring or ignoring cancellation. What
 * a user sees of the command, once each:
 * - without --probe it never says honoured: SDK 1.x drops a cancelled handler's progress and result,
 *   so nothing is seen and the verdict is unknown (exit 1) with the reason; over stdio, CPU-bound
 *   work that goes on (--cpu --ignore-cancel) is ignored on the process's CPU time;
 * - with --probe in_flight: honoured (exit 0) for the honouring build, ignored (exit 1) for the other,
 *   over stdio and over HTTP (--url).
 * The verdict of every build on both transports, probe or none (the honouring build without a probe,
 * CPU-bound work that stops), is the load engine's, which probe-cancel runs: test/load/cancel-notes
 * asserts each in-process with the same calls (two summarize calls of 1 s, cancelled after the first
 * progress, watched for 1 s).
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { notesCommand, startNotesHttp, type NotesHttp } from '../../helpers/notes-peer.js';
import { ROOT } from '../../client/peers.js';

const run = promisify(execFile);
const BIN = path.join(ROOT, 'bin/mcptap.js');

interface Verdict {
  verdict: string;
  reason?: string;
  figures: { cancelled: number; honoured: number; ignored: number; unknown: number; evidence: string[] };
}

/** probe-cancel on summarize (1 s of work, 10 steps), twice, watched for 1 s: its exit code and JSON. */
async function probe(target: string[], probeTool?: string): Promise<{ code: number; out: Verdict; stderr: string }> {
  const args = ['probe-cancel', '--tool', 'summarize', '--args', '{"seconds": 1}', '--times', '2', '--observe', '1s', '--json', '-'];
  if (probeTool) args.push('--probe', probeTool);
  let r: { code: number; stdout: string; stderr: string };
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args, ...target], { timeout: 60_000 });
    r = { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    r = { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
  return { code: r.code, out: JSON.parse(r.stdout) as Verdict, stderr: r.stderr };
}

const stdio = (flags: string[] = []) => ['--', ...notesCommand(flags)];
const summary = (label: string, v: Verdict) => `${label}: ${v.verdict} [${v.figures.evidence[0] ?? ''}]`;

// Independent calls run at once (a stdio server each; over HTTP the in_flight probe finds a call's
// work by its progress token); the CPU verdict runs first and alone: it reads the server's CPU time.
describe.concurrent('probe-cancel on the SDK 1.x notes server', () => {
  let honour: NotesHttp;
  let ignore: NotesHttp;
  beforeAll(async () => {
    [honour, ignore] = await Promise.all([startNotesHttp(), startNotesHttp(['--ignore-cancel'])]);
  });
  afterAll(async () => {
    await Promise.all([honour?.stop(), ignore?.stop()]);
  });

  it.sequential('stdio, without --probe, CPU-bound work that goes on: ignored on the CPU (exit 1)', { timeout: 120_000 }, async () => {
    const cpuIgnoring = await probe(stdio(['--ignore-cancel', '--cpu']));
    expect(cpuIgnoring.code).toBe(1);
    expect(cpuIgnoring.out).toMatchObject({ verdict: 'ignored', figures: { cancelled: 2 } });
    expect(cpuIgnoring.out.figures.evidence[0]).toMatch(
      /^ignored: notifications\/cancelled: cpu: the server process used \S+ of CPU in the \S+ after the grace/,
    );
    console.log(['stdio, no probe', summary('cpu ignore', cpuIgnoring.out)].join('; '));
  });

  it('stdio, without --probe: unknown (exit 1), never honoured, with the reason', { timeout: 120_000 }, async () => {
    const ignoring = await probe(stdio(['--ignore-cancel']));
    expect(ignoring.stderr).toBe('');
    expect(ignoring.code).toBe(1);
    expect(ignoring.out).toMatchObject({ verdict: 'unknown', figures: { cancelled: 2, unknown: 2 } });
    expect(ignoring.out.reason).toMatch(/SDK 1\.x servers drop progress after a cancel.*give --probe TOOL/);
    console.log(['stdio, no probe', summary('ignore', ignoring.out)].join('; '));
  });

  for (const transport of ['stdio', 'http'] as const) {
    const target = (ignoring: boolean) => (transport === 'stdio' ? stdio(ignoring ? ['--ignore-cancel'] : []) : ['--url', (ignoring ? ignore : honour).url]);

    it(`${transport}, --probe in_flight, the honouring build: honoured (exit 0)`, { timeout: 120_000 }, async () => {
      const honouring = await probe(target(false), 'in_flight');
      expect(honouring.code).toBe(0);
      expect(honouring.out).toMatchObject({ verdict: 'honoured', figures: { cancelled: 2, honoured: 2 } });
      expect(honouring.out.figures.evidence.every((e) => /^honoured: notifications\/cancelled: probe: work stopped/.test(e))).toBe(true);
      console.log([`${transport}, --probe in_flight`, summary('honour', honouring.out)].join('; '));
    });

    it(`${transport}, --probe in_flight, the ignoring build: ignored (exit 1)`, { timeout: 120_000 }, async () => {
      const ignoring = await probe(target(true), 'in_flight');
      expect(ignoring.code).toBe(1);
      expect(ignoring.out).toMatchObject({ verdict: 'ignored', figures: { cancelled: 2, ignored: 2 } });
      console.log([`${transport}, --probe in_flight`, summary('ignore', ignoring.out)].join('; '));
    });
  }
});
