/**
 * Cancelling from a script: each iteration races a slow `progress` call against a quick `echo`;
 * when the echo wins, the script aborts the slow call's signal and mcptap judges whether the
 * server stopped working (honoured) or went on (ignored), as a YAML step's `cancel:` does. A second
 * call is cancelled on a timer. Run with `mcptap load scenarios/cancel-scripted.ts`; try
 * `ignoreCancel: true` on the target (the threshold then fails, exit 3).
 * (Outside this repository, import defineScenario from the mcptap package instead.)
 */
import { defineScenario } from '../src/load/scenario/define-scenario.js';

export default defineScenario({
  name: 'cancel-scripted',
  target: { reference: { transport: 'http' } },
  era: '2026-07-28',
  timeout: '10s',
  phases: [{ closed: { vus: 4, iterations: 5 } }],
  async iteration(ctx) {
    const lost = new AbortController();
    const slow = ctx.tool('progress', { steps: 50, intervalMs: 20 }, { cancel: { signal: lost.signal, observe: '500ms', probe: 'in-flight' } });
    await ctx.tool('echo', { text: `quick #${ctx.iteration}` });
    lost.abort();
    await slow;
    await ctx.tool('progress', { steps: 50, intervalMs: 20 }, { step: 'timed', cancel: { after: '100ms', probe: 'in-flight' } });
  },
  thresholds: { 'tool:progress': ['cancel: honoured'], 'tool:echo': ['p(99) < 500ms'] },
});
