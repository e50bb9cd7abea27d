/**
 * Checks on results: each failed check is counted (`check_failures`), never turned into an error
 * of another layer, so a scenario can expect errors without hiding them.
 */
import { isRecord } from '../model/jsonrpc.js';
import type { CallRecord } from './drivers/driver.js';
import type { CheckSpec } from './scenario.js';

export function applyChecks(checks: readonly CheckSpec[], rec: CallRecord): void {
  for (const c of checks) {
    rec.sample.checks++;
    if (!passes(c, rec)) rec.sample.checkFailures++;
  }
}

function passes(c: CheckSpec, rec: CallRecord): boolean {
  const res = rec.response;
  switch (c.kind) {
    case 'isError':
      return res?.result !== undefined && rec.sample.isError === c.expect;
    case 'error':
      return res?.error !== undefined && (c.code === undefined || res.error.code === c.code);
    case 'noError':
      return res !== undefined && res.error === undefined && !rec.sample.isError;
    case 'status':
      return rec.sample.httpStatus === c.status;
    case 'contains':
      return res !== undefined && JSON.stringify(res.result ?? res.error ?? null).includes(c.text);
    case 'path': {
      const v = dig(res, c.path);
      if (c.matches) return typeof v === 'string' && c.matches.test(v);
      if ('equals' in c) return JSON.stringify(v) === JSON.stringify(c.equals);
      return v !== undefined;
    }
  }
}

/** `result.content.0.text` or `result.content[0].text`. */
export function dig(v: unknown, path: string): unknown {
  let cur = v;
  for (const key of path
    .replace(/\[(\d+)\]/g, '.$1')
    .split('.')
    .filter(Boolean)) {
    if (Array.isArray(cur)) cur = cur[Number(key)];
    else if (isRecord(cur)) cur = cur[key];
    else return undefined;
  }
  return cur;
}
