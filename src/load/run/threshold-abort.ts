/**
 * k6's `abortOnFail`: thresholds judged on the live metrics while the run goes, and the run
 * stopped (as a signal stops it: in-flight iterations finish, the result says `stopped`) once one
 * of them fails; none is judged before its `delayAbortEval` from the start, nor on no data yet.
 */
import { judgeThresholds } from '../results/threshold-eval.js';
import type { LoadMetrics } from '../results/metrics.js';
import type { ThresholdSpec } from '../results/thresholds.js';

export interface AbortWatch {
  /** The caller's signal, or one that also fires when an abortOnFail threshold fails. */
  signal: AbortSignal | undefined;
  dispose(): void;
}

export interface AbortWatchOptions {
  metrics: LoadMetrics;
  /** Milliseconds since the run started. */
  elapsedMs(): number;
  /** How often the thresholds are judged (default 1000 ms). */
  intervalMs?: number;
}

export function watchAbortThresholds(specs: readonly ThresholdSpec[], o: AbortWatchOptions, outer: AbortSignal | undefined): AbortWatch {
  const watched = specs.filter((t) => t.abortOnFail);
  if (watched.length === 0) return { signal: outer, dispose: () => {} };
  const ctrl = new AbortController();
  const timer = setInterval(() => {
    const elapsed = o.elapsedMs();
    const due = watched.filter((t) => elapsed >= (t.delayAbortEvalMs ?? 0));
    const failed = judgeThresholds(o.metrics, elapsed, due).find((x) => !x.ok && x.observed !== null);
    if (!failed) return;
    clearInterval(timer);
    ctrl.abort(`threshold ${failed.scope}: ${failed.expression} failed (observed ${failed.observedText}; abortOnFail)`);
  }, o.intervalMs ?? 1000);
  timer.unref?.();
  return { signal: outer ? AbortSignal.any([outer, ctrl.signal]) : ctrl.signal, dispose: () => clearInterval(timer) };
}
