/**
 * Cancelling from a scripted iteration (`ctx.tool(..., {cancel})`): the same measures and verdict
 * as a YAML `cancel:` step, against the reference server in honour and ignore modes over HTTP, both
 * eras, by progress count, by time and by the script's own AbortSignal. The scenario is a real
 * TypeScript module loaded the way `mcptap load` loads it. Figures are printed, never asserted
 * against a time.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderSummary } from '../../src/load/report/text-report.js';
import { runLoad } from '../../src/load/run/run-load.js';
import { loadScenarioFile } from '../../src/load/scenario/scenario-loader.js';
import { startReferenceHttpServer, type ReferenceHttpServer } from '../../src/reference/reference-server.js';
import { createLogger } from '../../src/util/logger.js';
import { ROOT } from '../helpers/paths.js';

let honour: ReferenceHttpServer;
let ignore: ReferenceHttpServer;
let dir: string;
beforeAll(async () => {
  honour = await startReferenceHttpServer({ port: 0 });
  ignore = await startReferenceHttpServer({ port: 0, honorCancel: false });
  dir = mkdtempSync(path.join(os.tmpdir(), 'mcptap-cancel-script-'));
});
afterAll(async () => {
  await honour?.close();
  await ignore?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A scripted scenario: each iteration cancels three calls, by progress, by time, by its own signal. */
function scriptFile(url: string, era: string): string {
  const file = path.join(dir, `scripted-${era}-${Math.random().toString(36).slice(2)}.ts`);
  const define = path.join(ROOT, 'src/load/scenario/define-scenario.js');
  writeFileSync(
    file,
    `import { defineScenario } from ${JSON.stringify(define)};
const work = { steps: 40, intervalMs: 20 };
const watch = { observe: '300ms', probe: 'in-flight' } as const;
export default defineScenario({
  target: { url: ${JSON.stringify(url)} },
  era: ${JSON.stringify(era)},
  timeout: '10s',
  phases: [{ closed: { vus: 2, iterations: 2 } }],
  thresholds: { 'tool:progress': ['cancel: honoured'] },
  async iteration(ctx) {
    await ctx.tool('progress', work, { cancel: { afterProgress: 2, ...watch } });
    await ctx.tool('progress', work, { cancel: { after: '70ms', ...watch } });
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 70);
    await ctx.tool('progress', work, { step: 'by-signal', cancel: { signal: stop.signal, ...watch } });
  },
});
`,
  );
  return file;
}

const ms = (us: number) => `${(us / 1000).toFixed(1)}ms`;

describe.each(['legacy', '2026-07-28'])('cancel from a scripted iteration, %s era', (era) => {
  it('honour mode: honoured with a stop delay; ignore mode: ignored; the threshold follows', async () => {
    const h = await runLoad(await loadScenarioFile(scriptFile(honour.url, era)));
    expect(h.scriptErrors).toBeUndefined();
    const hg = h.cancel!.progress!;
    expect(hg).toMatchObject({ verdict: 'honoured', cancelled: 12, honoured: 12, ignored: 0, finalResults: 0 });
    expect(hg.stopDelay.summary.count).toBe(12);
    expect(hg.evidence.every((e) => e.includes('probe: work stopped'))).toBe(true);
    expect(h.thresholds).toMatchObject([{ ok: true, observedText: 'honoured (12 of 12 cancelled)' }]);
    expect(renderSummary(h)).toMatch(/progress: HONOURED: stop delay p50 \S+ p99 \S+/);

    const i = await runLoad(await loadScenarioFile(scriptFile(ignore.url, era)));
    const ig = i.cancel!.progress!;
    expect(ig).toMatchObject({ verdict: 'ignored', cancelled: 12, ignored: 12 });
    expect(ig.evidence.some((e) => e.includes('probe: still running'))).toBe(true);
    expect(i.thresholds).toMatchObject([{ ok: false }]);
    console.log(
      `scripted cancel, ${era}: honour: stop delay p50 ${ms(hg.stopDelay.summary.p50)} p99 ${ms(hg.stopDelay.summary.p99)}; ` +
        `ignore: work after the cancel p50 ${ms(ig.workAfter.summary.p50)} p99 ${ms(ig.workAfter.summary.p99)} (${ig.mechanisms.join(',')})`,
    );
  }, 60_000);
});

describe('a scripted cancel option that is wrong', () => {
  it('is a script error naming the field, and the call is not sent', async () => {
    const file = path.join(dir, 'bad-cancel.ts');
    const define = path.join(ROOT, 'src/load/scenario/define-scenario.js');
    writeFileSync(
      file,
      `import { defineScenario } from ${JSON.stringify(define)};
export default defineScenario({
  target: { url: ${JSON.stringify(honour.url)} },
  era: 'legacy',
  phases: [{ closed: { vus: 1, iterations: 1 } }],
  async iteration(ctx) {
    await ctx.tool('progress', { steps: 2 }, { cancel: { after: 300 } as never });
  },
});
`,
    );
    const warnings: string[] = [];
    const r = await runLoad(await loadScenarioFile(file), { logger: createLogger('warn', (l) => warnings.push(l)) });
    expect(r.scriptErrors).toBe(1);
    expect(r.cancel).toBeUndefined();
    expect(warnings.join('\n')).toMatch(/cancel\.after: 300 has no unit; write 300s or 300ms/);
  }, 30_000);
});
