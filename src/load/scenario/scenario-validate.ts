/**
 * Turning loose scenario data (parsed YAML, or what a `defineScenario` module exported) into a
 * {@link Scenario}, or one error listing every problem with its field (and line, via the locator).
 * Validation is complete before anything runs: a scenario that passes here cannot fail later for
 * a reason found in the file (missing data files are checked when the run loads them, up front).
 */
import path from 'node:path';
import { MODERN_PROTOCOL_VERSION } from '../../protocol/mcp.js';
import { bareDurationMessage, bareDurationNumber, parseDurationMs, parseRate } from '../../data-file/duration.js';
import type { ClosedPhase, EraChoice, OpenPhase, Phase, ReplayPhase, Scenario, ScriptedIteration, TargetSpec } from './scenario.js';
import { validateData, validateSteps, validateThresholds } from './scenario-steps.js';
import { McptapError } from '../../errors.js';
import { isObj, issueLines, Reader, type Issue, type Locator, type Path } from '../../data-file/validation.js';

export interface ValidateContext {
  /** File name for messages. */
  source: string;
  /** Directory relative paths (data files, recordings, cwd) resolve against. */
  baseDir: string;
  locate?: Locator;
  /** The driver whatever the scenario says (`mcptap load --raw`), checked as if the file named it. */
  driver?: 'raw';
}

/** The fields a scenario file may have at its top level. */
export const SCENARIO_FIELDS: readonly string[] = [
  'name',
  'target',
  'era',
  'protocolVersion',
  'clientCapabilities',
  'session',
  'timeout',
  'seed',
  'mix',
  'driver',
  'data',
  'phases',
  'steps',
  'thresholds',
  'from',
  'iteration',
  'preflight',
];

export function validateScenario(raw: unknown, ctx: ValidateContext): Scenario {
  const r = new Reader();
  const o = r.obj(raw, [], SCENARIO_FIELDS);
  if (!o) throw scenarioError(ctx.source, r.issues, ctx.locate);
  const dataSpecs = validateData(r, o.data, ctx.baseDir);
  const iteration = validateIteration(r, o.iteration);
  // templates may name every declared data set, even one whose file is missing (reported once, above)
  const steps = validateSteps(r, o.steps, new Set(isObj(o.data) ? Object.keys(o.data) : dataSpecs.map((d) => d.name)));
  const from = validateFrom(r, o.from, ctx.baseDir);
  const driverField = r.oneOf(o, 'driver', [], ['auto', 'raw'] as const);
  if (steps.length === 0 && !iteration && !from) r.fail(['steps'], 'a scenario needs steps (or an iteration function, or `from: recording.db`)');
  const s: Scenario = {
    name: r.str(o, 'name', []) ?? path.basename(ctx.source).replace(/\.[^.]+$/, ''),
    source: ctx.source,
    target: validateTarget(r, o.target, ctx.baseDir) ?? { kind: 'http', url: 'http://invalid', headers: {} },
    era: validateEra(r, o),
    sessionChurn: validateSession(r, o.session),
    timeoutMs: positiveDuration(r, o, 'timeout', []) ?? 30_000,
    seed: r.num(o, 'seed', [], { integer: true }) ?? 1,
    mix: r.oneOf(o, 'mix', [], ['weighted', 'random'] as const) ?? 'weighted',
    driver: ctx.driver ?? driverField ?? 'auto',
    phases: validatePhases(r, o.phases),
    steps,
    data: dataSpecs,
    thresholds: validateThresholds(r, o.thresholds, steps),
  };
  const pv = r.str(o, 'protocolVersion', []);
  if (pv) s.protocolVersion = pv;
  const caps = o.clientCapabilities;
  if (isObj(caps)) s.clientCapabilities = caps;
  else if (caps !== undefined)
    r.fail(['clientCapabilities'], `must be an object of capabilities, e.g. {roots: {listChanged: true}} (got ${JSON.stringify(caps)})`);
  if (iteration) s.iteration = iteration;
  if (from) s.from = from;
  if (r.bool(o, 'preflight', []) === false) s.preflight = false;
  crossChecks(r, s);
  if (r.issues.length > 0) throw scenarioError(ctx.source, r.issues, ctx.locate);
  return s;
}

