/**
 * Match rules: what a replay (and the mock's request keys) may ignore or normalise before recorded
 * and new messages are compared. Data, not code: a YAML or JSON file (docs/replay-rules.md), each
 * rule one action, scoped to a method and/or tool or applying everywhere. Paths are JSON Pointers
 * into the JSON-RPC message (`/params/arguments/when`, `/result/content/0/text`, `*` for any one key
 * or index).
 */
import { McptapError } from '../errors.js';
import { issueLines, isObj, Reader, type Issue, type Locator, type Path } from '../data-file/validation.js';
import { parseYamlSource, readTextFile } from '../data-file/yaml-source.js';
import { forEachMatch, isUnder, parsePointer, type Segments } from '../data-file/json-pointer.js';
import { linearRegExp } from '../redact/linear-regexp.js';

export type NormaliserName = 'timestamp' | 'uuid' | 'duration';
export const NORMALISERS: readonly NormaliserName[] = ['timestamp', 'uuid', 'duration'];

export type RuleAction =
  /** Leave the value out of the comparison (and out of the mock's key). */
  | { kind: 'ignore'; path: Segments }
  /** Replace what looks like a timestamp / UUID / duration in strings with a placeholder. */
  | { kind: 'normalise'; as: NormaliserName; path?: Segments }
  /** Regex replace in strings. */
  | { kind: 'replace'; regex: RegExp; with: string; path?: Segments }
  /** Numbers equal within an absolute difference or a relative one (a fraction of the larger). */
  | { kind: 'tolerance'; path?: Segments; absolute?: number; relative?: number }
  /** Text contents that hold JSON are compared as JSON (and paths go on inside them). */
  | { kind: 'jsonInText'; path: Segments }
  /** Arrays compared as multisets. */
  | { kind: 'unordered'; path: Segments }
  /** Fields the new server added below this path are not differences. */
  | { kind: 'allowAdded'; path: Segments };

export interface MatchRule {
  method?: string;
  tool?: string;
  action: RuleAction;
  /** Where the rule was written (`rules.yaml:12`), for reports. */
  source?: string;
}

export interface MatchRules {
  readonly rules: readonly MatchRule[];
}

/** Where a message sits: the rules scoped to another method or tool do not apply to it. */
export interface RuleScope {
  method: string;
  tool?: string;
}

export const NO_RULES: MatchRules = { rules: [] };

const DEFAULT_JSON_TEXT: Segments = ['result', 'content', '*', 'text'];

/** ISO-8601 dates and date-times, a time of day, epoch seconds or milliseconds. */
const NUMERIC_TIMESTAMP =
  /\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?|\b\d{1,2}:\d{2}:\d{2}(?:\.\d+)?\b|\b1\d{9}(?:\d{3})?\b/;
const DAY = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const MONTH = '(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)';
/** JavaScript's Date.toString() (`Sat Dec 05 2026 12:10:01 GMT+0000 (Coordinated Universal Time)`) and RFC 1123 (`Sat, 05 Dec 2026 12:10:01 GMT`). */
const NAMED_DATE = String.raw`\b${DAY} ${MONTH} \d{2} \d{4} \d{2}:\d{2}:\d{2} GMT[+-]\d{4}(?: \([^()]*\))?|\b${DAY}, \d{1,2} ${MONTH} \d{4} \d{2}:\d{2}:\d{2} (?:GMT|UTC|[+-]\d{4})`;

const PATTERNS: Record<NormaliserName, RegExp> = {
  // Named dates first: their time of day would otherwise be taken alone.
  timestamp: new RegExp(`${NAMED_DATE}|${NUMERIC_TIMESTAMP.source}`, 'g'),
  uuid: /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi,
  duration: /\b\d+(?:\.\d+)?\s?(?:ns|us|µs|ms|s|sec|seconds|m|min|minutes|h)\b/g,
};

export function rulesFor(rules: MatchRules, scope: RuleScope): MatchRule[] {
  return rules.rules.filter((r) => (r.method === undefined || r.method === scope.method) && (r.tool === undefined || r.tool === scope.tool));
}

/**
 * A copy of a JSON-RPC message (or message-shaped object: `{method, params}` for a request,
 * `{result}` or `{error}` for a response) after the rules in scope: JSON in text parsed, ignored
 * paths removed, normalisers applied, unordered arrays sorted. Tolerances and added fields are
 * questions of comparison and are left to compare.ts. `side` is kept for rules that name one.
 */
