/**
 * Tool contracts (issue 32 item 4): calls judged against what the same connection or session was
 * told by its latest list responses. `tools/call` arguments against `inputSchema`, results against
 * `outputSchema`, `prompts/get` against declared required arguments, `resources/read` against listed
 * resources and templates. Tool errors (`isError`) and JSON-RPC errors stay apart: either is a
 * rejection, and a rejected bad call is the client's fault, an accepted one the server's too.
 */
import type { Checker, CheckerFactory, Emit, RuleSettings } from '../checker.js';
import type { Finding, RuleInfo } from '../finding.js';
import type { TapEvent } from '../../model/events.js';
import type { Exchange } from '../../model/exchange.js';
import { parsePointer } from '../../data-file/json-pointer.js';
import { DeclaredSurface, LIST_CHANGED, LISTS, type Declared } from './declared-surface.js';
import { SchemaValidators, violations, type Violation } from './schema-validators.js';
import { CONTRACT, TOOL_CONTRACT_RULES } from './tool-contract-rules.js';
import { paramsOf, resultOf, spec, verdictOf, verdictText, whereOf, type Item, type Snapshot, type Verdict } from './contract-exchange.js';
import { judgePrompt, judgeRead } from './prompt-resource-contracts.js';

export { TOOL_CONTRACT_RULES } from './tool-contract-rules.js';

const JUDGED = new Set(['tools/call', 'prompts/get', 'resources/read']);
const MAX_SCOPES = 10_000;
const MAX_OPEN = 100_000;
/** Keywords that only forbid undeclared members. */
const EXTRA_KEYWORDS = new Set(['additionalProperties', 'unevaluatedProperties']);

export const toolContracts: CheckerFactory = (settings) => new ToolContracts(settings);

class ToolContracts implements Checker {
  readonly rules: readonly RuleInfo[] = TOOL_CONTRACT_RULES;
  private readonly surfaces = new Map<string, DeclaredSurface>();
  private readonly sessionOf = new Map<string, string>();
  /** HTTP connections: their upstream URL. Without a session, each request may ride any of them. */
  private readonly upstreamOf = new Map<string, string>();
  /** Per open exchange: the surface's answer when its request was sent (a later list must not judge it). */
  private readonly atStart = new Map<string, Snapshot>();
  private readonly validators = new SchemaValidators();
  private readonly unusableSaid = new Set<string>();
  private failures = 0;
  /** Rules the settings turn off: their findings are dropped here (the engine applies other severities). */
  private readonly off: ReadonlySet<string>;

  constructor(private readonly settings: RuleSettings) {
    this.off = new Set(TOOL_CONTRACT_RULES.filter((r) => settings.get(r.id)?.severity === 'off').map((r) => r.id));
  }

  onEvent(event: TapEvent, emit: Emit): void {
    try {
      const out: Emit = this.off.size === 0 ? emit : (f: Finding) => (this.off.has(f.ruleId) ? undefined : emit(f));
      this.handle(event, out);
    } catch (err) {
      // A checker never throws: one that failed says so (a few times) and goes on with the next event.
      if (++this.failures <= 10) {
        emit({
          ruleId: CONTRACT.checkFailed,
          severity: 'note',
          message: `tool-contract check skipped an event (${event.type}): ${(err as Error).message}`,
          where: {},
        });
      }
    }
  }

  finish(): void {
    this.atStart.clear();
  }