/** `from: tap.db` (the latest recording) or `from: {file: tap.db, recording: 3}`. */
function validateFrom(r: Reader, v: unknown, baseDir: string): Scenario['from'] {
  if (v === undefined) return undefined;
  if (typeof v === 'string' && v !== '') return { file: path.resolve(baseDir, v) };
  if (!isObj(v)) return r.fail(['from'], `must be a recording file, or {file, recording} to pick one of its recordings (got ${JSON.stringify(v)})`);
  const o = r.obj(v, ['from'], ['file', 'recording']);
  const file = o && r.str(o, 'file', ['from'], true);
  const recording = o && r.num(o, 'recording', ['from'], { integer: true, min: 1 });
  if (!file) return undefined;
  return recording === undefined ? { file: path.resolve(baseDir, file) } : { file: path.resolve(baseDir, file), recording };
}

function validateEra(r: Reader, o: Record<string, unknown>): EraChoice {
  const v = o.era;
  if (v === undefined || v === 'detect') return 'detect';
  if (v === 'legacy') return 'legacy';
  if (v === 'modern' || v === MODERN_PROTOCOL_VERSION) return 'modern';
  r.fail(['era'], `must be legacy, ${MODERN_PROTOCOL_VERSION} (or modern), or detect (got ${JSON.stringify(v)})`);
  return 'detect';
}

function validateIteration(r: Reader, v: unknown): ScriptedIteration | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'function') return r.fail(['iteration'], 'must be an async function (only in TypeScript/JavaScript scenarios)');
  return v as ScriptedIteration;
}

/** A duration that must be more than 0 (a phase's length, the timeout): 0 would run or wait for nothing. */
function positiveDuration(r: Reader, o: Record<string, unknown>, key: string, p: Path, required = false): number | undefined {
  const ms = duration(r, o, key, p, required);
  return ms === 0 ? r.fail([...p, key], `must be more than 0 (got ${JSON.stringify(o[key])})`) : ms;
}

/**
 * The highest arrival rate one process is asked for (per second): far past what one mcptap load
 * process drives (tens of thousands a second), so a typo (1e12) is refused rather than left to
 * schedule arrivals until memory runs out. Past it, shard the run (--shard).
 */
const MAX_RATE = 1_000_000;

function duration(r: Reader, o: Record<string, unknown>, key: string, p: Path, required = false): number | undefined {
  const v = o[key];
  if (v === undefined) return required ? r.fail(p, `"${key}" is required (e.g. 30s)`) : undefined;
  // A bare number would be ms to the parser but reads as seconds to many: say what to write instead.
  const bare = bareDurationNumber(v);
  if (bare !== undefined) return r.fail([...p, key], bareDurationMessage(bare));
  const ms = parseDurationMs(v);
  if (ms === undefined) return r.fail([...p, key], `must be a duration with a unit like 500ms, 10s or 2m (got ${JSON.stringify(v)})`);
  return ms;
}

const TARGET = ['url', 'headers', 'connections', 'command', 'args', 'env', 'cwd', 'pool', 'reference'];

