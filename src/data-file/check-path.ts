/**
 * Where a check looks in the response: a JSON Pointer (RFC 6901, as replay rules write paths),
 * or the older dotted form (`result.content[0].text`), read as the same pointer. Either is
 * rooted at the JSON-RPC response, so it starts at `result` or `error`; anything else is refused
 * at validation, never left to silently match nothing.
 */
import { isRecord } from '../model/jsonrpc.js';
import { formatPointer, parsePointer } from './json-pointer.js';

const ROOTS = ['result', 'error'];

/** The segments of a check path, or a message saying why it cannot be one. */
export function parseCheckPath(written: string): string[] | string {
  let segments: string[];
  if (written.startsWith('/')) segments = parsePointer(written);
  else if (/^[A-Za-z_$][\w$-]*(\.[\w$-]+|\[\d+\])*$/.test(written)) segments = written.replace(/\[(\d+)\]/g, '.$1').split('.');
  else return `must be a JSON Pointer such as /result/content/0/text (or the dotted result.content[0].text) (got ${JSON.stringify(written)})`;
  if (!ROOTS.includes(segments[0] ?? '')) {
    const hint = written.startsWith('/') ? `/result${written}` : `result.${written}`;
    return `starts at the response's result or error, e.g. ${JSON.stringify(hint)} (got ${JSON.stringify(written)})`;
  }
  return segments;
}

/** The pointer a parsed path is reported as. */
export const checkPathText = (segments: readonly string[]): string => formatPointer(segments);

/** The value at `segments`, or undefined when it is not there. */
export function valueAt(v: unknown, segments: readonly string[]): unknown {
  let cur = v;
  for (const key of segments) {
    if (Array.isArray(cur)) cur = /^(0|[1-9]\d*)$/.test(key) ? cur[Number(key)] : undefined;
    else if (isRecord(cur)) cur = Object.prototype.hasOwnProperty.call(cur, key) ? cur[key] : undefined;
    else return undefined;
  }
  return cur;
}
