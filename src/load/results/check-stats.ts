/**
 * Checks by step and name: how many passed and failed, and the first failure's expected and got
 * values, so a report can say which check failed and why. Pure; merges like the counters.
 */
import type { ResultPart } from './result-part.js';
import type { CheckVerdict } from './sample.js';

/** One check of one step over a run (the result's `checks` entries). */
export interface CheckResult {
  step: string;
  name: string;
  passed: number;
  failed: number;
  /** The first failing call's values. */
  firstFailure?: { expected: string; got: string };
}

/** Every check of a run: the result part of checks. */
export class CheckStats implements ResultPart<[string, CheckVerdict], CheckResult[]> {
  private readonly byKey = new Map<string, CheckResult>();

  record(step: string, v: CheckVerdict): void {
    const key = `${step}\u0000${v.name}`;
    let c = this.byKey.get(key);
    if (!c) this.byKey.set(key, (c = { step, name: v.name, passed: 0, failed: 0 }));
    if (v.ok) c.passed++;
    else {
      c.failed++;
      c.firstFailure ??= { expected: v.expected ?? 'a pass', got: v.got ?? 'a failure' };
    }
  }

  get size(): number {
    return this.byKey.size;
  }

  merge(o: CheckStats): void {
    for (const c of o.byKey.values()) this.add(c);
  }

  /** Counts summed, the first failure of whichever has one (a first). */
  private add(c: CheckResult): void {
    const key = `${c.step}\u0000${c.name}`;
    const m = this.byKey.get(key);
    if (!m) this.byKey.set(key, structuredClone(c));
    else {
      m.passed += c.passed;
      m.failed += c.failed;
      if (!m.firstFailure && c.firstFailure) m.firstFailure = { ...c.firstFailure };
    }
  }

  toJSON(): CheckResult[] {
    return [...this.byKey.values()].map((c) => structuredClone(c)).sort((x, y) => x.step.localeCompare(y.step) || x.name.localeCompare(y.name));
  }

  static fromJSON(list: readonly CheckResult[]): CheckStats {
    const s = new CheckStats();
    for (const c of list) s.add(c);
    return s;
  }
}

/** `709/709 passed (100.0%)`. */
export function passRateText(c: CheckResult): string {
  const n = c.passed + c.failed;
  return `${c.passed}/${n} passed (${n ? ((100 * c.passed) / n).toFixed(1) : '0.0'}%)`;
}
