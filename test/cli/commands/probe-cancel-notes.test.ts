/**
 * `mcptap probe-cancel` against an SDK 1.x server as users write them (test/fixtures/notes-server.mjs,
 * real peer), over stdio and Streamable HTTP, its summarize honouring or ignoring cancellation:
 * - without --probe it never says honoured: SDK 1.x drops a cancelled handler's progress and result,
 *   so nothing is seen either way and the verdict is unknown (exit 1) with the reason; over stdio,
 *   CPU-bound work that goes on (--cpu --ignore-cancel) is ignored on the process's CPU time, and
 *   CPU-bound work that stops (--cpu) is not;
 * - with --probe in_flight: honoured (exit 0) for the honouring build, ignored (exit 1) for the other.
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

describe('probe-cancel on the SDK 1.x notes server over stdio', () => {
  it('without --probe: unknown for both builds (never honoured), ignored on the CPU for CPU-bound work that goes on', { timeout: 120_000 }, async () => {
    const ignoring = await probe(stdio(['--ignore-cancel']));
    expect(ignoring.stderr).toBe('');
    expect(ignoring.code).toBe(1);
    expect(ignoring.out).toMatchObject({ verdict: 'unknown', figures: { cancelled: 2, unknown: 2 } });
    expect(ignoring.out.reason).toMatch(/SDK 1\.x servers drop progress after a cancel.*give --probe TOOL/);
    const honouring = await probe(stdio());
    expect(honouring.code).toBe(1);
    expect(honouring.out).toMatchObject({ verdict: 'unknown', figures: { cancelled: 2, honoured: 0 } });
    const cpuIgnoring = await probe(stdio(['--ignore-cancel', '--cpu']));
    expect(cpuIgnoring.code).toBe(1);
    expect(cpuIgnoring.out).toMatchObject({ verdict: 'ignored', figures: { cancelled: 2 } });
    expect(cpuIgnoring.out.figures.evidence[0]).toMatch(
      /^ignored: notifications\/cancelled: cpu: the server process used \S+ of CPU in the \S+ after the grace/,
    );
    const cpuHonouring = await probe(stdio(['--cpu']));
    expect(cpuHonouring.code).toBe(1);
    expect(cpuHonouring.out).toMatchObject({ verdict: 'unknown', figures: { cancelled: 2, ignored: 0 } });
    console.log(
      [
        'stdio, no probe',
        summary('ignore', ignoring.out),
        summary('honour', honouring.out),
        summary('cpu ignore', cpuIgnoring.out),
        summary('cpu honour', cpuHonouring.out),
      ].join('; '),
    );
  });

  it('with --probe in_flight: honoured (exit 0) for the honouring build, ignored (exit 1) for the ignoring one', { timeout: 120_000 }, async () => {
    const honouring = await probe(stdio(), 'in_flight');
    expect(honouring.code).toBe(0);
    expect(honouring.out).toMatchObject({ verdict: 'honoured', figures: { cancelled: 2, honoured: 2 } });
    expect(honouring.out.figures.evidence.every((e) => /^honoured: notifications\/cancelled: probe: work stopped/.test(e))).toBe(true);
    const ignoring = await probe(stdio(['--ignore-cancel']), 'in_flight');
    expect(ignoring.code).toBe(1);
    expect(ignoring.out).toMatchObject({ verdict: 'ignored', figures: { cancelled: 2, ignored: 2 } });
    console.log(['stdio, --probe in_flight', summary('honour', honouring.out), summary('ignore', ignoring.out)].join('; '));
  });
});

describe('probe-cancel on the SDK 1.x notes server over Streamable HTTP', () => {
  let honour: NotesHttp;
  let ignore: NotesHttp;
  beforeAll(async () => {
    [honour, ignore] = await Promise.all([startNotesHttp(), startNotesHttp(['--ignore-cancel'])]);
  });
  afterAll(async () => {
    await Promise.all([honour?.stop(), ignore?.stop()]);
  });

  it('without --probe: unknown (exit 1) for both builds, never honoured', { timeout: 120_000 }, async () => {
    const ignoring = await probe(['--url', ignore.url]);
    expect(ignoring.code).toBe(1);
    expect(ignoring.out).toMatchObject({ verdict: 'unknown', figures: { cancelled: 2, unknown: 2 } });
    expect(ignoring.out.reason).toMatch(/give --probe TOOL/);
    const honouring = await probe(['--url', honour.url]);
    expect(honouring.code).toBe(1);
    expect(honouring.out).toMatchObject({ verdict: 'unknown', figures: { cancelled: 2, honoured: 0 } });
  });

  it('with --probe in_flight: honoured (exit 0) and ignored (exit 1)', { timeout: 120_000 }, async () => {
    const honouring = await probe(['--url', honour.url], 'in_flight');
    expect(honouring.code).toBe(0);
    expect(honouring.out).toMatchObject({ verdict: 'honoured', figures: { cancelled: 2, honoured: 2 } });
    const ignoring = await probe(['--url', ignore.url], 'in_flight');
    expect(ignoring.code).toBe(1);
    expect(ignoring.out).toMatchObject({ verdict: 'ignored', figures: { cancelled: 2, ignored: 2 } });
    console.log(['http, --probe in_flight', summary('honour', honouring.out), summary('ignore', ignoring.out)].join('; '));
  });
});