  private handle(event: TapEvent, emit: Emit): void {
    switch (event.type) {
      case 'connection-opened':
        if (event.connection.sessionId !== undefined) this.sessionOf.set(event.connection.connectionId, event.connection.sessionId);
        if (event.connection.transport === 'http') this.upstreamOf.set(event.connection.connectionId, event.connection.target);
        return;
      case 'connection-closed': {
        // A stdio process's surface ends with it; an HTTP connection is only one of a server's sockets.
        if (!this.upstreamOf.delete(event.connectionId)) this.surfaces.delete(this.scopeOf(event.connectionId));
        this.sessionOf.delete(event.connectionId);
        return;
      }
      case 'frame': {
        const f = event.frame;
        if (f.kind !== 'message' || f.messageKind !== 'notification' || f.direction !== 's2c') return;
        const kinds = LIST_CHANGED[(f.message as { method: string }).method];
        if (kinds) for (const k of kinds) this.surface(this.scopeOf(f.connectionId, f.context?.sessionId)).lists[k].markStale();
        return;
      }
      case 'exchange-started':
        if (event.exchange.direction === 'c2s' && JUDGED.has(event.exchange.method) && this.atStart.size < MAX_OPEN) {
          this.atStart.set(event.exchange.key, this.snapshot(event.exchange));
        }
        return;
      case 'exchange-completed':
        if (event.exchange.direction === 'c2s') this.completed(event.exchange, emit);
        return;
      default:
        return;
    }
  }

  /**
   * Whose declarations judge a message: its session's; else, over HTTP, the upstream's (a stateless
   * server answers `tools/list` and `tools/call` on whichever pooled socket the client picked);
   * else its stdio connection's.
   */
  private scopeOf(connectionId: string, sessionId?: string): string {
    const session = sessionId ?? this.sessionOf.get(connectionId);
    if (session !== undefined) return `s:${session}`;
    const upstream = this.upstreamOf.get(connectionId);
    return upstream !== undefined ? `u:${upstream}` : `c:${connectionId}`;
  }

  private surface(scope: string): DeclaredSurface {
    let s = this.surfaces.get(scope);
    if (!s) {
      s = new DeclaredSurface();
      this.surfaces.set(scope, s);
      if (this.surfaces.size > MAX_SCOPES) this.surfaces.delete(this.surfaces.keys().next().value!);
    }
    return s;
  }

  private surfaceOf(ex: Exchange): DeclaredSurface {
    return this.surface(this.scopeOf(ex.connectionId, ex.sessionId));
  }

  private snapshot(ex: Exchange): Snapshot {
    const s = this.surfaceOf(ex);
    const params = paramsOf(ex.request);
    if (ex.method === 'resources/read') {
      if (typeof params.uri !== 'string') return { evidence: false };
      const lists = [s.lists.resources, s.lists.resourceTemplates];
      // Evidence: some list complete, and none seen that is incomplete or stale (it may hold the URI).
      const evidence = lists.some((l) => l.authoritative) && !lists.some((l) => l.seen && !l.authoritative);
      return { evidence: evidence && !s.offersUri(params.uri) };
    }
    if (typeof params.name !== 'string') return { evidence: false };
    const list = ex.method === 'tools/call' ? s.lists.tools : s.lists.prompts;
    const declared = list.find(params.name);
    return declared ? { declared, evidence: true } : { evidence: list.authoritative };
  }

  private completed(ex: Exchange, emit: Emit): void {
    const list = LISTS[ex.method];
    const result = resultOf(ex);
    if (list && result) return this.listed(ex, result, list, emit);
    if (!JUDGED.has(ex.method)) return;
    const snap = this.atStart.get(ex.key) ?? this.snapshot(ex);
    this.atStart.delete(ex.key);
    if (result && ex.method !== 'resources/read') this.surfaceOf(ex).noteLinks(result);
    if (ex.method === 'tools/call') this.judgeCall(ex, snap, emit);
    else if (ex.method === 'prompts/get') judgePrompt(ex, snap, emit);
    else judgeRead(ex, snap, emit);
  }

