/**
 * The scenario as it ran, as plain data for the result (and so the HTML report): target, era,
 * phases as written, the step mix and data sets. No argument templates, headers or environment:
 * they may hold secrets, and a result is shared. A URL keeps only scheme, host, port and path.
 */
import type { Phase, Scenario, TargetSpec } from './scenario.js';

export interface ScenarioPlan {
  source?: string;
  target: string;
  era: string;
  seed: number;
  mix: 'weighted' | 'random';
  scripted: boolean;
  from?: string;
  phases: { name: string; kind: Phase['kind']; text: string }[];
  steps: { name: string; method: string; target?: string; weight: number; progress: boolean; checks: number }[];
  data: string[];
}

export function describeScenario(s: Scenario): ScenarioPlan {
  const plan: ScenarioPlan = {
    target: describeTarget(s.target),
    era: s.era,
    seed: s.seed,
    mix: s.mix,
    scripted: s.iteration !== undefined,
    phases: s.phases.map((p) => ({ name: p.name, kind: p.kind, text: describePhase(p) })),
    steps: s.steps.map((st) => ({
      name: st.name,
      method: st.method,
      ...(st.target !== undefined ? { target: st.target } : {}),
      weight: st.weight,
      progress: st.progress,
      checks: st.checks.length,
    })),
    data: s.data.map((d) => `${d.name} (${d.format}, ${d.order})`),
  };
  if (s.source !== undefined) plan.source = s.source;
  if (s.from) plan.from = s.from.file;
  return plan;
}

function describeTarget(t: TargetSpec): string {
  if (t.kind === 'reference') return `mcptap reference server (${t.transport}${t.stall ? `, stall ${t.stall.everyMs}:${t.stall.forMs}` : ''})`;
  if (t.kind === 'stdio') return `stdio: ${t.command}`;
  try {
    const u = new URL(t.url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return 'http';
  }
}

const secs = (ms: number) => `${+(ms / 1000).toFixed(3)}s`;

function describePhase(p: Phase): string {
  if (p.kind === 'open') {
    const rate = p.fromRate === p.toRate ? `${p.fromRate}/s` : `${p.fromRate}/s → ${p.toRate}/s`;
    return `open: ${rate} for ${secs(p.durationMs)}, at most ${p.maxInFlight} in flight`;
  }
  if (p.kind === 'replay') return `replay at ${p.speed}x${p.maxInFlight !== undefined ? `, at most ${p.maxInFlight} in flight` : ''}`;
  const bits = [`${p.vus} virtual users`];
  if (p.iterations !== undefined) bits.push(`${p.iterations} iterations each`);
  if (p.durationMs !== undefined) bits.push(`for ${secs(p.durationMs)}`);
  if (p.thinkTime.maxMs > 0) bits.push(`think ${p.thinkTime.minMs}-${p.thinkTime.maxMs}ms`);
  if (p.rate !== undefined) bits.push(`capped at ${p.rate}/s`);
  return `closed: ${bits.join(', ')}`;
}
