/**
 * Validation of the scenario parts that describe requests: data sets, steps (with their templates
 * and checks) and thresholds. See scenario-validate.ts for the rest.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { parseCheckPath } from '../../data-file/check-path.js';
import { derivedCheckName } from '../run/checks.js';
import { parseDurationMs } from '../../data-file/duration.js';
import { EXPECTED_OUTCOMES } from '../run/expected-outcome.js';
import { validateCancel } from './scenario-cancel.js';
import type { CheckKind, CheckSpec, DataSpec, ListenFilter, StepSpec } from './scenario.js';
import { compileTemplate, type TemplateIssue } from './template.js';
import { parseScope, parseThreshold, type ThresholdScope, type ThresholdSpec } from '../results/thresholds.js';
import { isObj, kind, Reader, type Path } from '../../data-file/validation.js';

export function validateData(r: Reader, v: unknown, baseDir: string): DataSpec[] {
  if (v === undefined) return [];
  const o = r.obj(v, ['data'], Object.keys(isObj(v) ? v : {}));
  if (!o) return [];
  const out: DataSpec[] = [];
  for (const [name, x] of Object.entries(o)) {
    const p: Path = ['data', name];
    if (!/^[A-Za-z_][\w-]*$/.test(name)) {
      r.fail(p, 'data set names are letters, digits, _ and -', true);
      continue;
    }
    const d = typeof x === 'string' ? { file: x } : r.obj(x, p, ['file', 'format', 'order']);
    if (!d) continue;
    const file = r.str(d, 'file', p, true);
    if (!file) continue;
    const byExt = /\.jsonl?$/i.test(file) ? 'jsonl' : /\.csv$/i.test(file) ? 'csv' : undefined;
    const format = r.oneOf(d, 'format', p, ['csv', 'jsonl'] as const) ?? byExt;
    if (!format) {
      r.fail([...p, 'file'], `cannot tell the format of "${file}": name it .csv or .jsonl, or set format`);
      continue;
    }
    const abs = path.resolve(baseDir, file);
    if (!existsSync(abs)) {
      r.fail(typeof x === 'string' ? p : [...p, 'file'], `data file ${abs} does not exist`);
      continue;
    }
    out.push({ name, file: abs, format, order: r.oneOf(d, 'order', p, ['sequential', 'random'] as const) ?? 'sequential' });
  }
  return out;
}

const STEP = ['name', 'weight', 'method', 'tool', 'arguments', 'uri', 'prompt', 'params', 'headers', 'progress', 'check', 'expect', 'cancel', 'listen'];
const LISTEN = ['toolsListChanged', 'promptsListChanged', 'resourcesListChanged', 'resourceSubscriptions'] as const;

export function validateSteps(r: Reader, v: unknown, dataNames: ReadonlySet<string>): StepSpec[] {
  if (v === undefined) return [];
  if (!Array.isArray(v)) return r.fail(['steps'], `must be a list of steps (got ${kind(v)})`) ?? [];
  const steps = v.flatMap((x, i) => {
    const s = validateStep(r, x, ['steps', i], dataNames);
    return s ? [s] : [];
  });
  const seen = new Map<string, number>();
  steps.forEach((s, i) => {
    if (seen.has(s.name)) r.fail(['steps', i, 'name'], `step name "${s.name}" is used twice: give steps distinct names`);
    seen.set(s.name, i);
  });
  return steps;
}

/** The method each shorthand stands for (`tool: x` is `method: tools/call` with params.name x). */
const SHORTHAND_METHOD = { tool: 'tools/call', prompt: 'prompts/get', uri: 'resources/read' } as const;