  private listed(ex: Exchange, result: Item, list: (typeof LISTS)[string], emit: Emit): void {
    const items = result[list.kind];
    if (!Array.isArray(items)) return;
    const cursor = paramsOf(ex.request).cursor;
    const more = typeof result.nextCursor === 'string';
    this.surfaceOf(ex).lists[list.kind].page(items, cursor, more, list.key, { exchangeKey: ex.key, member: list.kind });
    if (list.kind !== 'tools') return;
    // Compiled now, once per distinct schema: an unusable one is a finding even if no call uses it.
    items.forEach((tool: unknown, i) => {
      if (tool === null || typeof tool !== 'object') return;
      for (const member of ['inputSchema', 'outputSchema'] as const) this.usable(ex, tool as Item, `/result/tools/${i}/${member}`, member, emit);
    });
  }

  /** Compiles a tool's schema; says once per tool and schema text when it cannot be compiled. */
  private usable(ex: Exchange, tool: Item, pointer: string, member: 'inputSchema' | 'outputSchema', emit: Emit): boolean {
    const schema = tool[member];
    if (schema === undefined) return false;
    const compiled = this.validators.compile(schema);
    if (compiled.ok) return true;
    const name = String(tool.name);
    const said = `${name}\0${member}\0${JSON.stringify(schema)}`;
    if (this.unusableSaid.has(said) || this.unusableSaid.size >= 10_000) return false;
    this.unusableSaid.add(said);
    emit({
      ruleId: CONTRACT.schemaUnusable,
      severity: 'error',
      message: `tool ${name}: its ${member} cannot be compiled as JSON Schema (${compiled.reason}); its ${member === 'inputSchema' ? 'arguments' : 'results'} cannot be checked`,
      where: { ...whereOf(ex, 'server', name), subject: { kind: 'tool', name } },
      pointer,
      expected: 'a JSON Schema (draft-07 or 2020-12) that compiles',
      found: compiled.reason,
      ...spec(ex),
    });
    return false;
  }

  private judgeCall(ex: Exchange, snap: Snapshot, emit: Emit): void {
    const params = paramsOf(ex.request);
    const name = params.name;
    if (typeof name !== 'string') return;
    const verdict = verdictOf(ex);
    if (!snap.declared) {
      if (!snap.evidence) return;
      const served = verdict === 'accepted';
      emit({
        ruleId: served ? CONTRACT.undeclaredTool : CONTRACT.unknownTool,
        severity: served ? 'error' : 'warning',
        message: served
          ? `tools/call ${name}: the server ran a tool its tools/list does not declare`
          : `tools/call ${name}: no such tool in the server's tools/list; ${verdictText(ex, verdict)}`,
        where: whereOf(ex, served ? 'server' : 'client', name),
        pointer: '/params/name',
        expected: 'a tool name from the latest tools/list',
        found: JSON.stringify(name),
        ...spec(ex),
      });
      return;
    }
    this.judgeArguments(ex, snap.declared, name, verdict, emit);
    if (verdict === 'accepted' && !ex.isError) this.judgeOutput(ex, snap.declared, name, emit);
  }

  private judgeArguments(ex: Exchange, declared: Declared<Item>, name: string, verdict: Verdict, emit: Emit): void {
    const compiled = this.validators.compile(declared.item.inputSchema);
    if (declared.item.inputSchema === undefined || !compiled.ok) return;
    const args = paramsOf(ex.request).arguments ?? {};
    const accepted = verdict === 'accepted';
    const found = violations(compiled.validate, args);
    // Undeclared keys a server accepted were ignored (zod strips them): a warning, not a validation failure.
    const extras = accepted ? found.filter((v) => EXTRA_KEYWORDS.has(v.keyword)) : [];
    if (extras.length > 0) this.extraAccepted(ex, name, extras, emit);
    for (const v of found.filter((x) => !extras.includes(x))) {
      emit({
        ruleId: accepted ? CONTRACT.argumentsAccepted : CONTRACT.argumentsInvalid,
        severity: accepted ? 'error' : 'warning',
        message: `tools/call ${name}: argument ${v.pointer || '(root)'} breaks the inputSchema: expected ${v.expected}, found ${v.found}; ${verdictText(ex, verdict)}`,
        where: whereOf(ex, 'client', name),
        pointer: '/params/arguments' + v.pointer,
        expected: v.expected,
        found: v.found,
        schemaRule: v.schemaRule,
        ...spec(ex),
      });
    }
  }

