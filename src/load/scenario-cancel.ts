/** Validation of a step's `cancel:` block (see {@link CancelSpec}). */
import { bareDurationMessage, bareDurationNumber, parseDurationMs } from './duration.js';
import type { CancelSpec } from './scenario.js';
import type { Reader, Path } from './validation.js';

const CANCEL = ['after', 'afterProgress', 'close', 'observe', 'grace', 'probe'];

export const DEFAULT_OBSERVE_MS = 1000;
export const DEFAULT_GRACE_MS = 50;

export function validateCancel(r: Reader, v: unknown, p: Path): CancelSpec | undefined {
  const o = r.obj(v, p, CANCEL);
  if (!o) return undefined;
  const afterMs = cancelDuration(r, o, 'after', p);
  const afterProgress = r.num(o, 'afterProgress', p, { integer: true, min: 1 });
  if ((afterMs === undefined) === (afterProgress === undefined)) {
    return r.fail(p, 'give one of after (a duration, e.g. 300ms) or afterProgress (a count of progress notifications)');
  }
  const spec: CancelSpec = {
    close: r.bool(o, 'close', p) ?? false,
    observeMs: cancelDuration(r, o, 'observe', p) ?? DEFAULT_OBSERVE_MS,
    graceMs: cancelDuration(r, o, 'grace', p) ?? DEFAULT_GRACE_MS,
  };
  if (afterMs !== undefined) spec.afterMs = afterMs;
  if (afterProgress !== undefined) spec.afterProgress = afterProgress;
  const probe = r.str(o, 'probe', p);
  if (probe !== undefined) spec.probe = probe;
  return spec;
}

function cancelDuration(r: Reader, o: Record<string, unknown>, key: string, p: Path): number | undefined {
  const v = o[key];
  if (v === undefined) return undefined;
  const ms = parseDurationMs(v);
  if (ms !== undefined) return ms;
  const bare = bareDurationNumber(v);
  return r.fail([...p, key], bare ? bareDurationMessage(bare) : `must be a duration like 300ms or 2s (got ${JSON.stringify(v)})`);
}
