/**
 * Checks by step and name: how many passed and failed, and the first failure's expected and got
 * values, so a report can say which check failed and why. Pure; merges like the counters.
 */
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

export class CheckStats {
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

  result(): CheckResult[] {
    return sortChecks([...this.byKey.values()].map((c) => structuredClone(c)));
  }
}

/** Adds two results' checks: counts summed, the first failure of whichever has one (a first). */
export function mergeChecks(a: readonly CheckResult[] | undefined, b: readonly CheckResult[] | undefined): CheckResult[] | undefined {
  if (!a && !b) return undefined;
  const out = new Map<string, CheckResult>();
  for (const c of [...(a ?? []), ...(b ?? [])]) {
    const key = `${c.step}\u0000${c.name}`;
    const m = out.get(key);
    if (!m) out.set(key, structuredClone(c));
    else {
      m.passed += c.passed;
      m.failed += c.failed;
      if (!m.firstFailure && c.firstFailure) m.firstFailure = { ...c.firstFailure };
    }
  }
  return sortChecks([...out.values()]);
}

function sortChecks(list: CheckResult[]): CheckResult[] {
  return list.sort((x, y) => x.step.localeCompare(y.step) || x.name.localeCompare(y.name));
}

/** `709/709 passed (100.0%)`. */
export function passRateText(c: CheckResult): string {
  const n = c.passed + c.failed;
  return `${c.passed}/${n} passed (${n ? ((100 * c.passed) / n).toFixed(1) : '0.0'}%)`;
}