function validateStep(r: Reader, v: unknown, p: Path, dataNames: ReadonlySet<string>): StepSpec | undefined {
  const o = r.obj(v, p, STEP);
  if (!o) return undefined;
  if (o.listen !== undefined) return validateListenStep(r, o, p);
  const tool = r.str(o, 'tool', p);
  const prompt = r.str(o, 'prompt', p);
  const uri = r.str(o, 'uri', p);
  const explicit = r.str(o, 'method', p);
  const shorthands = (['tool', 'prompt', 'uri'] as const).filter((k) => ({ tool, prompt, uri })[k] !== undefined);
  const implied = shorthands[0] && SHORTHAND_METHOD[shorthands[0]];
  // One way to say what the step calls: `method: tools/list` beside `tool: echo` ran tools/list without a word.
  if (shorthands.length > 1 || (implied && explicit !== undefined && explicit !== implied)) {
    return r.fail(p, `give one of method, tool, prompt or uri (got ${[...(explicit !== undefined ? ['method'] : []), ...shorthands].join(' and ')})`);
  }
  const method = explicit ?? implied;
  if (!method) return r.fail(p, 'needs method (e.g. tools/list) or tool (a tools/call shorthand)');
  if (o.params !== undefined && (tool || prompt || uri || o.arguments !== undefined)) return r.fail(p, 'give params, or tool/prompt/uri/arguments, not both');
  if (o.params !== undefined && !isObj(o.params)) return r.fail([...p, 'params'], 'must be a mapping');
  if (o.arguments !== undefined && !isObj(o.arguments)) return r.fail([...p, 'arguments'], 'must be a mapping');
  const rawParams = o.params ?? buildParams(method, tool ?? prompt, uri, o.arguments);
  const issues: TemplateIssue[] = [];
  const params = compileTemplate(rawParams, dataNames, issues);
  for (const i of issues) r.fail([...p, ...templateField(i.path, o.params !== undefined, tool ? 'tool' : 'prompt')], i.message);
  const weight = r.num(o, 'weight', p, { integer: true, min: 1 }) ?? 1;
  const target = method === 'tools/call' ? (tool ?? (isObj(o.params) && typeof o.params.name === 'string' ? o.params.name : undefined)) : (prompt ?? uri);
  const step: StepSpec = {
    name: r.str(o, 'name', p) ?? target ?? method,
    weight,
    method,
    params,
    progress: r.bool(o, 'progress', p) ?? false,
    checks: validateChecks(r, o.check, [...p, 'check']),
  };
  if (target !== undefined) step.target = target;
  const expect = r.oneOf(o, 'expect', p, EXPECTED_OUTCOMES);
  if (expect) step.expect = expect;
  const headers = r.stringMap(o, 'headers', p, true);
  if (headers) step.headers = headers;
  if (o.cancel !== undefined) {
    const cancel = validateCancel(r, o.cancel, [...p, 'cancel']);
    // Progress is what a cancelled call is watched by (and its token is the probe's key).
    if (cancel) Object.assign(step, { cancel, progress: true });
  }
  return step;
}

/**
 * `listen: {toolsListChanged: true, ...}`: a stream held for the phase (see StepSpec.listen).
 * Only a name and a weight go with it: what it sends is fixed by the era.
 */
function validateListenStep(r: Reader, o: Record<string, unknown>, p: Path): StepSpec | undefined {
  const extra = Object.keys(o).filter((k) => k !== 'listen' && k !== 'name' && k !== 'weight');
  if (extra.length) return r.fail(p, `a listen step takes only name and weight besides listen (got ${extra.join(', ')})`);
  const lp: Path = [...p, 'listen'];
  const l = r.obj(o.listen, lp, [...LISTEN]);
  if (!l) return undefined;
  const filter: ListenFilter = {};
  for (const k of ['toolsListChanged', 'promptsListChanged', 'resourcesListChanged'] as const) {
    const b = r.bool(l, k, lp);
    if (b !== undefined) filter[k] = b;
  }
  if (l.resourceSubscriptions !== undefined) {
    const uris = l.resourceSubscriptions;
    if (!Array.isArray(uris) || !uris.every((u) => typeof u === 'string')) return r.fail([...lp, 'resourceSubscriptions'], 'must be a list of resource URIs');
    filter.resourceSubscriptions = uris as string[];
  }
  if (!Object.values(filter).some((x) => x === true || Array.isArray(x))) {
    return r.fail(lp, `subscribe to something: set one of ${LISTEN.join(', ')}`);
  }
  return {
    name: r.str(o, 'name', p) ?? 'listen',
    weight: r.num(o, 'weight', p, { integer: true, min: 1 }) ?? 1,
    method: 'subscriptions/listen',
    params: compileTemplate({ notifications: filter }, new Set(), []),
    progress: false,
    checks: [],
    listen: filter,
  };
}