export function normalise(rules: MatchRules, scope: RuleScope, value: unknown, _side: 'request' | 'response' = 'response'): unknown {
  const inScope = rulesFor(rules, scope);
  let root: unknown = structuredClone(value);
  const holder = { root };
  const at = (path: Segments | undefined, f: (v: unknown) => unknown): void => {
    if (path === undefined || path.length === 0) holder.root = f(holder.root);
    else
      forEachMatch(
        holder.root,
        path,
        (parent, key) => ((parent as Record<string | number, unknown>)[key] = f((parent as Record<string | number, unknown>)[key])),
      );
  };
  for (const r of inScope) if (r.action.kind === 'jsonInText') at(r.action.path, parseJsonText);
  for (const r of inScope) {
    const a = r.action;
    if (a.kind === 'ignore') {
      if (a.path.length === 0) holder.root = undefined;
      else forEachMatch(holder.root, a.path, (parent, key) => (Array.isArray(parent) ? parent.splice(key as number, 1) : delete parent[key as string]));
    } else if (a.kind === 'normalise') at(a.path, (v) => mapStrings(v, (s) => s.replace(PATTERNS[a.as], `<${a.as}>`)));
    else if (a.kind === 'replace') at(a.path, (v) => mapStrings(v, (s) => s.replace(a.regex, a.with)));
  }
  for (const r of inScope) if (r.action.kind === 'unordered') at(r.action.path, sortArray);
  root = holder.root;
  return root;
}

/** The tolerance in scope for a number at `path`, if any: the rule with the longest path wins, then the later one. */
export function toleranceAt(rules: readonly MatchRule[], path: readonly (string | number)[]): { absolute?: number; relative?: number } | undefined {
  let found: { absolute?: number; relative?: number } | undefined;
  let depth = -1;
  for (const r of rules) {
    const a = r.action;
    if (a.kind !== 'tolerance' || (a.path !== undefined && !isUnder(a.path, path))) continue;
    const d = a.path?.length ?? 0;
    if (d >= depth) ((found = a), (depth = d));
  }
  return found;
}

/** Whether a field the new server added at `path` is tolerated. */
export function addedAllowed(rules: readonly MatchRule[], path: readonly (string | number)[]): boolean {
  return rules.some((r) => r.action.kind === 'allowAdded' && isUnder(r.action.path, path));
}

function parseJsonText(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  const t = v.trimStart();
  if (!t.startsWith('{') && !t.startsWith('[')) return v;
  try {
    return JSON.parse(v) as unknown;
  } catch {
    return v;
  }
}

function mapStrings(v: unknown, f: (s: string) => string): unknown {
  if (typeof v === 'string') return f(v);
  if (Array.isArray(v)) return v.map((x) => mapStrings(x, f));
  if (isObj(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, mapStrings(x, f)]));
  return v;
}

function sortArray(v: unknown): unknown {
  if (!Array.isArray(v)) return v;
  return v
    .map((x) => [canonical(x), x] as const)
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .map(([, x]) => x);
}

/** JSON with keys sorted: equal values give equal text. */
export function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (isObj(v))
    return `{${Object.keys(v)
      .sort()
      .filter((k) => v[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`)
      .join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

// ---- reading a rules file ------------------------------------------------------------------

const ACTIONS = ['ignore', 'normalise', 'replace', 'tolerance', 'jsonInText', 'unordered', 'allowAdded'] as const;
const RULE_FIELDS = ['method', 'tool', 'path', 'with', ...ACTIONS] as const;

/** Reads a rules file (YAML or JSON). Every problem is reported as `file:line: field: message`, exit 4. */
export function loadRules(file: string): MatchRules {
  const text = readTextFile(file, (why) => new McptapError('MCPTAP_REPLAY_RULES_INVALID', `cannot read the rules file ${file}: ${why}`));
  return parseRules(text, file);
}

export function parseRules(text: string, source: string): MatchRules {
  const { value, locate } = parseYamlSource(
    text,
    (line, what) => new McptapError('MCPTAP_REPLAY_RULES_INVALID', `${source}:${line}: not valid YAML or JSON: ${what}`),
  );
  const r = new Reader();
  const rules = readRules(value, r, (path) => {
    const line = locate(path, false);
    return line === undefined ? source : `${source}:${line}`;
  });
  if (r.issues.length > 0) throw rulesError(source, r.issues, locate);
  return { rules };
}

