/** Validation of a step's `cancel:` block and a scripted call's `cancel` option (see {@link CancelSpec}). */
import { bareDurationMessage, bareDurationNumber, parseDurationMs } from '../../data-file/duration.js';
import type { CancelSpec } from './scenario.js';
import { issueLines, Reader, type Path } from '../../data-file/validation.js';
import { McptapError } from '../../errors.js';

const CANCEL = ['after', 'afterProgress', 'close', 'observe', 'grace', 'probe'];

export const DEFAULT_OBSERVE_MS = 1000;
export const DEFAULT_GRACE_MS = 50;

/** `script`: a scripted call's option, which may also (or only) carry an AbortSignal. */
export function validateCancel(r: Reader, v: unknown, p: Path, script = false): CancelSpec | undefined {
  const o = r.obj(v, p, script ? [...CANCEL, 'signal'] : CANCEL);
  if (!o) return undefined;
  const afterMs = cancelDuration(r, o, 'after', p);
  const afterProgress = r.num(o, 'afterProgress', p, { integer: true, min: 1 });
  const signal = o.signal;
  if (signal !== undefined && !(signal instanceof AbortSignal)) return r.fail([...p, 'signal'], 'must be an AbortSignal (new AbortController().signal)');
  const both = afterMs !== undefined && afterProgress !== undefined;
  if (both || (signal === undefined && afterMs === undefined && afterProgress === undefined)) {
    const what = 'after (a duration, e.g. 300ms) or afterProgress (a count of progress notifications)';
    return r.fail(p, script ? `give one of ${what}, and/or a signal` : `give one of ${what}`);
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
  if (signal instanceof AbortSignal) spec.signal = signal;
  return spec;
}

/** A scripted call's `cancel` option, checked like a step's `cancel:`; throws (a script error) when it is wrong. */
export function scriptCancel(v: unknown): CancelSpec {
  const r = new Reader();
  const spec = validateCancel(r, v, ['cancel'], true);
  if (!spec || r.issues.length) throw new McptapError('MCPTAP_LOAD_SCENARIO_INVALID', `ctx.call: bad cancel option:\n${issueLines('script', r.issues)}`);
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