  /** One warning for all undeclared keys of an accepted call, located at the first. */
  private extraAccepted(ex: Exchange, name: string, extras: Violation[], emit: Emit): void {
    const keys = extras.map((v) => JSON.stringify(parsePointer(v.pointer).pop() ?? ''));
    const first = extras[0]!;
    emit({
      ruleId: CONTRACT.argumentsExtraAccepted,
      severity: 'warning',
      message: `tools/call ${name}: argument${keys.length > 1 ? 's' : ''} ${keys.join(', ')} not declared by the inputSchema (${first.keyword} false); the server accepted the call and ignored ${keys.length > 1 ? 'them' : 'it'}`,
      where: whereOf(ex, 'client', name),
      pointer: '/params/arguments' + first.pointer,
      expected: `no undeclared members (${first.keyword})`,
      found: keys.join(', '),
      schemaRule: first.schemaRule,
      ...spec(ex),
    });
  }

  private judgeOutput(ex: Exchange, declared: Declared<Item>, name: string, emit: Emit): void {
    const result = resultOf(ex);
    // A task handle (2025-11-25 `params.task`) is not the tool's result; protocol rules judge its shape.
    if (!result || (result.task !== undefined && result.content === undefined)) return;
    const structured = result.structuredContent;
    const schema = declared.item.outputSchema;
    const where = whereOf(ex, 'server', name);
    if (schema !== undefined && structured === undefined) {
      emit({
        ruleId: CONTRACT.outputMissing,
        severity: 'error',
        message: `tools/call ${name}: the tool declares an outputSchema but its successful result has no structuredContent`,
        where,
        pointer: '/result/structuredContent',
        expected: 'structuredContent conforming to the outputSchema',
        found: 'absent',
        ...spec(ex),
      });
    }
    if (structured === undefined) return;
    const compiled = schema === undefined ? undefined : this.validators.compile(schema);
    if (compiled?.ok) {
      for (const v of violations(compiled.validate, structured)) {
        emit({
          ruleId: CONTRACT.outputInvalid,
          severity: 'error',
          message: `tools/call ${name}: structuredContent${v.pointer} breaks the outputSchema: expected ${v.expected}, found ${v.found}`,
          where,
          pointer: '/result/structuredContent' + v.pointer,
          expected: v.expected,
          found: v.found,
          schemaRule: v.schemaRule,
          ...spec(ex),
        });
      }
    }
    const match = this.settings.get(CONTRACT.outputNoText)?.options?.match === 'any' ? 'any' : 'json';
    const carried = textBlocks(result).some((t) => match === 'any' || sameJson(t, structured));
    if (!carried) {
      emit({
        ruleId: CONTRACT.outputNoText,
        severity: 'warning',
        message: `tools/call ${name}: structuredContent is not also given as serialized JSON in a text content block, so clients that read only content miss it`,
        where,
        pointer: '/result/content',
        expected: match === 'any' ? 'a text block' : 'a text block whose text is the structuredContent as JSON',
        found: `${textBlocks(result).length} text block(s), none carrying it`,
        ...spec(ex),
      });
    }
  }
}

function textBlocks(result: Item): string[] {
  const content = Array.isArray(result.content) ? (result.content as unknown[]) : [];
  return content.flatMap((b) =>
    b !== null && typeof b === 'object' && (b as Item).type === 'text' && typeof (b as Item).text === 'string' ? [(b as Item).text as string] : [],
  );
}

/** Whether `text` is `value` serialized as JSON (any spacing, any member order). */
function sameJson(text: string, value: unknown): boolean {
  try {
    return deepEqual(JSON.parse(text), value);
  } catch {
    return false;
  }
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object' || Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && deepEqual((a as Item)[k], (b as Item)[k]));
}
