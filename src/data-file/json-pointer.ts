/**
 * JSON Pointers (RFC 6901) with one extension for match rules: a `*` segment matches any one key
 * or array index. Paths are written as pointers everywhere a difference is reported.
 */

import { McptapError } from '../errors.js';

export type Segments = readonly string[];

/** Splits a pointer into unescaped segments; '' is the whole document. Throws on a pointer not starting with '/'. */
export function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new McptapError('MCPTAP_BAD_JSON_POINTER', `a JSON Pointer starts with "/" (got "${pointer}")`);
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

export function formatPointer(segments: readonly (string | number)[]): string {
  let out = '';
  for (const s of segments) out += '/' + String(s).replace(/~/g, '~0').replace(/\//g, '~1');
  return out;
}

/** Whether a concrete path is matched by a pattern (same length; `*` matches any one segment). */
export function matchesPattern(pattern: Segments, path: readonly (string | number)[]): boolean {
  if (pattern.length !== path.length) return false;
  for (let i = 0; i < pattern.length; i++) if (pattern[i] !== '*' && pattern[i] !== String(path[i])) return false;
  return true;
}

/** Whether `path` lies at or below a place the pattern matches. */
export function isUnder(pattern: Segments, path: readonly (string | number)[]): boolean {
  return path.length >= pattern.length && matchesPattern(pattern, path.slice(0, pattern.length));
}

/**
 * Calls `visit` for every place in `root` that `pattern` matches, with its parent container and key,
 * deepest first within a branch so that a visitor may delete or replace what it is given.
 */
export function forEachMatch(
  root: unknown,
  pattern: Segments,
  visit: (parent: Record<string, unknown> | unknown[], key: string | number, path: (string | number)[]) => void,
): void {
  walk(root, 0, []);
  function walk(node: unknown, depth: number, path: (string | number)[]): void {
    if (depth === pattern.length || node === null || typeof node !== 'object') return;
    const seg = pattern[depth]!;
    const last = depth === pattern.length - 1;
    if (Array.isArray(node)) {
      const indices = seg === '*' ? [...node.keys()] : /^(0|[1-9]\d*)$/.test(seg) && Number(seg) < node.length ? [Number(seg)] : [];
      // Backwards, so that deleting an element leaves the indices still to visit in place.
      for (const i of indices.reverse()) {
        if (last) visit(node, i, [...path, i]);
        else walk(node[i], depth + 1, [...path, i]);
      }
      return;
    }
    const obj = node as Record<string, unknown>;
    const keys = seg === '*' ? Object.keys(obj) : Object.prototype.hasOwnProperty.call(obj, seg) ? [seg] : [];
    for (const k of keys) {
      if (last) visit(obj, k, [...path, k]);
      else walk(obj[k], depth + 1, [...path, k]);
    }
  }
}