/** Where a template issue sits in the step as written (`params.x`, `arguments.x`, `tool`, `uri`). */
function templateField(at: Path, raw: boolean, nameField: string): Path {
  if (raw) return ['params', ...at];
  return at[0] === 'name' ? [nameField] : at;
}

function buildParams(method: string, name: string | undefined, uri: string | undefined, args: unknown): Record<string, unknown> | undefined {
  if (method === 'tools/call' || method === 'prompts/get') return { name, arguments: args ?? {} };
  if (method === 'resources/read') return { uri };
  return args === undefined ? {} : (args as Record<string, unknown>);
}

const CHECK = ['name', 'isError', 'error', 'noError', 'status', 'contains', 'path', 'equals', 'matches'];

function validateChecks(r: Reader, v: unknown, p: Path): CheckSpec[] {
  if (v === undefined) return [];
  const list = Array.isArray(v) ? v : [v];
  return list.flatMap((x, i) => validateCheck(r, x, Array.isArray(v) ? [...p, i] : p));
}

function validateCheck(r: Reader, v: unknown, p: Path): CheckSpec[] {
  const o = r.obj(v, p, CHECK);
  if (!o) return [];
  const out: CheckKind[] = [];
  const isError = r.bool(o, 'isError', p);
  if (isError !== undefined) out.push({ kind: 'isError', expect: isError });
  if (o.error !== undefined) {
    if (o.error === true) out.push({ kind: 'error' });
    else if (Number.isInteger(o.error)) out.push({ kind: 'error', code: o.error as number });
    else r.fail([...p, 'error'], 'must be true or a JSON-RPC error code');
  }
  if (r.bool(o, 'noError', p)) out.push({ kind: 'noError' });
  const status = r.num(o, 'status', p, { integer: true, min: 100 });
  if (status !== undefined) out.push({ kind: 'status', status });
  const contains = r.str(o, 'contains', p);
  if (contains !== undefined) out.push({ kind: 'contains', text: contains });
  const at = r.str(o, 'path', p);
  if ((o.equals !== undefined || o.matches !== undefined) && !at) r.fail(p, 'equals and matches need a path (e.g. path: /result/content/0/text)');
  if (at) {
    const c = pathCheck(r, o, at, p);
    if (c) out.push(c);
  }
  if (out.length === 0 && at === undefined) r.fail(p, `a check needs one of ${CHECK.filter((c) => !['name', 'equals', 'matches'].includes(c)).join(', ')}`);
  return named(r.str(o, 'name', p), out);
}

/** A given name labels a check alone; beside others, each keeps its derived part after it. */
function named(given: string | undefined, checks: CheckKind[]): CheckSpec[] {
  return checks.map((c) => {
    const derived = derivedCheckName(c);
    return { ...c, name: given === undefined ? derived : checks.length === 1 ? given : `${given}: ${derived}` };
  });
}

function pathCheck(r: Reader, o: Record<string, unknown>, at: string, p: Path): CheckKind | undefined {
  const segments = parseCheckPath(at);
  if (typeof segments === 'string') return r.fail([...p, 'path'], segments);
  const c: Extract<CheckKind, { kind: 'path' }> = { kind: 'path', path: segments };
  if (o.equals !== undefined) c.equals = o.equals;
  if (o.matches !== undefined) {
    try {
      c.matches = new RegExp(String(o.matches));
    } catch (err) {
      r.fail([...p, 'matches'], `not a regular expression: ${(err as Error).message}`);
    }
  }
  return c;
}

