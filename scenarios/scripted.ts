/**
 * A scripted scenario: each iteration lists the tools, calls echo with a generated text, checks
 * the answer, then calls delay. Load TypeScript scenarios with `mcptap load scenarios/scripted.ts`.
 * (Outside this repository, import defineScenario from the mcptap package instead.)
 */
import { defineScenario } from '../src/load/scenario/define-scenario.js';

export default defineScenario({
  name: 'scripted',
  target: { reference: true },
  era: '2026-07-28',
  phases: [{ open: { rate: 20, duration: '10s' } }],
  async iteration(ctx) {
    await ctx.call('tools/list');
    const text = `hello #${ctx.iteration} (${Math.floor(ctx.random() * 1000)})`;
    const r = await ctx.tool('echo', { text });
    const content = (r?.result as { content?: { text?: string }[] } | undefined)?.content;
    ctx.check('echo returns the text', content?.[0]?.text === text);
    await ctx.tool('delay', { ms: 5 }, { step: 'short-delay' });
  },
  thresholds: { all: ['p(99) < 500ms', 'check_failures == 0'], 'step:short-delay': ['p(95) < 100ms'] },
});
