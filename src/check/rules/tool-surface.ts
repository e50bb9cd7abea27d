/**
 * The `surface/…` rules: what a server's list answers offer a client and its model. Every page of
 * every `tools/list` answer is read (prompts, resources and templates for hidden and instruction
 * text); each distinct definition is judged once, where it was first listed.
 */
import { createHash } from 'node:crypto';
import { McptapError } from '../../errors.js';
import type { Checker, CheckerFactory, Emit, RuleSettings } from '../checker.js';
import { rulesOf } from './rule-info.js';
import type { Finding, RuleInfo } from '../finding.js';
import type { TapEvent } from '../../model/events.js';
import { isObject, listPageOf, SurfaceBuilder, toolTokens, type ListPage, type SurfaceKind } from '../surface-snapshot.js';
import { definitionTokens, TOKEN_ENCODING } from '../token-cost.js';
import { portabilityProblems } from './schema-portability.js';
import { listShapeProblems, toolShapeProblems } from './sdk-tool-shape.js';
import { hiddenCharacters, instructionText, textFields } from './surface-text.js';

const rule = rulesOf('surface');

export const SURFACE_RULES = {
  invalidDefinition: rule(
    'invalid-definition',
    'error',
    'tools/list values have the types the MCP SDKs require',
    'The TypeScript and Go SDK clients reject a whole tools/list over one value of the wrong type (a string "true" for a boolean hint, a missing inputSchema, a root type other than "object"), so every tool of the server disappears. Send the type the schema names.',
  ),
  schemaRef: rule(
    'schema-ref',
    'warning',
    'Tool schemas do not use $ref',
    'Several clients and model APIs do not resolve $ref; inline the referenced definitions.',
  ),
  schemaRootCombinator: rule(
    'schema-root-combinator',
    'warning',
    'Tool schemas have no oneOf/anyOf/allOf at the root',
    'Model function-calling APIs want one object schema at the root; express alternatives as optional members.',
  ),
  schemaDialect: rule(
    'schema-dialect',
    'warning',
    'Tool schemas declare a known JSON Schema dialect',
    'MCP tool schemas default to JSON Schema 2020-12; a $schema other than 2020-12, 2019-09 or draft-07 is one clients cannot validate. Drop $schema or name 2020-12.',
  ),
  annotationsMissing: rule(
    'annotations-missing',
    'note',
    'Tools declare annotations',
    'Without annotations a client must assume the spec defaults: not read-only, destructive, not idempotent, open world. Declare readOnlyHint, destructiveHint, idempotentHint and openWorldHint.',
  ),
  annotationsContradictory: rule(
    'annotations-contradictory',
    'warning',
    'Tool annotations do not contradict each other',
    'A read-only tool cannot be destructive, and repeating a read-only call changes nothing (it is idempotent). Fix the hint that is wrong.',
  ),
  hiddenCharacters: rule(
    'hidden-characters',
    'error',
    'Names and descriptions carry no hidden characters',
    'Zero-width, bidi-control and tag characters show a reviewer one text and the model another (tag characters can spell a whole hidden instruction). Remove them.',
  ),
  instructionText: rule(
    'instruction-text',
    'warning',
    'Descriptions describe the tool and give the model no instructions',
    'Text such as "ignore previous instructions", "do not tell the user" or <IMPORTANT> blocks is the shape of tool poisoning. Describe what the tool does; put nothing aimed at the model.',
  ),
  toolTokens: rule(
    'tool-tokens',
    'warning',
    'Each tool definition fits its token budget (option maxToolTokens)',
    `Every tool definition is sent to the model on every turn; the count is of its JSON as sent, in ${TOKEN_ENCODING} (an estimate for other models). Shorten the description and schema. Off unless maxToolTokens is set.`,
    ['maxToolTokens'],
  ),
  totalTokens: rule(
    'total-tokens',
    'warning',
    'All tool definitions together fit the token budget (option maxTotalTokens)',
    `The sum over the listed tools' JSON definitions, in ${TOKEN_ENCODING}. Fewer or shorter tools. Off unless maxTotalTokens is set.`,
    ['maxTotalTokens'],
  ),
} as const;

