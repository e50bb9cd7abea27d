/**
 * Argument templates: any JSON value whose strings may hold `{{ expression }}` placeholders.
 *
 *   {{ data.users.name }}         a field of this iteration's row of data set `users`
 *   {{ vu }} {{ iteration }} {{ phase }}
 *   {{ random.int(1, 100) }}  {{ random.float(0, 1) }}  {{ random.uuid }}
 *   {{ random.string(8) }}    {{ random.pick(a, b, "c d") }}
 *   {{ ... | number }}  {{ ... | string }}  {{ ... | json }}
 *
 * A string that is exactly one placeholder keeps the value's type (a number stays a number);
 * otherwise placeholders are interpolated as text. Templates are compiled once, at validation,
 * so a bad expression is reported with its file position and never at run time; templates with
 * no placeholder render to the same prebuilt value every time.
 */
import { counted } from '../../util/plural.js';
export interface TemplateContext {
  vu: number;
  iteration: number;
  phase: string;
  rows: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  /** Uniform in [0, 1), deterministic per iteration. */
  random(): number;
}

export interface CompiledTemplate {
  readonly isStatic: boolean;
  render(ctx: TemplateContext): unknown;
}

export interface TemplateIssue {
  /** Path inside the template value (keys and indices). */
  path: (string | number)[];
  message: string;
}

type Expr = (ctx: TemplateContext) => unknown;

const PLACEHOLDER = /\{\{(.*?)\}\}/g;

export function compileTemplate(value: unknown, dataNames: ReadonlySet<string>, issues: TemplateIssue[]): CompiledTemplate {
  const fn = compileValue(value, dataNames, issues, []);
  if (!fn) return { isStatic: true, render: () => value };
  return { isStatic: false, render: fn };
}

function compileValue(v: unknown, names: ReadonlySet<string>, issues: TemplateIssue[], path: (string | number)[]): Expr | undefined {
  if (typeof v === 'string') return compileString(v, names, issues, path);
  if (Array.isArray(v)) {
    const parts = v.map((x, i) => compileValue(x, names, issues, [...path, i]));
    if (parts.every((p) => !p)) return undefined;
    return (ctx) => v.map((x, i) => (parts[i] ? parts[i]!(ctx) : x));
  }
  if (v !== null && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, x, compileValue(x, names, issues, [...path, k])] as const);
    if (entries.every(([, , f]) => !f)) return undefined;
    return (ctx) => {
      const out: Record<string, unknown> = {};
      for (const [k, x, f] of entries) out[k] = f ? f(ctx) : x;
      return out;
    };
  }
  return undefined;
}

function compileString(s: string, names: ReadonlySet<string>, issues: TemplateIssue[], path: (string | number)[]): Expr | undefined {
  if (!s.includes('{{')) return undefined;
  const whole = /^\{\{(.*?)\}\}$/s.exec(s);
  if (whole && !whole[1]!.includes('{{')) return compileExpr(whole[1]!, names, issues, path);
  const pieces: (string | Expr)[] = [];
  let last = 0;
  for (const m of s.matchAll(PLACEHOLDER)) {
    if (m.index! > last) pieces.push(s.slice(last, m.index));
    pieces.push(compileExpr(m[1]!, names, issues, path) ?? (() => ''));
    last = m.index! + m[0].length;
  }
  if (last < s.length) pieces.push(s.slice(last));
  // What is left after the placeholders must not open one: `{{iteration` was sent literally.
  if (pieces.some((piece) => typeof piece === 'string' && piece.includes('{{'))) {
    issues.push({ path, message: `${JSON.stringify(s)}: a "{{" with no closing "}}"` });
  }
  return (ctx) => pieces.map((p) => (typeof p === 'string' ? p : textOf(p(ctx)))).join('');
}

function textOf(v: unknown): string {
  return typeof v === 'string' ? v : v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
}

function compileExpr(src: string, names: ReadonlySet<string>, issues: TemplateIssue[], path: (string | number)[]): Expr | undefined {
  const [head, ...filters] = src.split('|').map((x) => x.trim());
  const base = compileTerm(head ?? '', names, (m) => issues.push({ path, message: `{{${src}}}: ${m}` }));
  if (!base) return undefined;
  let fn: Expr = base;
  for (const f of filters) {
    const prev = fn;
    if (f === 'number') fn = (ctx) => Number(prev(ctx));
    else if (f === 'string') fn = (ctx) => textOf(prev(ctx));
    else if (f === 'json') fn = (ctx) => JSON.stringify(prev(ctx));
    else {
      issues.push({ path, message: `{{${src}}}: unknown filter "${f}" (use number, string or json)` });
      return undefined;
    }
  }
  return fn;
}

