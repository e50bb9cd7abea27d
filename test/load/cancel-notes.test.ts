/**
 * A load scenario's `cancel:` step and the `cancel: honoured` threshold against an SDK 1.x server as
 * users write them (test/fixtures/notes-server.mjs, real peer), over stdio and Streamable HTTP, its
 * summarize honouring or ignoring cancellation:
 * - with `probe: in_flight`: honoured and the threshold passes for the honouring build; ignored and
 *   it fails for the ignoring one;
 * - without a probe: never honoured. SDK 1.x drops a cancelled handler's progress and result, so
 *   the verdict is unknown and the threshold fails with the reason; over stdio, CPU-bound work that
 *   goes on (--cpu --ignore-cancel) is ignored on the process's CPU time, unknown when it stops.
 * `mcptap probe-cancel` runs this same engine on the same calls: its CLI tests
 * (test/cli/commands/probe-cancel-notes) keep one case per verdict a user sees, and rest on these
 * for the rest of the matrix.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoadResult } from '../../src/load/results/load-result.js';
import { renderSummary } from '../../src/load/report/text-report.js';
import { runLoad } from '../../src/load/run/run-load.js';
import { notesCommand, startNotesHttp, type NotesHttp } from '../helpers/notes-peer.js';
import { scenario } from './scenario-fixtures.js';

/** Two summarize calls (1 s of work, 10 steps) cancelled after their first progress, watched for 1 s. */
function run(target: string, probe: boolean, expect = 'honoured'): Promise<LoadResult> {
  return runLoad(
    scenario(`
target: ${target}
timeout: 10s
phases:
  - closed: { vus: 1, iterations: 2 }
steps:
  - tool: summarize
    arguments: { seconds: 1 }
    cancel: { afterProgress: 1, observe: 1s${probe ? ', probe: in_flight' : ''} }
thresholds:
  tool:summarize: [ "cancel: ${expect}" ]
`),
  );
}

const stdio = (flags: string[] = []) => {
  const [command, ...args] = notesCommand(flags);
  return JSON.stringify({ command, args });
};

// The CPU verdict first and alone: it reads the server's CPU time.
describe('cancel steps on the SDK 1.x notes server over stdio, CPU-bound work', () => {
  it('no probe: ignored on the CPU when it goes on, unknown when it stops', { timeout: 120_000 }, async () => {
    const i = await run(stdio(['--cpu', '--ignore-cancel']), false);
    expect(i.cancel!.summarize).toMatchObject({ verdict: 'ignored', cancelled: 2 });
    expect(i.cancel!.summarize!.evidence[0]).toMatch(/^ignored: notifications\/cancelled: cpu: the server process used/);
    expect(i.thresholds).toMatchObject([{ ok: false }]);
    const h = await run(stdio(['--cpu']), false);
    expect(h.cancel!.summarize).toMatchObject({ verdict: 'unknown', cancelled: 2, ignored: 0, honoured: 0 });
    console.log(`stdio cpu, no probe: ignore ${i.cancel!.summarize!.evidence[0]}; honour ${h.cancel!.summarize!.evidence[0]}`);
  });
});

// The rest at once, both transports: every run has a stdio server of its own, or over HTTP the
// in_flight probe finds a call's work by its progress token (unique to the run).
for (const transport of ['stdio', 'http'] as const) {
  describe.concurrent(`cancel steps on the SDK 1.x notes server over ${transport}`, () => {
    let honour: NotesHttp | undefined;
    let ignore: NotesHttp | undefined;
    beforeAll(async () => {
      if (transport === 'http') [honour, ignore] = await Promise.all([startNotesHttp(), startNotesHttp(['--ignore-cancel'])]);
    });
    afterAll(async () => {
      await Promise.all([honour?.stop(), ignore?.stop()]);
    });
    const target = (ignoring: boolean) =>
      transport === 'stdio' ? stdio(ignoring ? ['--ignore-cancel'] : []) : `{ url: "${(ignoring ? ignore : honour)!.url}" }`;

    it('probe: in_flight: honoured and the threshold passes; ignored and it fails', { timeout: 120_000 }, async () => {
      const [h, i] = await Promise.all([run(target(false), true), run(target(true), true)]);
      expect(h.cancel!.summarize).toMatchObject({ verdict: 'honoured', cancelled: 2, honoured: 2 });
      expect(h.thresholds).toMatchObject([{ ok: true, observedText: 'honoured (2 of 2 cancelled)' }]);
      expect(i.cancel!.summarize).toMatchObject({ verdict: 'ignored', cancelled: 2, ignored: 2 });
      expect(i.thresholds).toMatchObject([{ ok: false, observedText: 'ignored (2 of 2 cancelled)' }]);
      console.log(`${transport} probe: honour ${h.cancel!.summarize!.evidence[0]}; ignore ${i.cancel!.summarize!.evidence[0]}`);
    });

    it('no probe: unknown for both builds, never honoured; the threshold fails with the reason', { timeout: 120_000 }, async () => {
      // Unknown is no evidence of ignored either (the third run's threshold).
      const [ignoring, honouring, e] = await Promise.all([run(target(true), false), run(target(false), false), run(target(true), false, 'ignored')]);
      for (const r of [ignoring, honouring]) {
        expect(r.cancel!.summarize).toMatchObject({ verdict: 'unknown', cancelled: 2, honoured: 0, ignored: 0, unknown: 2 });
        expect(r.thresholds).toMatchObject([{ ok: false }]);
        expect(r.thresholds[0]!.observedText).toMatch(
          /^unknown \(2 of 2 cancelled: notifications\/cancelled: SDK 1\.x servers drop progress after a cancel.*give --probe TOOL/,
        );
        expect(renderSummary(r)).toMatch(/summarize: UNKNOWN: no evidence either way: .*give --probe TOOL/);
      }
      expect(e.thresholds).toMatchObject([{ ok: false }]);
    });
  });
}