/** A positive number option of a rule, or undefined when unset. */
export function numberOption(settings: RuleSettings, ruleId: string, key: string): number | undefined {
  const v = settings.get(ruleId)?.options?.[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) {
    throw new McptapError('MCPTAP_CHECK_RULES_INVALID', `${ruleId}: option ${key} must be a positive number, got ${JSON.stringify(v)}`);
  }
  return v;
}

/** Where a finding about an item of a list page is: the exchange, and the item as a logical location. */
function locate(page: ListPage, subject?: { kind: SurfaceKind; name: string }): Finding['where'] {
  const x = page.exchange;
  return {
    connectionId: x.connectionId,
    ...(x.sessionId !== undefined ? { sessionId: x.sessionId } : {}),
    exchangeKey: x.key,
    jsonRpcId: x.id,
    method: x.method,
    side: 'server',
    ...(x.endUs !== undefined ? { timeUs: x.endUs } : {}),
    ...(subject ? { tool: subject.name, subject } : {}),
  };
}

class ToolSurfaceChecker implements Checker {
  readonly rules = Object.values(SURFACE_RULES);
  private readonly builder = new SurfaceBuilder();
  /** Digests of the definitions already judged (as sent): a server lists the same tools on every connection. */
  private readonly seen = new Set<string>();
  private readonly maxToolTokens: number | undefined;
  private readonly maxTotalTokens: number | undefined;

  constructor(settings: RuleSettings) {
    this.maxToolTokens = numberOption(settings, SURFACE_RULES.toolTokens.id, 'maxToolTokens');
    this.maxTotalTokens = numberOption(settings, SURFACE_RULES.totalTokens.id, 'maxTotalTokens');
  }

  /** The token budgets are judged only when the rules file sets them. */
  get unjudged(): ReadonlyMap<string, string> {
    const out = new Map<string, string>();
    if (this.maxToolTokens === undefined) out.set(SURFACE_RULES.toolTokens.id, 'no maxToolTokens option');
    if (this.maxTotalTokens === undefined) out.set(SURFACE_RULES.totalTokens.id, 'no maxTotalTokens option');
    return out;
  }

  private firstSight(key: string): boolean {
    const digest = createHash('sha1').update(key).digest('base64');
    if (this.seen.has(digest)) return false;
    this.seen.add(digest);
    return true;
  }

  onEvent(event: TapEvent, emit: Emit): void {
    // The surface is folded only for the total budget; the rules need just the page.
    const page = this.maxTotalTokens === undefined ? listPageOf(event) : this.builder.add(event);
    if (!page) return;
    const base = `/result/${page.spec.list}`;
    if (page.spec.kind === 'tool') {
      for (const p of listShapeProblems(page.result)) {
        if (this.firstSight(`list\0${p.pointer}\0${p.found}`))
          emit({
            ruleId: SURFACE_RULES.invalidDefinition.id,
            severity: 'error',
            message: `tools/list result: expected ${p.expected} at ${p.pointer}`,
            where: locate(page),
            pointer: `/result${p.pointer}`,
            expected: p.expected,
            found: p.found,
          });
      }
    }
    (page.items ?? []).forEach((item, i) => {
      if (!this.firstSight(`${page.spec.kind}\0${JSON.stringify(item)}`)) return;
      const name = isObject(item) && typeof item[page.spec.key] === 'string' ? (item[page.spec.key] as string) : `#${i}`;
      const at = `${base}/${i}`;
      const say = (info: RuleInfo, message: string, pointer: string, extra: Partial<Finding> = {}) =>
        emit({
          ruleId: info.id,
          severity: info.severity,
          message: `${page.spec.kind} ${name}: ${message}`,
          where: locate(page, { kind: page.spec.kind, name }),
          pointer: `${at}${pointer}`,
          ...extra,
        });
      if (page.spec.kind === 'tool') this.judgeTool(item, say);
      this.judgeText(item, say);
    });
  }