function compileTerm(t: string, names: ReadonlySet<string>, fail: (m: string) => void): Expr | undefined {
  if (t === 'vu') return (ctx) => ctx.vu;
  if (t === 'iteration') return (ctx) => ctx.iteration;
  if (t === 'phase') return (ctx) => ctx.phase;
  const data = /^data\.([A-Za-z_][\w-]*)((?:\.[\w-]+)*)$/.exec(t);
  if (data) {
    const name = data[1]!;
    if (!names.has(name)) {
      fail(`unknown data set "${name}"${names.size ? ` (declared: ${[...names].join(', ')})` : ' (no data sets are declared)'}`);
      return undefined;
    }
    const keys = data[2]!.split('.').filter(Boolean);
    return (ctx) => dig(ctx.rows[name], keys);
  }
  const rnd = /^random\.(\w+)\s*(?:\((.*)\))?$/s.exec(t);
  if (rnd) return compileRandom(rnd[1]!, rnd[2], fail);
  fail(`unknown expression "${t}" (use data.SET.FIELD, vu, iteration, phase or random.*)`);
  return undefined;
}

function dig(v: unknown, keys: string[]): unknown {
  let cur = v;
  for (const k of keys) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[k];
  }
  return cur;
}

function compileRandom(fn: string, argText: string | undefined, fail: (m: string) => void): Expr | undefined {
  const args = argText === undefined ? [] : splitArgs(argText);
  const nums = args.map(Number);
  const needNums = (n: number) => {
    if (args.length !== n || nums.some((x) => !Number.isFinite(x))) {
      fail(`random.${fn} takes ${counted(n, 'number')}`);
      return false;
    }
    return true;
  };
  switch (fn) {
    case 'int':
      if (!needNums(2)) return undefined;
      if (nums[0]! > nums[1]! || !Number.isInteger(nums[0]) || !Number.isInteger(nums[1])) {
        fail(`random.int(MIN, MAX) takes two integers with MIN <= MAX, got ${argText}`);
        return undefined;
      }
      return (ctx) => nums[0]! + Math.floor(ctx.random() * (nums[1]! - nums[0]! + 1));
    case 'float':
      if (!needNums(2)) return undefined;
      if (nums[0]! > nums[1]!) {
        fail(`random.float(MIN, MAX) takes MIN <= MAX, got ${argText}`);
        return undefined;
      }
      return (ctx) => nums[0]! + ctx.random() * (nums[1]! - nums[0]!);
    case 'string':
      if (!needNums(1)) return undefined;
      return (ctx) => randomString(ctx, nums[0]!);
    case 'uuid':
      return (ctx) => randomUuid(ctx);
    case 'pick':
      if (args.length === 0) {
        fail('random.pick needs at least one value');
        return undefined;
      }
      return (ctx) => args[Math.floor(ctx.random() * args.length)];
    default:
      fail(`unknown generator random.${fn} (use int, float, string, uuid or pick)`);
      return undefined;
  }
}

/** Comma-separated literals; double-quoted ones may contain commas and escapes. */
function splitArgs(s: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i <= s.length) {
    while (s[i] === ' ') i++;
    if (s[i] === '"') {
      const m = /^"(?:[^"\\]|\\.)*"/.exec(s.slice(i));
      const lit = m ? m[0] : s.slice(i);
      out.push(m ? (JSON.parse(lit) as string) : lit);
      i += lit.length;
      while (s[i] === ' ') i++;
    } else {
      const comma = s.indexOf(',', i);
      const end = comma === -1 ? s.length : comma;
      out.push(s.slice(i, end).trim());
      i = end;
    }
    if (s[i] !== ',') break;
    i++;
  }
  return out.length === 1 && out[0] === '' ? [] : out;
}

const ALNUM = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

function randomString(ctx: TemplateContext, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += ALNUM[Math.floor(ctx.random() * ALNUM.length)];
  return s;
}

function randomUuid(ctx: TemplateContext): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(ctx.random() * 16).toString(16));
  hex[12] = '4';
  hex[16] = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  const h = hex.join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