function validateTarget(r: Reader, v: unknown, baseDir: string): TargetSpec | undefined {
  if (v === undefined) return r.fail(['target'], 'is required: give url (Streamable HTTP), command (stdio) or reference: true (the bundled reference server)');
  if (typeof v === 'string') return validateTarget(r, /^https?:\/\//.test(v) ? { url: v } : { command: v }, baseDir);
  const o = r.obj(v, ['target'], TARGET);
  if (!o) return undefined;
  const kinds = ['url', 'command', 'reference'].filter((k) => o[k] !== undefined);
  if (kinds.length !== 1)
    return r.fail(['target'], kinds.length === 0 ? 'needs one of url, command or reference' : `has ${kinds.join(' and ')}: give exactly one`);
  const pool = r.num(o, 'pool', ['target'], { integer: true, min: 1 }) ?? 1;
  if (o.url !== undefined) {
    const url = r.str(o, 'url', ['target']);
    if (url && (!/^https?:\/\/[^/]+/.test(url) || !URL.canParse(url))) return r.fail(['target', 'url'], `must be an http:// or https:// URL (got "${url}")`);
    const headers = (r.stringMap(o, 'headers', ['target']) ?? {}) as Record<string, string>;
    const t: TargetSpec = { kind: 'http', url: url ?? '', headers };
    const connections = r.num(o, 'connections', ['target'], { integer: true, min: 1 });
    if (connections !== undefined) t.connections = connections;
    return t;
  }
  if (o.command !== undefined) return validateCommand(r, o, pool, baseDir);
  return validateReference(r, o.reference, pool);
}

function validateCommand(r: Reader, o: Record<string, unknown>, pool: number, baseDir: string): TargetSpec | undefined {
  let argv: string[];
  if (typeof o.command === 'string' && /["'\\$`|&;<>()]/.test(o.command)) {
    return r.fail(
      ['target', 'command'],
      `is split on spaces, not by a shell: quotes and shell syntax do not work there; give a list (command: [sh, -c, "..."]) (got ${JSON.stringify(o.command)})`,
    );
  }
  if (typeof o.command === 'string' && o.command.trim() !== '') argv = o.command.trim().split(/\s+/);
  else if (Array.isArray(o.command) && o.command.length > 0 && o.command.every((x) => typeof x === 'string')) argv = o.command as string[];
  else return r.fail(['target', 'command'], 'must be a command line string or a list of strings');
  const extra =
    o.args === undefined
      ? []
      : Array.isArray(o.args) && o.args.every((x) => typeof x === 'string')
        ? (o.args as string[])
        : (r.fail(['target', 'args'], 'must be a list of strings') ?? []);
  const env = (r.stringMap(o, 'env', ['target']) ?? {}) as Record<string, string>;
  const cwd = r.str(o, 'cwd', ['target']);
  const t: TargetSpec = { kind: 'stdio', command: argv[0]!, args: [...argv.slice(1), ...extra], env, pool };
  if (cwd) t.cwd = path.resolve(baseDir, cwd);
  return t;
}

function validateReference(r: Reader, v: unknown, pool: number): TargetSpec | undefined {
  if (v === true) return { kind: 'reference', transport: 'http', inProcess: false, pool };
  const o = r.obj(v, ['target', 'reference'], ['transport', 'stall', 'inProcess', 'ignoreCancel']);
  if (!o) return undefined;
  const p: Path = ['target', 'reference'];
  const t: TargetSpec = {
    kind: 'reference',
    transport: r.oneOf(o, 'transport', p, ['http', 'stdio'] as const) ?? 'http',
    inProcess: r.bool(o, 'inProcess', p) ?? false,
    pool,
  };
  if (r.bool(o, 'ignoreCancel', p)) t.ignoreCancel = true;
  if (o.stall !== undefined) {
    const st = o.stall;
    const m = typeof st === 'string' ? /^\s*(\d+)\s*:\s*(\d+)\s*$/.exec(st) : null;
    const every = m ? Number(m[1]) : isObj(st) ? st.everyMs : undefined;
    const forMs = m ? Number(m[2]) : isObj(st) ? st.forMs : undefined;
    if (typeof every !== 'number' || typeof forMs !== 'number' || !(forMs > 0 && every > forMs)) {
      return r.fail([...p, 'stall'], 'must be "EVERY_MS:FOR_MS" (e.g. "2000:500") or {everyMs, forMs} with 0 < forMs < everyMs');
    }
    t.stall = { everyMs: every, forMs };
  }
  return t;
}

function validateSession(r: Reader, v: unknown): number {
  if (v === undefined) return 0;
  const o = r.obj(v, ['session'], ['churn']);
  return (o && r.num(o, 'churn', ['session'], { integer: true, min: 0 })) ?? 0;
}

function validatePhases(r: Reader, v: unknown): Phase[] {
  if (v === undefined) return r.fail(['phases'], 'is required: at least one phase, e.g. `- open: {rate: 50, duration: 10s}`') ?? [];
  if (!Array.isArray(v) || v.length === 0) return r.fail(['phases'], 'must be a non-empty list of phases') ?? [];
  return v.flatMap((x, i) => {
    const p = validatePhase(r, x, ['phases', i], i);
    return p ? [p] : [];
  });
}

function validatePhase(r: Reader, v: unknown, p: Path, i: number): Phase | undefined {
  const o = r.obj(v, p, ['name', 'open', 'closed', 'replay']);
  if (!o) return undefined;
  const name = r.str(o, 'name', p) ?? `phase-${i + 1}`;
  const kinds = (['open', 'closed', 'replay'] as const).filter((k) => o[k] !== undefined);
  if (kinds.length !== 1) return r.fail(p, "needs exactly one of open (arrival rate), closed (virtual users) or replay (the recording's own schedule)");
  if (o.open !== undefined) return validateOpen(r, o.open, [...p, 'open'], name);
  if (o.replay !== undefined) return validateReplay(r, o.replay, [...p, 'replay'], name);
  return validateClosed(r, o.closed, [...p, 'closed'], name);
}

/** Past this, a recording's gaps shrink below the executor's wake-up granularity (1 ms) for most traffic. */
const MAX_SPEED = 1000;

function validateReplay(r: Reader, v: unknown, p: Path, name: string): ReplayPhase | undefined {
  const o = r.obj(v ?? {}, p, ['speed', 'maxInFlight']);
  if (!o) return undefined;
  const raw = o.speed ?? 1;
  const m = typeof raw === 'string' ? /^\s*(\d+(?:\.\d+)?)\s*x\s*$/i.exec(raw) : null;
  const speed = typeof raw === 'number' ? raw : m ? Number(m[1]) : NaN;
  const maxInFlight = r.num(o, 'maxInFlight', p, { integer: true, min: 1 });
  if (!(Number.isFinite(speed) && speed > 0 && speed <= MAX_SPEED))
    return r.fail([...p, 'speed'], `must be a factor of the recorded rate more than 0 and at most ${MAX_SPEED}, like 2 or "2x" (got ${JSON.stringify(raw)})`);
  const phase: ReplayPhase = { kind: 'replay', name, speed };
  if (maxInFlight !== undefined) phase.maxInFlight = maxInFlight;
  return phase;
}

function rate(r: Reader, o: Record<string, unknown>, key: string, p: Path): number | undefined {
  if (o[key] === undefined) return undefined;
  const v = parseRate(o[key]);
  if (v === undefined) return r.fail([...p, key], `must be a rate per second like 100 or "100/s" (got ${JSON.stringify(o[key])})`);
  return v > MAX_RATE ? r.fail([...p, key], `${v}/s is past what one process drives (at most ${MAX_RATE}/s): split the run with --shard`) : v;
}

function validateOpen(r: Reader, v: unknown, p: Path, name: string): OpenPhase | undefined {
  const o = r.obj(v, p, ['rate', 'from', 'to', 'duration', 'maxInFlight']);
  if (!o) return undefined;
  const fixed = rate(r, o, 'rate', p);
  const from = rate(r, o, 'from', p);
  const to = rate(r, o, 'to', p);
  if (fixed !== undefined && (from !== undefined || to !== undefined)) return r.fail(p, 'give either rate, or from and to (a ramp), not both');
  const fromRate = fixed ?? from;
  const toRate = fixed ?? to ?? from;
  if (fromRate === undefined || toRate === undefined) return r.fail(p, 'needs rate (requests per second) or from/to for a ramp');
  if (fromRate === 0 && toRate === 0) return r.fail(p, 'a rate of 0 sends nothing');
  const durationMs = positiveDuration(r, o, 'duration', p, true);
  const maxInFlight = r.num(o, 'maxInFlight', p, { integer: true, min: 1 }) ?? Math.max(100, Math.ceil(Math.max(fromRate, toRate) * 2));
  if (durationMs === undefined) return undefined;
  return { kind: 'open', name, fromRate, toRate, durationMs, maxInFlight };
}

function validateClosed(r: Reader, v: unknown, p: Path, name: string): ClosedPhase | undefined {
  const o = r.obj(v, p, ['vus', 'iterations', 'duration', 'thinkTime', 'rate']);
  if (!o) return undefined;
  const vus = r.num(o, 'vus', p, { integer: true, min: 1, required: true });
  const iterations = r.num(o, 'iterations', p, { integer: true, min: 1 });
  const durationMs = positiveDuration(r, o, 'duration', p);
  if (o.iterations === undefined && o.duration === undefined) return r.fail(p, 'needs iterations (per virtual user), duration, or both');
  const phase: ClosedPhase = { kind: 'closed', name, vus: vus ?? 1, thinkTime: thinkTime(r, o, p) };
  if (iterations !== undefined) phase.iterations = iterations;
  if (durationMs !== undefined) phase.durationMs = durationMs;
  const cap = rate(r, o, 'rate', p);
  if (cap !== undefined) phase.rate = cap;
  // given but invalid (reported above): the rest of the phase is still checked, then dropped
  return iterations === undefined && durationMs === undefined ? undefined : phase;
}

function thinkTime(r: Reader, o: Record<string, unknown>, p: Path): ClosedPhase['thinkTime'] {
  const v = o.thinkTime;
  if (v === undefined) return { minMs: 0, maxMs: 0 };
  if (isObj(v)) {
    const t = r.obj(v, [...p, 'thinkTime'], ['min', 'max']);
    const min = t ? duration(r, t, 'min', [...p, 'thinkTime'], true) : undefined;
    const max = t ? duration(r, t, 'max', [...p, 'thinkTime'], true) : undefined;
    if (min !== undefined && max !== undefined && max < min) r.fail([...p, 'thinkTime'], 'max must be >= min');
    return { minMs: min ?? 0, maxMs: max ?? min ?? 0 };
  }
  const ms = duration(r, o, 'thinkTime', p) ?? 0;
  return { minMs: ms, maxMs: ms };
}

function crossChecks(r: Reader, s: Scenario): void {
  s.phases.forEach((ph, i) => {
    if (ph.kind !== 'replay') return;
    if (!s.from) r.fail(['phases', i, 'replay'], 'replays a recording: add `from: recording.db` (or {file, recording}) to the scenario');
    if (s.iteration) r.fail(['phases', i, 'replay'], 'sends the recorded requests; it cannot run an iteration function');
  });
  if (s.driver === 'raw') {
    if (s.target.kind === 'stdio' || (s.target.kind === 'reference' && s.target.transport === 'stdio'))
      r.fail(['driver'], 'raw (autocannon) works over HTTP only');
    s.phases.forEach(
      (ph, i) => ph.kind !== 'closed' && r.fail(['phases', i, ph.kind], 'the raw driver runs closed phases only (autocannon is a closed-model tool)'),
    );
    if (s.iteration) r.fail(['driver'], 'raw mode sends prebuilt requests; it cannot run an iteration function');
    s.steps.forEach((st, i) => st.cancel && r.fail(['steps', i, 'cancel'], 'the raw driver cannot cancel calls (use the default driver)'));
  } else {
    s.phases.forEach(
      (ph, i) =>
        ph.kind === 'closed' &&
        ph.rate !== undefined &&
        r.fail(['phases', i, 'closed', 'rate'], 'a rate cap on a closed phase needs driver: raw (use an open phase for a fixed rate)'),
    );
  }
  const stdio = s.target.kind === 'stdio' || (s.target.kind === 'reference' && s.target.transport === 'stdio');
  if (stdio && s.sessionChurn > 0) r.fail(['session', 'churn'], 'session churn needs an HTTP target (a stdio process is one session)');
  if (s.era === 'modern' && s.sessionChurn > 0) r.fail(['session', 'churn'], 'the 2026-07-28 era has no sessions to churn');
}

/** One paragraph naming the file, and for each issue its line and field. */
function scenarioError(source: string, issues: readonly Issue[], locate?: Locator): McptapError {
  const n = issues.length === 1 ? '1 problem' : `${issues.length} problems`;
  return new McptapError('MCPTAP_LOAD_SCENARIO_INVALID', `${source} is not a valid scenario (${n}):\n${issueLines(source, issues, locate)}`);
}