  private judgeTool(tool: unknown, say: Say): void {
    const shape = toolShapeProblems(tool);
    for (const p of shape)
      say(SURFACE_RULES.invalidDefinition, `expected ${p.expected} at ${p.pointer || '/'}; SDK clients reject the whole list`, p.pointer, {
        expected: p.expected,
        found: p.found,
      });
    if (!isObject(tool)) return;
    for (const member of ['inputSchema', 'outputSchema']) {
      for (const p of portabilityProblems(tool[member])) {
        const info = p.rule === 'ref' ? SURFACE_RULES.schemaRef : p.rule === 'dialect' ? SURFACE_RULES.schemaDialect : SURFACE_RULES.schemaRootCombinator;
        say(info, `${member} ${p.message}`, `/${member}${p.pointer}`);
      }
    }
    const a = tool.annotations;
    if (a === undefined || (isObject(a) && Object.keys(a).length === 0)) {
      say(SURFACE_RULES.annotationsMissing, 'declares no annotations (clients assume: not read-only, destructive, not idempotent, open world)', '');
    } else if (isObject(a) && a.readOnlyHint === true) {
      if (a.destructiveHint === true)
        say(SURFACE_RULES.annotationsContradictory, 'is readOnlyHint: true and destructiveHint: true', '/annotations/destructiveHint');
      if (a.idempotentHint === false)
        say(SURFACE_RULES.annotationsContradictory, 'is readOnlyHint: true and idempotentHint: false', '/annotations/idempotentHint');
    }
    if (this.maxToolTokens !== undefined) {
      const tokens = definitionTokens(tool);
      if (tokens > this.maxToolTokens) {
        say(SURFACE_RULES.toolTokens, `definition is ${tokens} tokens (${TOKEN_ENCODING}), over ${this.maxToolTokens}`, '', {
          expected: `<= ${this.maxToolTokens}`,
          found: String(tokens),
        });
      }
    }
  }

  private judgeText(item: unknown, say: Say): void {
    for (const field of textFields(item)) {
      const hidden = hiddenCharacters(field.text);
      if (hidden) {
        const spelled = hidden.tagText ? `; the tag characters spell ${JSON.stringify(hidden.tagText)}` : '';
        const what = field.isKey ? 'member name' : 'text';
        say(
          SURFACE_RULES.hiddenCharacters,
          `${what} at ${field.pointer} hides ${hidden.count} ${hidden.classes.join(', ')} (${hidden.codePoints.join(' ')})${spelled}`,
          field.pointer,
          { found: hidden.codePoints.join(' ') },
        );
      }
      if (!field.isProse) continue;
      const hits = instructionText(field.text);
      if (hits.length) {
        const what = hits.map((h) => `${h.label}: ${JSON.stringify(h.excerpt)}`).join('; ');
        say(SURFACE_RULES.instructionText, `${field.pointer} ${what}`, field.pointer, { found: hits[0]!.excerpt });
      }
    }
  }

  finish(emit: Emit): void {
    if (this.maxTotalTokens === undefined) return;
    const surface = this.builder.build();
    const total = toolTokens(surface);
    if (total <= this.maxTotalTokens) return;
    const top = [...surface.tools].sort((a, b) => b.tokens - a.tokens).slice(0, 3);
    emit({
      ruleId: SURFACE_RULES.totalTokens.id,
      severity: SURFACE_RULES.totalTokens.severity,
      message: `${surface.tools.length} tool definitions are ${total} tokens (${TOKEN_ENCODING}), over ${this.maxTotalTokens}; largest: ${top.map((t) => `${t.name} ${t.tokens}`).join(', ')}`,
      where: {},
      expected: `<= ${this.maxTotalTokens}`,
      found: String(total),
    });
  }
}

type Say = (info: RuleInfo, message: string, pointer: string, extra?: Partial<Finding>) => void;

/** The tool-surface rule family. Options: `surface/tool-tokens` {maxToolTokens}, `surface/total-tokens` {maxTotalTokens}. */
export const toolSurface: CheckerFactory = (settings) => new ToolSurfaceChecker(settings);
