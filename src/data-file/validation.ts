/**
 * A tiny reader for validating plain data with exact, located messages: every issue carries the
 * path of the field (`phases[1].open.rate`) and whether it is about the key itself (an unknown
 * field) or its value, so a loader can point at the right line of the file.
 */
export type Path = (string | number)[];

export interface Issue {
  path: Path;
  message: string;
  /** The issue is about the key (unknown field), not its value. */
  atKey?: boolean;
}

export function pathText(path: Path): string {
  let s = '';
  for (const p of path) s += typeof p === 'number' ? `[${p}]` : s === '' ? p : `.${p}`;
  return s || '(top level)';
}

export function isObj(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

export class Reader {
  readonly issues: Issue[] = [];

  fail(path: Path, message: string, atKey = false): undefined {
    this.issues.push({ path, message, atKey });
    return undefined;
  }

  /** An object whose keys must all be in `allowed`; unknown keys are reported (with a suggestion). */
  obj(v: unknown, path: Path, allowed: readonly string[]): Record<string, unknown> | undefined {
    if (!isObj(v)) return this.fail(path, `must be a mapping (got ${kind(v)})`);
    for (const k of Object.keys(v)) {
      if (allowed.includes(k)) continue;
      const near = nearest(k, allowed);
      this.fail([...path, k], `unknown field${near ? ` (did you mean "${near}"?)` : ''}; allowed here: ${allowed.join(', ')}`, true);
    }
    return v;
  }

  str(o: Record<string, unknown>, key: string, path: Path, required = false): string | undefined {
    const v = o[key];
    if (v === undefined) return required ? this.fail(path, `"${key}" is required`) : undefined;
    if (typeof v !== 'string' || v === '') return this.fail([...path, key], `must be a non-empty string (got ${kind(v)})`);
    return v;
  }

  num(o: Record<string, unknown>, key: string, path: Path, opts: { min?: number; integer?: boolean; required?: boolean } = {}): number | undefined {
    const v = o[key];
    if (v === undefined) return opts.required ? this.fail(path, `"${key}" is required`) : undefined;
    const ok = typeof v === 'number' && Number.isFinite(v) && (!opts.integer || Number.isInteger(v)) && v >= (opts.min ?? -Infinity);
    if (!ok)
      return this.fail(
        [...path, key],
        `must be ${opts.integer ? 'an integer' : 'a number'}${opts.min !== undefined ? ` >= ${opts.min}` : ''} (got ${show(v)})`,
      );
    return v as number;
  }

  bool(o: Record<string, unknown>, key: string, path: Path): boolean | undefined {
    const v = o[key];
    if (v === undefined) return undefined;
    if (typeof v !== 'boolean') return this.fail([...path, key], `must be true or false (got ${show(v)})`);
    return v;
  }

  oneOf<T extends string>(o: Record<string, unknown>, key: string, path: Path, values: readonly T[]): T | undefined {
    const v = o[key];
    if (v === undefined) return undefined;
    if (typeof v === 'string' && (values as readonly string[]).includes(v)) return v as T;
    return this.fail([...path, key], `must be one of ${values.join(', ')} (got ${show(v)})`);
  }

  stringMap(o: Record<string, unknown>, key: string, path: Path, allowNull = false): Record<string, string | null> | undefined {
    const v = o[key];
    if (v === undefined) return undefined;
    if (!isObj(v)) return this.fail([...path, key], `must be a mapping of names to strings (got ${kind(v)})`);
    const out: Record<string, string | null> = {};
    for (const [k, x] of Object.entries(v)) {
      if (typeof x === 'string' || (allowNull && x === null)) out[k] = x;
      else if (typeof x === 'number' || typeof x === 'boolean') out[k] = String(x);
      else this.fail([...path, key, k], `must be a string${allowNull ? ' or null (to remove the header)' : ''} (got ${kind(x)})`);
    }
    return out;
  }
}

export function kind(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  return typeof v === 'string' ? `"${v}"` : `${typeof v} ${String(v)}`;
}

function show(v: unknown): string {
  return typeof v === 'string' ? `"${v}"` : kind(v);
}

/** The allowed name closest to `k` (edit distance <= `within`, default 2), for "did you mean". */
export function nearest(k: string, allowed: readonly string[], within = 2): string | undefined {
  let best: string | undefined;
  let bestD = within + 1;
  for (const a of allowed) {
    const d = editDistance(k.toLowerCase(), a.toLowerCase());
    if (d < bestD) ((best = a), (bestD = d));
  }
  return best;
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length]!;
}

/** Locates a path in the source file (1-based line), when the source has lines. */
export type Locator = (path: Path, atKey: boolean) => number | undefined;

/** The first ten issues, one indented `file:line: field: message` line each. */
export function issueLines(source: string, issues: readonly Issue[], locate?: Locator): string {
  const lines = issues.slice(0, 10).map((i) => {
    const line = locate?.(i.path, i.atKey ?? false);
    return `  ${source}${line !== undefined ? `:${line}` : ''}: ${pathText(i.path)}: ${i.message}`;
  });
  const more = issues.length > 10 ? `\n  … and ${issues.length - 10} more` : '';
  return lines.join('\n') + more;
}