export function validateThresholds(r: Reader, v: unknown, steps: readonly StepSpec[]): ThresholdSpec[] {
  if (v === undefined) return [];
  const out: ThresholdSpec[] = [];
  const add = (written: unknown, scope: ThresholdScope, p: Path) => {
    // YAML reads `- cancel: honoured` as a mapping: it is the expression `cancel: honoured`.
    const expr = isObj(written) && Object.keys(written).length === 1 && 'cancel' in written ? `cancel: ${String(written.cancel)}` : written;
    if (isObj(expr) && 'threshold' in expr) return abortingThreshold(r, expr, scope, p, out);
    if (typeof expr !== 'string') return r.fail(p, `must be a threshold expression string like "p(99) < 300ms" (got ${kind(expr)})`);
    const t = parseThreshold(expr, scope);
    if (typeof t === 'string') return r.fail(p, t);
    out.push(t);
  };
  if (Array.isArray(v)) v.forEach((e, i) => add(e, { kind: 'all' }, ['thresholds', i]));
  else if (isObj(v)) {
    for (const [key, list] of Object.entries(v)) {
      const scope = parseScope(key);
      if (typeof scope === 'string') {
        r.fail(['thresholds', key], scope, true);
        continue;
      }
      checkScope(r, scope, steps, ['thresholds', key]);
      const items = Array.isArray(list) ? list : [list];
      items.forEach((e, i) => add(e, scope, Array.isArray(list) ? ['thresholds', key, i] : ['thresholds', key]));
    }
  } else r.fail(['thresholds'], 'must be a list of expressions, or a mapping from scope (all, tool:NAME, method:NAME, step:NAME) to expressions');
  return out;
}

/** `{threshold: "p(99) < 1s", abortOnFail: true, delayAbortEval: 10s}` (k6's form). */
function abortingThreshold(r: Reader, o: Record<string, unknown>, scope: ThresholdScope, p: Path, out: ThresholdSpec[]): void {
  if (!r.obj(o, p, ['threshold', 'abortOnFail', 'delayAbortEval'])) return;
  const expr = r.str(o, 'threshold', p, true);
  const t = expr === undefined ? undefined : parseThreshold(expr, scope);
  if (typeof t === 'string') r.fail([...p, 'threshold'], t);
  const abort = r.bool(o, 'abortOnFail', p);
  const delay = o.delayAbortEval === undefined ? undefined : parseDurationMs(o.delayAbortEval);
  if (o.delayAbortEval !== undefined && delay === undefined)
    r.fail([...p, 'delayAbortEval'], `must be a duration like 10s (got ${JSON.stringify(o.delayAbortEval)})`);
  if (!t || typeof t === 'string') return;
  if (abort) t.abortOnFail = true;
  if (delay) t.delayAbortEvalMs = delay;
  out.push(t);
}

/** A tool or step scope must name something the steps produce (scripted scenarios are not checked). */
function checkScope(r: Reader, scope: ThresholdScope, steps: readonly StepSpec[], p: Path): void {
  if (steps.length === 0) return;
  if (scope.kind === 'tool' && !steps.some((s) => s.method === 'tools/call' && s.target === scope.name)) {
    const tools = steps.filter((s) => s.method === 'tools/call' && s.target).map((s) => s.target);
    r.fail(p, `no step calls tool "${scope.name}"${tools.length ? ` (steps call: ${[...new Set(tools)].join(', ')})` : ''}`, true);
  }
  if (scope.kind === 'step' && !steps.some((s) => s.name === scope.name))
    r.fail(p, `no step is named "${scope.name}" (steps: ${steps.map((s) => s.name).join(', ')})`, true);
}