function readRules(doc: unknown, r: Reader, where: (p: Path) => string): MatchRule[] {
  if (doc === null || doc === undefined) return [];
  const top = r.obj(doc, [], ['version', 'rules']);
  if (!top) return [];
  if (top.version !== undefined && top.version !== 1) r.fail(['version'], `must be 1 (got ${JSON.stringify(top.version)})`);
  if (top.rules === undefined) return [];
  if (!Array.isArray(top.rules)) {
    // A mapping of rule ids is a check rules file: it belongs to --check (or mcptap check --rules).
    const checkFile = typeof top.rules === 'object' && top.rules !== null;
    const hint = checkFile ? ' (a mapping of rule ids is a check rules file: give it to replay --check, or to mcptap check --rules)' : '';
    return r.fail(['rules'], `must be a list of rules${hint}`) ?? [];
  }
  const out: MatchRule[] = [];
  top.rules.forEach((raw, i) => {
    const path: Path = ['rules', i];
    const o = r.obj(raw, path, RULE_FIELDS);
    if (!o) return;
    const actions = ACTIONS.filter((a) => o[a] !== undefined);
    if (actions.length !== 1) {
      r.fail(path, actions.length === 0 ? `needs one action: ${ACTIONS.join(', ')}` : `has ${actions.join(' and ')}: one action per rule`);
      return;
    }
    const action = readAction(actions[0]!, o, path, r);
    if (!action) return;
    const method = r.str(o, 'method', path);
    const tool = r.str(o, 'tool', path);
    out.push({ ...(method !== undefined ? { method } : {}), ...(tool !== undefined ? { tool } : {}), action, source: where(path) });
  });
  return out;
}

function readAction(kind: (typeof ACTIONS)[number], o: Record<string, unknown>, path: Path, r: Reader): RuleAction | undefined {
  const pointer = (key: string): Segments | undefined => {
    const v = o[key];
    if (v === undefined) return undefined;
    if (typeof v !== 'string') return r.fail([...path, key], 'must be a JSON Pointer such as /result/content/*/text');
    try {
      return parsePointer(v);
    } catch (err) {
      return r.fail([...path, key], (err as Error).message);
    }
  };
  const onlyWith = (allowed: string[]): boolean => {
    for (const k of ['path', 'with']) if (o[k] !== undefined && !allowed.includes(k)) return r.fail([...path, k], `does not apply to "${kind}"`, true) ?? false;
    return true;
  };
  switch (kind) {
    case 'ignore':
    case 'unordered':
    case 'allowAdded': {
      const p = pointer(kind);
      return p && onlyWith([]) ? { kind, path: p } : undefined;
    }
    case 'jsonInText': {
      if (o.jsonInText !== true) return r.fail([...path, 'jsonInText'], 'must be true (use path to say where; default /result/content/*/text)');
      const p = o.path === undefined ? DEFAULT_JSON_TEXT : pointer('path');
      return p && onlyWith(['path']) ? { kind, path: p } : undefined;
    }
    case 'normalise': {
      const as = r.oneOf(o, 'normalise', path, NORMALISERS);
      const p = pointer('path');
      return as && onlyWith(['path']) ? { kind, as, ...(p ? { path: p } : {}) } : undefined;
    }
    case 'replace': {
      const src = r.str(o, 'replace', path);
      const w = o.with;
      if (typeof w !== 'string') return r.fail([...path, 'with'], '"with" (the replacement text) is required and must be a string');
      let regex: RegExp;
      try {
        // Linear time whatever the pattern: a replay or mock never hangs on a rule (see linear-regexp.ts).
        regex = linearRegExp(src ?? '');
      } catch (err) {
        return r.fail([...path, 'replace'], (err as Error).message);
      }
      const p = pointer('path');
      return src !== undefined && onlyWith(['path', 'with']) ? { kind, regex, with: w, ...(p ? { path: p } : {}) } : undefined;
    }
    case 'tolerance': {
      const v = o.tolerance;
      const p = pointer('path');
      if (!onlyWith(['path'])) return undefined;
      const m = typeof v === 'string' ? /^\s*(\d+(?:\.\d+)?)\s*%\s*$/.exec(v) : null;
      if (typeof v === 'number' && Number.isFinite(v) && v >= 0) return { kind, absolute: v, ...(p ? { path: p } : {}) };
      if (m) return { kind, relative: Number(m[1]) / 100, ...(p ? { path: p } : {}) };
      return r.fail([...path, 'tolerance'], `must be an absolute difference (0.5) or a percentage ("5%") (got ${JSON.stringify(v)})`);
    }
  }
}

function rulesError(source: string, issues: readonly Issue[], locate: Locator): McptapError {
  return new McptapError(
    'MCPTAP_REPLAY_RULES_INVALID',
    `${source} is not a valid rules file (see docs/replay-rules.md):\n${issueLines(source, issues, locate)}`,
  );
}
