/**
 * Which step an iteration runs. `weighted` (the default) walks a smooth weighted round-robin
 * sequence by the iteration's index, so any N iterations that are a multiple of the total weight
 * contain each step exactly N·w/W times — known shares, exactly. `random` draws by weight from the
 * iteration's deterministic random stream. Both depend only on the index, so shards agree.
 */
import type { StepSpec } from './scenario.js';

const MAX_SEQUENCE = 100_000;

/** Which step iteration `index` runs. */
export interface StepPicker {
  pick(index: number, random: () => number): StepSpec;
}

export class StepMix implements StepPicker {
  private readonly sequence: number[] | undefined;
  private readonly cumulative: number[];
  private readonly total: number;

  constructor(
    readonly steps: readonly StepSpec[],
    mode: 'weighted' | 'random',
  ) {
    this.total = steps.reduce((a, s) => a + s.weight, 0);
    let acc = 0;
    this.cumulative = steps.map((s) => (acc += s.weight));
    this.sequence = mode === 'weighted' && this.total <= MAX_SEQUENCE ? smoothRoundRobin(steps.map((s) => s.weight)) : undefined;
  }

  /** The step for iteration `index`; `random` is consulted only in random mode. */
  pick(index: number, random: () => number): StepSpec {
    if (this.steps.length === 1) return this.steps[0]!;
    if (this.sequence) return this.steps[this.sequence[index % this.sequence.length]!]!;
    const r = random() * this.total;
    const i = this.cumulative.findIndex((c) => r < c);
    return this.steps[i === -1 ? this.steps.length - 1 : i]!;
  }
}

/** nginx's smooth weighted round-robin: spreads each step evenly over one cycle of length Σw. */
export function smoothRoundRobin(weights: readonly number[]): number[] {
  const total = weights.reduce((a, b) => a + b, 0);
  const current = weights.map(() => 0);
  const out: number[] = [];
  for (let n = 0; n < total; n++) {
    let best = 0;
    for (let i = 0; i < weights.length; i++) {
      current[i]! += weights[i]!;
      if (current[i]! > current[best]!) best = i;
    }
    current[best]! -= total;
    out.push(best);
  }
  return out;
}
